/**
 * How the check of an indexed store's rows (`row_check.ts`) and the completion of a run's rows
 * (`complete_rows.ts`) read a run's rows, in bounded memory whatever a tampered store holds: each table's rows
 * come as one query read as it comes (node:sqlite's `iterate`, a postgres cursor), at most as many as the run
 * implies (its lines, its settings, its payloads) and {@linkcode MAX_ROW_PROBLEMS} more, each text column only up
 * to {@linkcode ROW_TEXT_MAX_BYTES} (a wider one is refused by its size, before its text leaves the store), and
 * the check stops after {@linkcode MAX_ROW_PROBLEMS} problems. Each stop is one problem naming the table.
 * A store of two million junk rows for a run took 2.6 GB and 23 s, read at once.
 * @module
 */
import { EVENT_LINE_MAX_BYTES } from "../evidence/json_depth.ts";
import { MAX_LINE_PROBLEMS } from "../evidence/read_events.ts";
import { type Problem, problem } from "../evidence/problem.ts";
import type { ProblemCode } from "../evidence/problem_codes.ts";
import type { SqlValue } from "./store_rows.ts";

/**
 * How the check reads a store's rows: a query written with `?` placeholders and its parameters, giving plain
 * rows, all at once (`all`, for a query of a few rows) or as they come (`each`). Integer columns (`seq`, `n`,
 * `size`, `id`) come back as numbers or as text of a number.
 */
export interface RowSource {
  all(sql: string, ...params: SqlValue[]): Promise<Record<string, SqlValue>[]>;
  each(
    sql: string,
    ...params: SqlValue[]
  ): Iterable<Record<string, SqlValue>> | AsyncIterable<Record<string, SqlValue>>;
}

/** The problems after which the check stops reading rows, as the reading of events.jsonl stops after its lines'. */
export const MAX_ROW_PROBLEMS = MAX_LINE_PROBLEMS;

/** The most bytes a text column of a run's row is read with: a run's line, the widest thing a row is made of. */
export const ROW_TEXT_MAX_BYTES = EVENT_LINE_MAX_BYTES;

/**
 * The problems of one check of a run's rows: past {@linkcode MAX_ROW_PROBLEMS}, one more says the check stops,
 * naming the table it was reading, and no more are kept.
 */
export class RowProblems {
  /** The problems, the last one saying the check stopped when it did. */
  readonly list: Problem[];
  /** The table being read, for the problem that stops the check. */
  table = "the store";
  #stopped = false;
  readonly #runId: string;

  /**
   * @param runId The run whose rows are checked.
   * @param first Problems found before its rows are read (the store's schema).
   */
  constructor(runId: string, first: Problem[] = []) {
    this.#runId = runId;
    this.list = [...first];
  }

  /** Adds problems, up to the bound; the one past it stops the check. */
  push(...problems: Problem[]): number {
    for (const p of problems) {
      if (this.#stopped) break;
      if (this.list.length >= MAX_ROW_PROBLEMS) {
        this.#stopped = true;
        this.list.push(problem(
          p.code,
          `${this.table}: the check of run "${this.#runId}" stops at ${MAX_ROW_PROBLEMS} problems: the rest of its rows is not read`,
        ));
        break;
      }
      this.list.push(p);
    }
    return this.list.length;
  }

  /** True once the check has stopped: nothing more is read. */
  get stopped(): boolean {
    return this.#stopped;
  }
}

/** A query of one table's rows of a run, and what bounds them. */
export interface RowQuery {
  table: string;
  /** The columns read; the text columns among them are named in `texts`. */
  columns: readonly string[];
  /** The text columns, each read only up to {@linkcode ROW_TEXT_MAX_BYTES}. */
  texts: readonly string[];
  /** The condition, with `?` placeholders, and its parameters. */
  where: string;
  params: readonly SqlValue[];
  order?: string;
  /** The most rows the run implies (Infinity when it implies none), and what implies them, for the problem. */
  most: number;
  implied: string;
  /** The code of this table's problems. */
  code: ProblemCode;
  /** The row's key, as the problems name it (a column too wide to read is null). */
  key: (row: Record<string, SqlValue>) => string;
}

/** The name of the column that says a row held a text too wide to read. */
const WIDE = "provevi_wide";

/** The SQL of a {@linkcode RowQuery}, the same for sqlite and postgres. */
export function rowQuerySql(q: RowQuery): string {
  const over = (c: string) => `octet_length(${c}) > ${ROW_TEXT_MAX_BYTES}`;
  const columns = q.columns.map((c) =>
    q.texts.includes(c) ? `CASE WHEN ${over(c)} THEN NULL ELSE ${c} END AS "${c}"` : `${c} AS "${c}"`
  );
  const wide = q.texts.length ? `CASE WHEN ${q.texts.map(over).join(" OR ")} THEN 1 ELSE 0 END` : "0";
  const limit = Number.isFinite(q.most) ? ` LIMIT ${Math.max(0, Math.floor(q.most)) + 1}` : "";
  return `SELECT ${columns.join(", ")}, ${wide} AS ${WIDE} FROM ${q.table} WHERE ${q.where}${
    q.order ? ` ORDER BY ${q.order}` : ""
  }${limit}`;
}

/**
 * A table's rows of a run, as they come: a row with a text past {@linkcode ROW_TEXT_MAX_BYTES} is a problem and
 * not given; past `most` rows, one problem says the table holds more rows than the run implies, and the reading
 * stops, as it does once the check has stopped.
 *
 * @param db The store's rows.
 * @param q The query.
 * @param problems The check's problems.
 * @param runId The run.
 * @returns The rows.
 * @example
 * ```ts ignore
 * for await (const row of boundedRows(db, query, problems, "run-x")) console.log(row);
 * ```
 */
export async function* boundedRows(
  db: RowSource,
  q: RowQuery,
  problems: RowProblems,
  runId: string,
): AsyncGenerator<Record<string, SqlValue>> {
  if (problems.stopped) return;
  problems.table = q.table;
  let n = 0;
  for await (const row of db.each(rowQuerySql(q), ...q.params)) {
    if (problems.stopped) return;
    if (++n > q.most) {
      problems.push(problem(
        q.code,
        `${q.table} holds more rows of run "${runId}" than ${q.implied} imply (${q.most}): the rest of them is not read`,
      ));
      return;
    }
    if (Number(row[WIDE]) !== 0) {
      problems.push(problem(
        q.code,
        `${
          q.key(row)
        } holds a text of more than ${ROW_TEXT_MAX_BYTES} bytes, more than any line of the run: it is not read`,
      ));
      continue;
    }
    delete row[WIDE];
    yield row;
  }
}

/**
 * The one row of a table that a key names (its text columns read as {@linkcode boundedRows} reads them), or
 * undefined when there is none or it holds a text too wide to read (then a problem says so).
 *
 * @param db The store's rows.
 * @param q The query, without `most` and `implied`: one row at most.
 * @param problems The check's problems.
 * @param runId The run.
 * @returns The row, or undefined.
 */
export async function boundedRow(
  db: RowSource,
  q: Omit<RowQuery, "most" | "implied" | "texts">,
  problems: RowProblems,
  runId: string,
): Promise<Record<string, SqlValue> | undefined> {
  let found: Record<string, SqlValue> | undefined;
  const rows = boundedRows(db, { ...q, texts: q.columns, most: 1, implied: "its key" }, problems, runId);
  for await (const row of rows) found = row;
  return found;
}

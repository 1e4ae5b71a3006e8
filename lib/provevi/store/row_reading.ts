/**
 * How the check of an indexed store's rows (`row_check.ts`) and the completion of a run's rows
 * (`complete_rows.ts`) read a run's rows, in bounded memory whatever a tampered store holds: each table's rows
 * come as one query, a first page at once and the rest as it comes (node:sqlite's `iterate`, a postgres cursor;
 * one row at a time once a row may hold up to the bound below), at most as many as the run
 * implies (its lines, its settings, its payloads) and {@linkcode MAX_ROW_PROBLEMS} more, each row's texts only up
 * to {@linkcode ROW_TEXT_MAX_BYTES} in all, a path to {@linkcode PATH_MAX_BYTES}, a number (which a sqlite
 * column may hold as a text of any size) to 64 bytes (a wider row is refused by its size, before its texts leave
 * the store), and the check stops after {@linkcode MAX_ROW_PROBLEMS} problems. Each stop is one problem naming the table.
 * A store of two million junk rows for a run took 2.6 GB and 23 s, read at once.
 * @module
 */
import { EVENT_LINE_MAX_BYTES } from "../evidence/json_depth.ts";
import { MAX_LINE_PROBLEMS } from "../evidence/read_events.ts";
import { type Problem, problem } from "../evidence/problem.ts";
import type { ProblemCode } from "../evidence/problem_codes.ts";
import type { SqlValue } from "./store_rows.ts";
import { ProveviError } from "../evidence/errors.ts";

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
  /**
   * The rows as they come one at a time, for a query whose rows may each hold up to {@linkcode ROW_TEXT_MAX_BYTES}
   * of text; a source whose `each` fetches many rows at once (a postgres cursor) gives it. Else `each`.
   */
  eachWide?(
    sql: string,
    ...params: SqlValue[]
  ): Iterable<Record<string, SqlValue>> | AsyncIterable<Record<string, SqlValue>>;
  /** The store's SQL, where the two differ (postgres sums sizes as bigint; in sqlite a cast costs 3 times the sum). */
  dialect?: "sqlite" | "postgres";
}

/** The problems after which the check stops reading rows, as the reading of events.jsonl stops after its lines'. */
export const MAX_ROW_PROBLEMS = MAX_LINE_PROBLEMS;

/**
 * The most bytes of text a run's row is read with, all its text columns together: an event's row is its line and
 * columns taken from it, the widest row a run makes.
 */
export const ROW_TEXT_MAX_BYTES = 2 * EVENT_LINE_MAX_BYTES;

/**
 * The rows read at once, first, and the most bytes of text each may hold to be read so, all its texts together
 * (a row with more is read again, as they come): a page holds 16 MiB at most.
 */
const PAGE_ROWS = 256;
const PAGE_ROW_TEXT_MAX_BYTES = 64 * 1024;

/** The most bytes of a column that holds a number, as sqlite gives it as text (a tampered store's may be any). */
const NUMBER_MAX_BYTES = 64;

/** The most bytes of a path a row holds (a run's folder): PATH_MAX. */
export const PATH_MAX_BYTES = 4096;

/**
 * A column of a path, as a query reads it: null when it is longer than {@linkcode PATH_MAX_BYTES}, so that its
 * text does not leave the store.
 *
 * @param column The column.
 * @returns The SQL, the same for sqlite and postgres, named as the column.
 */
export function pathColumn(column: string): string {
  return `CASE WHEN octet_length(${column}) > ${PATH_MAX_BYTES} THEN NULL ELSE ${column} END AS "${column}"`;
}

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

  /** Adds a problem that stops the check, whatever the count: nothing more is read. */
  stop(p: Problem): void {
    if (this.#stopped) return;
    this.list.push(p);
    this.#stopped = true;
  }

  /** True once the check has stopped: nothing more is read. */
  get stopped(): boolean {
    return this.#stopped;
  }
}

/**
 * A run's folder as {@linkcode pathColumn} read it.
 *
 * @param folder The column's value: null when it was longer than a path.
 * @param runId The run.
 * @param uri The store's URI, for the error.
 * @returns The folder.
 * @throws ProveviError when the store's row holds a folder longer than any path.
 */
export function folderOrRefused(folder: SqlValue | undefined, runId: string, uri: string): string {
  if (typeof folder === "string") return folder;
  throw new ProveviError(
    `the row of run "${runId}" in store ${uri} holds a folder longer than ${PATH_MAX_BYTES} bytes, longer than any path: it is not a run's`,
  );
}

/** A query of one table's rows of a run, and what bounds them. */
export interface RowQuery {
  table: string;
  /** The columns read; the text columns among them are named in `texts`. */
  columns: readonly string[];
  /** The text columns, read only up to {@linkcode ROW_TEXT_MAX_BYTES} in all. */
  texts: readonly string[];
  /** The text columns that name the row (its key): a row refused for its texts keeps those of a path's size. */
  short?: readonly string[];
  /** The text columns that hold a path (a folder): a row is refused when one is longer than a path. */
  paths?: readonly string[];
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

/**
 * The SQL of a {@linkcode RowQuery}, the same for sqlite and postgres; its parameters are the query's, then how
 * many rows and from which. Each form gives every row, with the column `provevi_wide` set (and texts left out)
 * where a row holds more text than the form reads: `page` reads each text up to its share of 64 KiB a row, for
 * the rows read at once; `fast` each text up to its share of {@linkcode ROW_TEXT_MAX_BYTES}, for the rows read as
 * they come; `safe` weighs each row's texts together against that bound (it reads the sizes for each text: ten
 * times the time of the events' query), from the first row `fast` found too wide.
 *
 * @param q The query.
 * @param how Which of the three forms.
 * @returns The SQL.
 */
export function rowQuerySql(
  q: RowQuery,
  how: "safe" | "fast" | "page",
  dialect: "sqlite" | "postgres" = "postgres",
): string {
  // the same text object each time: a store keeps its statements by their text, and hashes a new one anew
  const key = [how, dialect, q.table, q.where, q.order, q.columns, q.texts, q.short, q.paths].join("|");
  let sql = made.get(key);
  if (sql === undefined) {
    if (made.size >= 256) made.clear();
    made.set(key, sql = querySql(q, how, dialect));
  }
  return sql;
}

/** The texts {@linkcode rowQuerySql} made, by what they were made of. */
const made = new Map<string, string>();

function querySql(q: RowQuery, how: "safe" | "fast" | "page", dialect: "sqlite" | "postgres"): string {
  const short = q.short ?? [];
  const paths = q.paths ?? [];
  const bytes = (c: string) =>
    dialect === "sqlite"
      ? `coalesce(octet_length(${c}), 0)`
      : `coalesce(CAST(octet_length(${c}) AS BIGINT), 0)`;
  const long = (c: string) => `octet_length(${c}) > ${PATH_MAX_BYTES}`;
  // fast: each text up to its share of the bound, so that the row is within it; one past its share marks the row
  const most = how === "page" ? PAGE_ROW_TEXT_MAX_BYTES : ROW_TEXT_MAX_BYTES;
  const share = (c: string) =>
    paths.includes(c) ? long(c) : `octet_length(${c}) > ${Math.floor(most / q.texts.length)}`;
  // A column that is not a text is a number, in a postgres table; a sqlite table keeps whatever it is given
  // (a text of any size in an integer column): past a number's size, it is read as a text too wide.
  const numbers = dialect === "sqlite" ? q.columns.filter((c) => !q.texts.includes(c)) : [];
  const odd = (c: string) => `octet_length(${c}) > ${NUMBER_MAX_BYTES}`;
  const over = how !== "safe" ? [...q.texts.map(share), ...numbers.map(odd)].join(" OR ") : [
    ...q.texts.length ? [`${q.texts.map(bytes).join(" + ")} > ${ROW_TEXT_MAX_BYTES}`] : [],
    ...paths.map(long),
    ...numbers.map(odd),
  ].join(" OR ");
  const columns = q.columns.map((c) =>
    numbers.includes(c)
      ? `CASE WHEN ${odd(c)} THEN NULL ELSE ${c} END AS "${c}"`
      : !q.texts.includes(c)
      ? `${c} AS "${c}"`
      : how !== "safe"
      ? `CASE WHEN ${share(c)} THEN NULL ELSE ${c} END AS "${c}"`
      : short.includes(c)
      ? `CASE WHEN (${over}) AND ${long(c)} THEN NULL ELSE ${c} END AS "${c}"`
      : `CASE WHEN ${over} THEN NULL ELSE ${c} END AS "${c}"`
  );
  const wide = over ? `CASE WHEN ${over} THEN 1 ELSE 0 END` : "0";
  // the bounds are parameters (the last two), so that the text is the same for every run: prepared once
  return `SELECT ${columns.join(", ")}, ${wide} AS ${WIDE} FROM ${q.table} WHERE ${q.where}${
    q.order ? ` ORDER BY ${q.order}` : ""
  } LIMIT ? OFFSET ?`;
}

/**
 * A table's rows of a run, as they come: a row whose texts pass {@linkcode ROW_TEXT_MAX_BYTES} is a problem and
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
  const bound = Number.isFinite(q.most) ? Math.max(0, Math.floor(q.most)) + 1 : Number.MAX_SAFE_INTEGER;
  // The first rows in one page, all at once (a run of a few hundred rows is read so, without a call per row),
  // then the rest as they come, each text up to its share of a page's row (64 KiB). A row with a text past that
  // share turns the reading, from that row on, to each text up to its share of the bound, as they come one at a
  // time (`eachWide`: a source that fetches many rows at once would hold many such rows); and a row with a text
  // past that share, to one that weighs each row's texts together (their sizes summed for each text: ten times
  // the time of the events' query, so only then).
  let how: "page" | "fast" | "safe" = "page";
  let atOnce = true;
  reading: while (true) {
    const sql = rowQuerySql(q, how, db.dialect);
    const rows = atOnce
      ? await db.all(sql, ...q.params, Math.min(PAGE_ROWS, bound - n), n)
      : how === "page" || db.eachWide === undefined
      ? db.each(sql, ...q.params, bound - n, n)
      : db.eachWide(sql, ...q.params, bound - n, n);
    let count = 0;
    for await (const row of rows) {
      count++;
      if (how !== "safe" && Number(row[WIDE]) !== 0) {
        how = how === "page" ? "fast" : "safe";
        atOnce = false;
        continue reading;
      }
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
          } holds more text than a row of the run may (${ROW_TEXT_MAX_BYTES} bytes, a path ${PATH_MAX_BYTES}): it is not read`,
        ));
        continue;
      }
      delete row[WIDE];
      yield row;
    }
    if (atOnce && count === PAGE_ROWS) {
      atOnce = false; // the page was full: the rest as they come, in the same form
      continue;
    }
    return;
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

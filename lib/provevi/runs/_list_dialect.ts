/**
 * How a run listing reads an indexed store: the SQL where SQLite and PostgreSQL differ, and the bound of the
 * texts a listing shows.
 * @module
 */
import type { StatementSync } from "node:sqlite";
import { ProveviError } from "../evidence/errors.ts";
import { EVENT_LINE_MAX_BYTES } from "../evidence/json_depth.ts";
import type { SqliteStore } from "../sqlite/sqlite_store.ts";
import type { PostgresStore } from "../postgres/postgres_store.ts";
import { lineJsonb } from "../postgres/_line_json.ts";
import { columnText, type SqlValue } from "../store/store_rows.ts";

/**
 * The most bytes of a text that a listing reads into a column (an ID, an agent class, a model route, a time, a
 * folder): a run's texts come from its event lines, none longer than this, and a changed store's row holding a
 * longer one (sqlite keeps a text of any size) is refused before its text leaves the store.
 */
export const LISTING_TEXT_MAX_BYTES = EVENT_LINE_MAX_BYTES;

/** SQL: the expression, or null when its text is longer than {@linkcode LISTING_TEXT_MAX_BYTES}. */
export function listed(expr: string): string {
  return `CASE WHEN ${longer(expr)} THEN NULL ELSE ${expr} END`;
}

/** SQL: 1 when the text of one of the expressions is longer than {@linkcode LISTING_TEXT_MAX_BYTES}, else 0. */
export function anyLonger(exprs: readonly string[]): string {
  return `CASE WHEN ${exprs.map(longer).join(" OR ")} THEN 1 ELSE 0 END`;
}

function longer(expr: string): string {
  return `coalesce(octet_length(CAST(${expr} AS TEXT)), 0) > ${LISTING_TEXT_MAX_BYTES}`;
}

/**
 * Refuses a listing whose page holds a row that {@linkcode anyLonger} marked (`wide`).
 *
 * @param rows The page's rows.
 * @param uri The store's URI, for the message.
 * @throws ProveviError naming the first such run.
 */
export function refuseLongTexts(rows: readonly Record<string, unknown>[], uri: string): void {
  const row = rows.find((r) => Number(r.wide) !== 0);
  if (row === undefined) return;
  const id = typeof row.run_id === "string"
    ? `run "${row.run_id}"`
    : "a run whose ID is longer than any run's";
  throw new ProveviError(
    `store ${uri}: the rows of ${id} hold a text longer than ${LISTING_TEXT_MAX_BYTES} bytes where a listing shows a name, a time or a folder, longer than any line of a run: the store was changed; check the run with prove verify`,
  );
}

/**
 * What an indexed store's listing needs of its SQL: how it reads a key of an event's JSON line, how it writes
 * the n-th parameter, and how it runs a query. SQLite and PostgreSQL differ only there.
 */
export interface Dialect {
  /**
   * The expression for a JSON column's value at a path such as `data.model`: as text, as JSON text (`object`),
   * or as a number (`number`).
   */
  json(column: string, path: string, as?: "object" | "number"): string;
  /** A text that {@linkcode json} read, as a column holds it (`columnText`), or null. */
  text(value: unknown): string | null;
  /**
   * The condition that the run `run` (the alias of a runs row) was cancelled: it has a `run_failed` event
   * with `CancelledError`, found in the partial index `provevi_events_cancelled` (written as the index is,
   * and in SQLite named, since its planner would rather read every event of the run by the primary key).
   */
  cancelled(run: string): string;
  /** The store's URI, for a message. */
  uri: string;
  /** What stands before OFFSET when there is no limit. */
  noLimit: string;
  /** The n-th parameter (from 1). */
  param(n: number): string;
  all(sql: string, params: SqlValue[]): Promise<Record<string, unknown>[]>;
}

/** Each sqlite store's prepared statements, by their SQL: a page reads with the same few statements. */
const statements = new WeakMap<object, Map<string, StatementSync>>();

export function sqliteDialect(store: SqliteStore): Dialect {
  const db = store.db;
  let cache = statements.get(db);
  if (!cache) statements.set(db, cache = new Map());
  const prepared = (sql: string) => {
    let statement = cache.get(sql);
    if (!statement) {
      if (cache.size >= 64) cache.clear();
      cache.set(sql, statement = db.prepare(sql));
    }
    return statement;
  };
  return {
    // A text is read quoted: node:sqlite would cut it at a NUL. It is unquoted and escaped in `text`.
    json: (column, path, as) =>
      as === undefined
        ? `json_quote(json_extract(${column}, '$.${path}'))`
        : `json_extract(${column}, '$.${path}')`,
    text: (value) => {
      if (typeof value !== "string") return null;
      try {
        const text = JSON.parse(value);
        return typeof text === "string" ? columnText(text) : null;
      } catch {
        return null;
      }
    },
    cancelled: (r) =>
      `EXISTS (SELECT 1 FROM provevi_events c INDEXED BY provevi_events_cancelled WHERE c.run_id = ${r}.run_id
        AND c.type = 'run_failed' AND json_extract(c.line, '$.data.error') = 'CancelledError')`,
    uri: store.uri,
    noLimit: " LIMIT -1",
    param: () => "?",
    all: (sql, params) => Promise.resolve(prepared(sql).all(...params) as Record<string, unknown>[]),
  };
}

export function postgresDialect(store: PostgresStore): Dialect {
  return {
    json: (column, path, as) => {
      const keys = `'{${path.replaceAll(".", ",")}}'`;
      // Every line is read (lineJsonb): one holding a NUL's escape would fail a plain cast, and the page with it.
      if (as === "object") return `(${lineJsonb(column)} #> ${keys})::text`;
      if (as === "number") return `(${lineJsonb(column)} #>> ${keys})::numeric`;
      return `(${lineJsonb(column)} #>> ${keys})`;
    },
    text: (value) => (typeof value === "string" ? value : null),
    cancelled: (r) =>
      `EXISTS (SELECT 1 FROM provevi_events c WHERE c.run_id = ${r}.run_id
        AND c.type = 'run_failed' AND ((${lineJsonb("c.line")} -> 'data') ->> 'error') = 'CancelledError')`,
    uri: store.uri,
    noLimit: "",
    param: (n) => `$${n}`,
    all: async (sql, params) =>
      [...(await store.sql.unsafe(sql, params, { prepare: true }))] as Record<string, unknown>[],
  };
}

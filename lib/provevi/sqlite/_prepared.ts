/**
 * Statements prepared once per connection: a check of thousands of runs (provtrace's build, `prove verify` of a
 * store) asks the same dozen queries for each run, and preparing them again each time was a good part of its
 * time. SQLite prepares with `sqlite3_prepare_v2`, so a statement kept here is prepared again by SQLite itself
 * when the schema changes under it.
 * @module
 */
import type { SqlDb } from "./sqlite_rows.ts";

type Statement = ReturnType<SqlDb["prepare"]>;

/** The most statements kept per connection; past it the connection's are dropped and prepared again. */
const MOST = 64;

const kept = new WeakMap<SqlDb, Map<string, Statement[]>>();
/** The most statements of one text kept, for readings under way at once. */
const SAME_MOST = 8;
/**
 * Statements a reading is under way on ({@linkcode iterateOnce}): any other use of one resets it, and the reading
 * fails ("This iterator was invalidated"), as when two runs are checked at once.
 */
const busy = new WeakSet<Statement>();

/**
 * The statement of `sql` on `db`, prepared the first time it is asked for.
 *
 * @param db The connection.
 * @param sql A query text that does not change from call to call (values go in as parameters).
 * @returns The prepared statement.
 * @example
 * ```ts
 * import { DatabaseSync } from "node:sqlite";
 * import { preparedOnce } from "./_prepared.ts";
 * const db = new DatabaseSync(":memory:");
 * preparedOnce(db, "SELECT 1 AS one").get(); // { one: 1 }
 * ```
 */
export function preparedOnce(db: SqlDb, sql: string): Statement {
  let statements = kept.get(db);
  if (statements === undefined) kept.set(db, statements = new Map());
  let same = statements.get(sql);
  if (same === undefined) {
    if (statements.size >= MOST) statements.clear();
    statements.set(sql, same = []);
  }
  // one a reading is under way on is left to it: another of the same text, kept too (readings at once, of
  // runs checked at once, are a few)
  for (const statement of same) if (!busy.has(statement)) return statement;
  const statement = db.prepare(sql);
  if (same.length < SAME_MOST) same.push(statement);
  return statement;
}

/**
 * The rows of `sql` as they come, on a statement of {@linkcode preparedOnce}: while they come, no other use takes
 * that statement (it would reset the reading); one that stops part way gives it back.
 *
 * @param db The connection.
 * @param sql A query text that does not change from call to call.
 * @param params Its parameters.
 * @returns The rows.
 */
export function* iterateOnce(db: SqlDb, sql: string, params: unknown[]): Generator<Record<string, unknown>> {
  const statement = preparedOnce(db, sql);
  busy.add(statement);
  try {
    yield* statement.iterate(...(params as never[])) as Iterable<Record<string, unknown>>;
  } finally {
    busy.delete(statement);
  }
}

/**
 * The check of a run against the sqlite store: the shared check of an indexed store's rows
 * (`store/row_check.ts`) over the file's connection, with the file's schema problems first.
 * @module
 */
import type { Problem } from "../evidence/problem.ts";
import type { ReadEvents } from "../evidence/read_events.ts";
import { checkStoreRows } from "../store/row_check.ts";
import type { RowSource } from "../store/row_reading.ts";
import { columnValue, type SqlValue } from "../store/store_rows.ts";
import { schemaProblems } from "./sqlite_schema.ts";
import { iterateOnce, preparedOnce } from "./_prepared.ts";
import type { SqlDb } from "./sqlite_rows.ts";

/**
 * Checks a run's rows in a SQLite file: its events, run row, settings, agent class and version, experiment
 * and version, payloads, bundle place and assessments against its files, and the file's schema.
 *
 * @param db The store's connection.
 * @param runId The run.
 * @param options `folder`: the run folder to compare with, instead of the one the run's row records.
 * @returns The problems, each naming the table and the row's key; empty when the rows match.
 * @example
 * ```ts
 * import { SqliteStore } from "./sqlite_store.ts";
 * import { checkRunRows } from "./sqlite_check.ts";
 * await using store = new SqliteStore("/tmp/evidence.db", { create: false });
 * const problems = await checkRunRows(store.db, "run-20261129T120000Z-0badc0de");
 * ```
 */
export async function checkRunRows(
  db: SqlDb,
  runId: string,
  options: { folder?: string | null; bundle?: string | null; read?: ReadEvents | null } = {},
): Promise<Problem[]> {
  return await checkStoreRows(sqliteRowSource(db), runId, {
    schema: schemaProblems(db),
    folder: options.folder ?? null,
    bundle: options.bundle ?? null,
    read: options.read ?? null,
  });
}

/**
 * The file's rows as the shared check and the completion of a run's rows read them: all at once, or as they come
 * (`iterate`).
 *
 * @param db The store's connection.
 * @returns The rows.
 */
export function sqliteRowSource(db: SqlDb): RowSource {
  return {
    dialect: "sqlite",
    all: (sql: string, ...params: SqlValue[]) =>
      Promise.resolve(preparedOnce(db, sql).all(...params.map(columnValue)) as Record<string, SqlValue>[]),
    // a statement kept (its text is the same for every run), its own while the rows come
    each: (sql: string, ...params: SqlValue[]) =>
      iterateOnce(db, sql, params.map(columnValue)) as Iterable<Record<string, SqlValue>>,
  };
}

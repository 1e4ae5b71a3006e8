/**
 * A question in SQL to a trace database, on a read-only connection: what a person types to ask across runs.
 * @module
 */
import { ProveviError } from "../../provevi/mod.ts";
import { openTraceDb } from "./trace_db.ts";

/** The answer to {@linkcode queryTrace}: the columns in order, and the rows. */
export interface TraceQueryResult {
  columns: string[];
  rows: Record<string, unknown>[];
}

/**
 * Runs one SQL statement on a trace database opened read-only, so a question never changes it.
 *
 * @param db The trace database's file.
 * @param sql One statement, such as a `SELECT`.
 * @returns The columns and rows.
 * @throws ProveviError for a database that cannot be opened, or SQL that SQLite refuses (with its message).
 * @example
 * ```ts
 * import { queryTrace } from "./query.ts";
 * const { rows } = queryTrace("/tmp/trace.db", "SELECT tool, count(*) AS calls FROM trace_tool_calls GROUP BY tool");
 * ```
 */
export function queryTrace(db: string, sql: string): TraceQueryResult {
  using trace = openTraceDb(db);
  try {
    const statement = trace.db.prepare(sql);
    const columns = statement.columns().map((c) => c.name);
    const rows = statement.all() as Record<string, unknown>[];
    return { columns, rows };
  } catch (error) {
    throw new ProveviError(
      `the query cannot be run on "${db}": ${
        (error as Error).message.split("\n")[0]
      }; see docs/provtrace.md for the tables`,
      { cause: error },
    );
  }
}

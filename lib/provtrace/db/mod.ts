/**
 * The trace database itself: its schema as numbered upgrade steps, opening a file (WAL only), and the
 * listing of the runs it holds. Imports provevi (through its `mod.ts`) and no other folder of provtrace.
 * @module
 */
export * from "./schema.ts";
export * from "./trace_db.ts";
export * from "./trace_runs.ts";
export * from "./query.ts";
export * from "./run_digest.ts";
export * from "./rows_key.ts";
export * from "./schema_check.ts";
export * from "./stored_text.ts";

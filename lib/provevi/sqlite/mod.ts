/**
 * The SQLite store: one file of `provevi_` tables and views beside the run folders, its connection, schema
 * and numbered upgrades, row writing, questions across runs and the row check. Imports `evidence/`, `store/`
 * and `experiments/`.
 * @module
 */
export * from "./sqlite_rows.ts";
export * from "./sqlite_schema.ts";
export * from "./sqlite_connection.ts";
export * from "./sqlite_check.ts";
export * from "./sqlite_store.ts";

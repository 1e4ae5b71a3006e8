/**
 * The build: messages read from a call's payloads in one normal form, a run's events mapped to rows, the
 * build of a store's sealed runs, and the check of each run against its source. Imports `db/` and provevi.
 * @module
 */
export * from "./messages.ts";
export * from "./run_rows.ts";
export * from "./build.ts";
export * from "./check_run.ts";
export * from "./check.ts";

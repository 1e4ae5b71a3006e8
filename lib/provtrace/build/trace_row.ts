/**
 * A row of trace.db as the build makes it, in a file of its own so that the files that make rows share it without
 * importing each other.
 * @module
 */

/** A row: column name to value, as `node:sqlite` binds them. */
export type TraceRow = Record<string, string | number | null>;

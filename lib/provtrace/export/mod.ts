/**
 * Exports of a trace database for a training job: `steps` and `sft` lines, each with its provenance, and
 * their filters. Imports `db/` and provevi.
 * @module
 */
export * from "./export.ts";

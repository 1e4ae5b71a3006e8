/**
 * Exports of a trace database for a training job: `steps`, `sft`, `openai`, `sharegpt`, `hf` and `atif`
 * lines, each with its provenance, and their filters; each export's manifest and record in the database, and
 * the lineage from runs to the exports and lines they fed. Imports `db/`, `build/` and provevi.
 * @module
 */
export * from "./export.ts";
export { PROVENANCE_PLACE, TRACE_EXPORT_FORMATS, type TraceExportFormat } from "./formats.ts";
export { ATIF_VERSION } from "./atif.ts";
export { type PrefixBreak, type TokenTurn } from "./tokens.ts";
export * from "./export_file.ts";
export * from "./lineage.ts";

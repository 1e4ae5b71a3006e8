/**
 * A run shown to a live viewer: the cut of each event to a level (`shownAt`) and the payloads a viewer may
 * read. Imports `evidence/` and `telemetry/`.
 * @module
 */
export * from "./live.ts";

/**
 * provtrace: the trace database built from sealed runs (provtrace-spec.txt). A SQLite file, apart from the
 * evidence, with a row for each step, model call, message and tool call, that SQL can join; and exports for a
 * training job. It reads provevi's stores and never writes them. `check` and every export compare each run's
 * rows with the rows its evidence gives, so an edit of the file is named, and never exported.
 *
 * This is the trace database's public API (`@mahacata/prove/lib/provtrace`): build it, check it, ask it in
 * SQL, export from it, and follow the lineage from runs to exports; the schema, the rows and the formats'
 * machinery stay in the subsystem folders.
 *
 * @example
 * ```ts
 * import { buildTrace, checkTrace, exportTrace, queryTrace } from "@mahacata/prove/lib/provtrace";
 * import assert from "node:assert/strict";
 *
 * const db = `${await Deno.makeTempDir()}/trace.db`;
 * const built = await buildTrace({ store: "file", runs: "fixtures/runs", db });
 * assert.ok(built.added.length > 0);
 * assert.equal((await checkTrace(db, { runs: "fixtures/runs" })).ok, true);
 * const { rows } = await queryTrace(db, "SELECT count(*) AS n FROM trace_runs", { timeout: 0 });
 * assert.equal(rows[0]!.n, built.added.length);
 * const steps = await exportTrace(db, { kind: "steps", runs: "fixtures/runs" });
 * assert.ok(steps.lines.length > 0);
 * ```
 * @module
 */

// Build and check.
export {
  buildTrace,
  type TraceBuildOptions,
  type TraceBuildResult,
  type TraceBuiltRun,
} from "./build/mod.ts";
export { checkTrace, type CheckTraceOptions, type TraceCheck, type TraceSourceCheck } from "./build/mod.ts";

// Ask in SQL.
export { queryTrace, TRACE_QUERY_TIMEOUT, type TraceQueryOptions, type TraceQueryResult } from "./db/mod.ts";

// Export for a training job, and the lineage of runs to exports.
export {
  checkLineage,
  exportTrace,
  type TaintingRun,
  TRACE_EXPORT_FORMATS,
  type TraceExport,
  type TraceExportFileOptions,
  type TraceExportFormat,
  type TraceExportLine,
  type TraceExportLineage,
  type TraceExportManifest,
  type TraceExportOptions,
  type TraceExportPolicy,
  type TraceExportRecord,
  type TraceExportWritten,
  traceLineage,
  type TraceLineageCheck,
  type TraceProvenance,
  type TraceRunLineage,
  type TraceSubagentProvenance,
  writeTraceExport,
} from "./export/mod.ts";

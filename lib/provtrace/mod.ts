/**
 * provtrace: the trace database built from sealed runs (provtrace-spec.txt). A SQLite file, apart from the
 * evidence, with a row for each step, model call, message and tool call, that SQL can join; and exports for a
 * training job. It reads provevi's stores and never writes them. `check` and every export compare each run's
 * rows with the rows its evidence gives, so an edit of the file is named, and never exported.
 *
 * @example
 * ```ts
 * import { buildTrace, checkTrace, exportTrace, queryTrace } from "./mod.ts";
 * await buildTrace({ store: "file", runs: "fixtures/runs", db: "/tmp/trace.db" });
 * console.log((await checkTrace("/tmp/trace.db")).ok);
 * console.log((await exportTrace("/tmp/trace.db", { kind: "steps" })).lines.length);
 * console.log((await queryTrace("/tmp/trace.db", "SELECT count(*) AS n FROM trace_spans WHERE kind = ?", { params: ["LLM"] })).rows);
 * ```
 * @module
 */
export * from "./db/mod.ts";
export * from "./build/mod.ts";
export * from "./export/mod.ts";

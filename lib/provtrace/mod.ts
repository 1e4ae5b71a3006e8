/**
 * provtrace: the trace database built from sealed runs (provtrace-spec.txt). A SQLite file, apart from the
 * evidence, with a row for each step, model call, message and tool call, that SQL can join; and exports for a
 * training job. It reads provevi's stores and never writes them.
 *
 * @example
 * ```ts
 * import { buildTrace, checkTrace, exportTrace } from "./mod.ts";
 * await buildTrace({ store: "file", runs: "fixtures/runs", db: "/tmp/trace.db" });
 * console.log((await checkTrace("/tmp/trace.db")).ok);
 * console.log(exportTrace("/tmp/trace.db", { kind: "steps" }).length);
 * ```
 * @module
 */
export * from "./db/mod.ts";
export * from "./build/mod.ts";
export * from "./export/mod.ts";

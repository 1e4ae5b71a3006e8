/**
 * provrun: the runtime. A run file becomes a recorded, verified run: run context, recorder, broker, resolver,
 * stager, backends (call, and the tool-calling agent with its sandbox, tools folder and MCP servers), capture of
 * model calls and tool calls, the permission check, outputter and bundle.
 *
 * @example
 * ```ts
 * import { RunFile, runFile } from "./mod.ts";
 * const outcome = await runFile(await RunFile.load("fixtures/tour/run.yaml"), {});
 * console.log(outcome.runId, outcome.status);
 * ```
 * @module
 */
export * from "./run/mod.ts";
export * from "./backends/mod.ts";
export * from "./sandbox/mod.ts";
export * from "./gateway/mod.ts";
export * from "./runner/mod.ts";
export * from "./telemetry/mod.ts";
export * from "./replay/mod.ts";

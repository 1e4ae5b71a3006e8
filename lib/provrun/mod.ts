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
export * from "./errors.ts";
export * from "./run_file.ts";
export * from "./run_context.ts";
export * from "./recorder.ts";
export * from "./broker.ts";
export * from "./resolver.ts";
export * from "./stager.ts";
export * from "./outputter.ts";
export * from "./scripted_model.ts";
export * from "./models.ts";
export * from "./capture.ts";
export * from "./backend.ts";
export * from "./call_backend.ts";
export * from "./fs_tools.ts";
export * from "./sandbox.ts";
export { type LoadedModule, loadTools } from "./sandbox_worker.ts";
export * from "./tools_folder.ts";
export * from "./mcp.ts";
export * from "./tools.ts";
export * from "./agent_backend.ts";
export * from "./permissions.ts";
export * from "./run.ts";
export * from "./telemetry_env.ts";
export * from "./span_cut.ts";
export * from "./run_telemetry.ts";

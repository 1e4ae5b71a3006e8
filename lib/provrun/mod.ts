/**
 * provrun: the runtime. A run file becomes a recorded, verified run: run context, recorder, broker, resolver,
 * stager, backends, capture of model calls, outputter and bundle.
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
export * from "./stager.ts";
export * from "./outputter.ts";
export * from "./scripted_model.ts";
export * from "./models.ts";
export * from "./capture.ts";
export * from "./backend.ts";
export * from "./call_backend.ts";
export * from "./run.ts";
export * from "./telemetry_env.ts";
export * from "./span_cut.ts";
export * from "./run_telemetry.ts";

/**
 * The backends that do a run's work: the interface, the `call` backend, the tool-calling `agent` backend,
 * the capture of model calls, the model routes and the scripted `test:` model. Imports `run/`, `sandbox/` and
 * `telemetry/`.
 * @module
 */
export * from "./scripted_model.ts";
export * from "./models.ts";
export * from "./capture_options.ts";
export { callParamsJson } from "./call_request.ts";
export * from "./capture.ts";
export * from "./backend.ts";
export * from "./call_backend.ts";
export * from "./agent_backend.ts";
export * from "./tool_grants.ts";
export * from "./program_backend.ts";
export * from "./claude_code.ts";
export * from "./codex.ts";
export { HooksChanged } from "./_program_guard.ts";
export * from "./agents_sdk_processor.ts";
export * from "./agents_sdk_backend.ts";

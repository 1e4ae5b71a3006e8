/**
 * A run's telemetry: the tracer provider and OTLP export the policy approves, the environment it reads,
 * the cut of spans to a destination's level, and the live feed of a running run. Imports `run/` only.
 * @module
 */
export * from "./telemetry_env.ts";
export * from "./span_cut.ts";
export * from "./declared_names.ts";
export * from "./run_telemetry.ts";
export * from "./live_feed.ts";
export { type MlflowCopyOutcome } from "./mlflow_copy.ts";
export { type OutgoingSpan, type SpanRedactor } from "./senders.ts";

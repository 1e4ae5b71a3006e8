/**
 * The telemetry policy and what applies it: the policy with its narrowing and hosts, plain names and
 * attributes by level, endpoints, library versions and the span libraries, the span exporter, the OTLP target
 * and the telemetry events (the OTLP receiver is in `receiver/`). Imports `evidence/` only; never a store.
 * @module
 */
export * from "./attributes.ts";
export * from "./plain_name.ts";
export * from "./endpoint.ts";
export * from "./library_version.ts";
export * from "./policy_types.ts";
export * from "./policy.ts";
export * from "./policy_hosts.ts";
export * from "./otlp_target.ts";
export * from "./telemetry_events.ts";
export * from "./span_libraries.ts";
export * from "./span_exporter.ts";
export * from "./genai_conventions.ts";
export * from "./genai_messages.ts";
export * from "./content_cap.ts";

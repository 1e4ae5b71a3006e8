/**
 * provevi: the evidence of agent runs. The event format and hash chain, the stores, and every check.
 *
 * @example
 * ```ts
 * import { findRun, verifyRun } from "./mod.ts";
 * const check = await verifyRun(await findRun("fixtures/runs/run-20261129T120000Z-0badc0de"));
 * console.log(check.ok, check.problems);
 * ```
 * @module
 */
export * from "./errors.ts";
export * from "./hash.ts";
export * from "./event.ts";
export * from "./chain.ts";
export * from "./manifest.ts";
export * from "./record.ts";
export * from "./store.ts";
export * from "./runs_root.ts";
export * from "./file_store.ts";
export * from "./find_run.ts";
export * from "./open_store.ts";
export * from "./verify.ts";
export * from "./verify_run.ts";
export * from "./bundle.ts";
export * from "./experiment.ts";
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
export * from "./spans_file.ts";
export * from "./span_exporter.ts";
export * from "./otlp_receiver.ts";
export * from "./live.ts";
export * from "./store_uri.ts";
export * from "./agent_class.ts";
export * from "./assess.ts";
export * from "./store_questions.ts";
export * from "./sqlite_rows.ts";
export * from "./sqlite_schema.ts";
export * from "./sqlite_connection.ts";
export * from "./sqlite_check.ts";
export * from "./sqlite_store.ts";
export * from "./export_run.ts";

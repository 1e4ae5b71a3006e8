/**
 * The span receiver: OTLP/HTTP traces (protobuf and JSON, gzip or not) from agent programs in other processes
 * become evidence of the run whose address they reached, with the run's key. `receiver(store, run)` serves one
 * open run from the run's own process; `SpanDaemon` (`prove serve`) serves many runs at once with the same
 * intake, behind its secret (`daemon_file.ts`), and `openWithDaemon` is a run's writer there. Both bound what a
 * request and a run may send (`RunBudget`). The OTLP decoders live here too. Imports `evidence/`, `telemetry/`
 * and `guard/` only; never a store's implementation.
 *
 * @example
 * ```ts
 * import { receiver, type ReceiverRun } from "./mod.ts";
 * declare const run: ReceiverRun; // the run's recorder
 * await using spans = receiver({}, run);
 * console.log(spans.tracesUrl, spans.headers); // http://127.0.0.1:PORT/v1/traces { authorization: "Bearer …" }
 * ```
 * @module
 */
export * from "./otlp_receiver.ts";
export * from "./otlp_json.ts";
export * from "./span_intake.ts";
export { type BatchEncoding, receivedRow, RECEIVER_COMPONENT, SPANS_RECEIVED } from "./span_events.ts";
export * from "./received_batch.ts";
export { RECEIVED_FILE } from "./daemon_run.ts";
export { ReceivedBodies, type StoreBody } from "./received_bodies.ts";
export * from "./run_budget.ts";
export * from "./run_receiver.ts";
export * from "./span_daemon.ts";
export * from "./daemon_file.ts";
export * from "./daemon_client.ts";

/**
 * A trace by its ID: the spans of every run of a store that carry it, each with its run, parent and timing
 * (the seed's `trace(trace_id)`). An indexed store finds the runs in its event rows; the file store, which has
 * no index, reads each run's span index and events.
 * @module
 */
import { ProveviError } from "../evidence/errors.ts";
import type { TraceSpan } from "../evidence/run_spans.ts";
import type { EvidenceStore } from "./store.ts";
import { traceOfRuns } from "./_trace_of_runs.ts";

export { indexedSpans, spansOfRecord } from "./_trace_of_runs.ts";

/**
 * The trace ID that a user wrote: 32 hex digits, or MLflow's `tr-` and 32 hex digits, in lowercase.
 *
 * @param text What was written.
 * @returns The trace ID, 32 lowercase hex digits.
 * @throws ProveviError for any other text.
 * @example
 * ```ts
 * import { traceIdOf } from "./trace.ts";
 * traceIdOf("tr-4BF92F3577B34DA6A3CE929D0E0E4736"); // "4bf92f3577b34da6a3ce929d0e0e4736"
 * ```
 */
export function traceIdOf(text: string): string {
  const m = /^(?:tr-)?([0-9a-fA-F]{32})$/.exec(text);
  if (!m || /^0+$/.test(m[1]!)) {
    throw new ProveviError(
      `${JSON.stringify(text)} is not a trace ID: write its 32 hex digits (or MLflow's tr-<32 hex digits>)`,
    );
  }
  return m[1]!.toLowerCase();
}

/**
 * The spans of a trace, across the runs of a store that carry it.
 *
 * @param store The store.
 * @param traceId The trace ID: 32 hex digits, or MLflow's `tr-<32 hex>`.
 * @returns Its spans, ordered by start; empty when no run of the store carries the trace.
 * @throws ProveviError for a text that is not a trace ID.
 * @example
 * ```ts
 * import { FileStore } from "./file_store.ts";
 * import { trace } from "./trace.ts";
 * await using store = new FileStore({ runs: "fixtures/runs" });
 * const spans = await trace(store, "4bf92f3577b34da6a3ce929d0e0e4736");
 * spans.map((s) => s.name); // ["invoke_agent revenue-question", …]
 * ```
 */
export async function trace(store: EvidenceStore, traceId: string): Promise<TraceSpan[]> {
  const id = traceIdOf(traceId);
  if (typeof store.trace === "function") return await store.trace(id);
  return await traceOfRuns(store, await store.runIds(), id, { scan: true });
}

/**
 * The spans of a trace in some runs of a store, and the spans of one run: what `trace` and each indexed store's
 * own `trace` method share.
 * @module
 */
import type { RunRecord } from "../evidence/record.ts";
import { runSpans, type TraceSpan } from "../evidence/run_spans.ts";
import {
  readSpansFile,
  spanLineWeight,
  SPANS_READ_MAX,
  SPANS_READ_WEIGHT,
  SpanTake,
  type StoredSpan,
} from "../evidence/spans_file.ts";
import type { EvidenceEvent } from "../evidence/event.ts";
import { readEventsText } from "../evidence/read_events.ts";
import { takeReceivedRows } from "../receiver/received_rows.ts";
import { SPANS_RECEIVED } from "../receiver/span_events.ts";
import type { EvidenceStore } from "./store.ts";

/**
 * The spans of a trace in the given runs of a store: what a store's own `trace` method calls, with the runs
 * its index names. With `scan`, a run whose files do not hold the trace ID's text is passed over unparsed.
 *
 * @param store The store to read the runs from.
 * @param runIds The runs to look in.
 * @param traceId The trace ID, as {@linkcode traceIdOf} gives it.
 * @param options `scan`: the runs are every run, most of which do not carry the trace.
 * @returns The spans of the trace, ordered by start: at most {@linkcode SPANS_READ_MAX} of them, and no more
 * than {@linkcode SPANS_READ_WEIGHT} weighs (as a line of the index would), as one run's index gives at most.
 */
export async function traceOfRuns(
  store: EvidenceStore,
  runIds: readonly string[],
  traceId: string,
  options: { scan?: boolean } = {},
): Promise<TraceSpan[]> {
  const out: TraceSpan[] = [];
  // What one run's index gives is bounded (SPANS_READ_MAX, SPANS_READ_WEIGHT), but a trace gathers from every
  // run that carries its ID: runs of forged spans of one trace took as much again each. So does the trace.
  let weight = 0;
  runs: for (const runId of runIds) {
    let record: RunRecord;
    try {
      record = await store.readRun(runId);
    } catch {
      continue; // a run that went away, or that this store cannot read, has no spans to give
    }
    for (const span of await spansOfRecord(record, options.scan ? traceId : null)) {
      if (span.trace_id !== traceId) continue;
      weight += spanLineWeight(JSON.stringify(span));
      if (out.length >= SPANS_READ_MAX || weight > SPANS_READ_WEIGHT) break runs;
      out.push(span);
    }
  }
  return out.sort((a, b) =>
    a.start_time === b.start_time
      ? 0
      : a.start_time === null
      ? 1
      : b.start_time === null
      ? -1
      : a.start_time < b.start_time
      ? -1
      : 1
  );
}

/**
 * The rows of one run's spans: those of its span index (`spans.jsonl`), then those of the protobuf bodies its
 * receiver took, made from their payloads (`receiver/received_rows.ts`), together no more than one index gives
 * (`SpanTake`). The payloads' rows are taken first: the index is outside the evidence, and one filled with
 * forged lines would otherwise leave no room for them; they come last all the same, so that where both give a
 * span (a run of `receiver()`), the payload's row is the one {@linkcode runSpans} keeps. An index that cannot be
 * read gives none; a payload that cannot, none of its rows.
 *
 * @param record The run.
 * @param events Its events.
 * @param folder The folder whose span index to read (the record's by default; none when null).
 * @returns The rows, the index's first.
 * @example
 * ```ts
 * import { FileStore } from "./file_store.ts";
 * import { indexedSpans } from "./trace.ts";
 * await using store = new FileStore({ runs: "fixtures/runs" });
 * const rows = await indexedSpans(await store.readRun("run-20261129T120000Z-0badc0de"), []);
 * ```
 */
export async function indexedSpans(
  record: RunRecord,
  events: readonly EvidenceEvent[],
  folder: string | null = record.folder,
): Promise<StoredSpan[]> {
  const take = new SpanTake();
  const received = (await takeReceivedRows(record, events, take)).length;
  if (folder !== null) await readSpansFile(folder, take).catch(() => {});
  return [...take.spans.slice(received), ...take.spans.slice(0, received)];
}

/**
 * The spans of one run: its events and the rows of its spans ({@linkcode indexedSpans}), as
 * {@linkcode runSpans} joins them. Rows that cannot be read, and events that cannot, give what the other holds.
 *
 * @param record The run.
 * @param only When given, a run whose events and rows do not hold this text gives no spans, and its events are
 * parsed only when their text holds it or names a `spans_received` event (whose payloads' rows may hold it).
 * @returns The run's spans, ordered by start.
 * @example
 * ```ts
 * import { FileStore } from "./file_store.ts";
 * import { spansOfRecord } from "./trace.ts";
 * await using store = new FileStore({ runs: "fixtures/runs" });
 * const spans = await spansOfRecord(await store.readRun("run-20261129T120000Z-0badc0de"));
 * ```
 */
export async function spansOfRecord(record: RunRecord, only: string | null = null): Promise<TraceSpan[]> {
  const text = await record.eventsText().catch(() => null);
  const named = only === null || (text ?? "").includes(only);
  // a scan of every run parses no run's events that neither hold the trace nor name a body its rows may hold
  const parsed = text !== null && (named || text.includes(SPANS_RECEIVED));
  const events = parsed ? readEventsText(text).events : [];
  const indexed = await indexedSpans(record, events);
  if (!named && !indexed.some((s) => s.trace_id === only)) return [];
  const spans = runSpans(parsed || text === null ? events : readEventsText(text).events, indexed);
  for (const s of spans) if (s.run_id === "") s.run_id = record.runId;
  return spans;
}

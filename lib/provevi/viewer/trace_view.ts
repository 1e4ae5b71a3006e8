/**
 * A trace as the viewer's trace page draws it: every span of the store's runs that carry the trace ID, nested
 * by parent, on one time axis, each with its run and its events, a page at a time. What a span's name may say
 * follows the telemetry policy's live level, as for the run page; attributes are never sent.
 * @module
 */
import { spanTree, type TraceSpan } from "../evidence/run_spans.ts";
import type { EvidenceStore } from "../store/store.ts";
import { trace } from "../store/trace.ts";
import type { Level } from "../telemetry/attributes.ts";
import { plainSpanName } from "../telemetry/plain_name.ts";
import { micros } from "./run_spans.ts";

/** One span of a trace, as a row of the trace page. */
export interface TraceViewSpan {
  run_id: string;
  span_id: string;
  parent_span_id: string | null;
  /** Its name as the level lets it show: below `bodies` a name that is not plain shows as its operation. */
  name: string;
  depth: number;
  /** Microseconds from the trace's first start; null when no event or span says. */
  start_us: number | null;
  end_us: number | null;
  status: "ok" | "error" | "open";
  /** The seqs of its run's events on it. */
  seqs: number[];
  /** `index` (the span index, checked against the events) or `evidence` (the events alone). */
  source: "index" | "evidence";
}

/** A page of a trace. */
export interface TraceView {
  trace_id: string;
  /** The runs that carry it, in the order of their first span. */
  runs: string[];
  /** The spans of the page, in tree order. */
  spans: TraceViewSpan[];
  /** How many spans the trace has. */
  total: number;
  /** The offset of the next page, or null when this is the last. */
  next: number | null;
}

/** The operation that begins a span's name (`chat`, `execute_tool`), when it is a plain word. */
function operation(name: string): string {
  const first = name.split(" ")[0] ?? "";
  return /^[a-z][a-z0-9_.]{0,63}$/.test(first) ? first : "span";
}

/** A span's name as the level lets it show. */
export function spanNameAt(name: string, level: Level | null): string {
  if (level === "bodies") return name;
  if (level === null) return operation(name);
  return plainSpanName(name) ? name : operation(name);
}

/**
 * A page of a trace, for the viewer.
 *
 * @param store The store.
 * @param traceId The trace ID, 32 lowercase hex digits.
 * @param options The policy's live level, and the page: `offset` and `limit` (2000 at most).
 * @returns The page; no spans when no run of the store carries the trace.
 */
export async function traceView(
  store: EvidenceStore,
  traceId: string,
  options: { level: Level | null; offset?: number; limit?: number },
): Promise<TraceView> {
  const spans = await trace(store, traceId);
  const tree = spanTree(spans);
  let t0 = Infinity;
  for (const s of spans) if (s.start_time !== null) t0 = Math.min(t0, micros(s.start_time));
  if (t0 === Infinity) t0 = 0;
  const offset = options.offset ?? 0;
  const limit = Math.min(options.limit ?? 500, 2000);
  const page = tree.slice(offset, offset + limit);
  const at = (time: string | null) => (time === null ? null : micros(time) - t0);
  const row = ({ span, depth }: { span: TraceSpan; depth: number }): TraceViewSpan => ({
    run_id: span.run_id,
    span_id: span.span_id,
    parent_span_id: span.parent_span_id,
    name: spanNameAt(span.name, options.level),
    depth,
    start_us: at(span.start_time),
    end_us: at(span.end_time),
    status: span.status.code === 2 ? "error" : span.end_time === null ? "open" : "ok",
    seqs: span.seqs.slice(0, 20),
    source: span.source,
  });
  return {
    trace_id: traceId,
    runs: [...new Set(spans.map((s) => s.run_id))],
    spans: page.map(row),
    total: tree.length,
    next: offset + page.length < tree.length ? offset + page.length : null,
  };
}

/**
 * The spans of a run as a reader sees them: each span that the run's events name, with its name, parent and
 * timing, and each span of the span index (`spans.jsonl`). The index is not the record (no check covers it), so
 * where the two meet the hash-chained events win: a span's trace and parent are the events' own, and a span
 * the receiver took (`span_recorded`, which holds the whole span) is read from its event. A span that only the
 * events name (a run whose index is gone, or was never kept) is made from them, as provtrace makes its rows.
 * @module
 */
import type { EvidenceEvent, Json } from "./event.ts";
import type { StoredSpan } from "./spans_file.ts";

/** One span of a run, from the span index or made from the run's events. */
export interface TraceSpan {
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  name: string;
  /** The OpenTelemetry span kind: 0 internal, 1 server, 2 client, 3 producer, 4 consumer. */
  kind: number;
  /** The instrumentation scope that made the span. */
  scope: { name: string; version: string | null };
  /** 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string | null };
  attributes: { [key: string]: Json };
  /** The span's own events (OpenTelemetry's, not the evidence's). */
  events: { name: string; time: string; attributes: { [key: string]: Json } }[];
  links: { trace_id: string; span_id: string }[];
  /** The run whose evidence names it. */
  run_id: string;
  /** When it started: ISO 8601 UTC; null when no event says. */
  start_time: string | null;
  /** When it ended; null for a span still open (a run that has not ended). */
  end_time: string | null;
  /** From start to end, in milliseconds (microsecond precision); null when either is unknown. */
  duration_ms: number | null;
  /**
   * Where it was read: `index`, the span index beside the evidence (its trace and parent checked against the
   * events), or `evidence`, the hash-chained events alone.
   */
  source: "index" | "evidence";
  /** The seqs of the run's events on this span, in order. */
  seqs: number[];
}

/**
 * The spans of one run, from its events and its span index.
 *
 * @param events The run's events, in order.
 * @param indexed The spans of its `spans.jsonl` (empty when it has none).
 * @returns Every span, ordered by start (a span with no start last), then by span ID.
 * @example
 * ```ts
 * import { runSpans } from "./run_spans.ts";
 * runSpans([], []); // []
 * ```
 */
export function runSpans(events: readonly EvidenceEvent[], indexed: readonly StoredSpan[]): TraceSpan[] {
  const runId = events[0]?.run_id ?? "";
  const groups = new Map<string, EvidenceEvent[]>();
  for (const e of events) {
    if (typeof e.span_id !== "string") continue;
    const group = groups.get(e.span_id);
    if (group) group.push(e);
    else groups.set(e.span_id, [e]);
  }
  const out: TraceSpan[] = [];
  const fromIndex = new Map<string, StoredSpan>();
  for (const s of indexed) if (typeof s?.span_id === "string") fromIndex.set(s.span_id, s);
  for (const [spanId, group] of groups) {
    const recorded = group.find((e) => e.type === "span_recorded");
    const stored = fromIndex.get(spanId);
    const span = recorded
      ? recordedSpan(recorded, group)
      : stored
      ? indexSpan(stored, group)
      : eventSpan(spanId, group, events);
    out.push(span);
  }
  for (const s of fromIndex.values()) {
    if (!groups.has(s.span_id)) out.push({ ...indexSpan(s, []), run_id: runId });
  }
  for (const s of out) s.run_id = runId;
  return out.sort(byStart);
}

/** The order of a listing: by start (unknown last), then by span ID. */
function byStart(a: TraceSpan, b: TraceSpan): number {
  if (a.start_time !== b.start_time) {
    if (a.start_time === null) return 1;
    if (b.start_time === null) return -1;
    return micros(a.start_time) - micros(b.start_time) || (a.start_time < b.start_time ? -1 : 1);
  }
  return a.span_id < b.span_id ? -1 : a.span_id > b.span_id ? 1 : 0;
}

/**
 * Microseconds since the epoch of an ISO 8601 UTC time, keeping the microseconds that `Date.parse` drops; NaN
 * for a text that is not a time.
 */
function micros(time: string): number {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?Z$/.exec(time);
  if (!m) return Number.NaN;
  const seconds = Date.parse(`${m[1]}Z`);
  return seconds * 1000 + Number((m[2] ?? "").padEnd(6, "0").slice(0, 6));
}

function durationMs(start: string | null, end: string | null): number | null {
  if (start === null || end === null) return null;
  const d = (micros(end) - micros(start)) / 1000;
  return Number.isFinite(d) ? Math.max(0, d) : null;
}

const text = (v: Json | undefined): string | null => (typeof v === "string" ? v : null);
const object = (v: Json | undefined): { [key: string]: Json } =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? v : {};

/** The event that opened the span: the one with its own start, else the first. */
function opener(group: readonly EvidenceEvent[]): EvidenceEvent {
  return group.find((e) => e.started_at !== null) ?? group[0]!;
}

/**
 * A span of the index, with the trace and parent that the events give (they are checked; the index is not):
 * the index adds the name, the times and what OpenTelemetry recorded.
 */
function indexSpan(s: StoredSpan, group: readonly EvidenceEvent[]): TraceSpan {
  const first = group.length ? opener(group) : null;
  // The span's own start and end, as one pair: an event's started_at is when its step began to be recorded,
  // which may fall after the span's end for a short step.
  const start = typeof s.start_time === "string" ? s.start_time : null;
  const end = typeof s.end_time === "string" ? s.end_time : null;
  return {
    trace_id: first?.trace_id ?? s.trace_id,
    span_id: s.span_id,
    name: s.name,
    kind: s.kind,
    scope: { name: s.scope.name, version: s.scope.version ?? null },
    status: { code: s.status.code, message: s.status.message ?? null },
    attributes: s.attributes,
    events: Array.isArray(s.events) ? s.events : [],
    links: Array.isArray(s.links) ? s.links : [],
    parent_span_id: first ? first.parent_span_id : s.parent_span_id,
    run_id: "",
    start_time: start,
    end_time: end,
    duration_ms: durationMs(start, end),
    source: "index",
    seqs: group.map((e) => e.seq),
  };
}

/** A span the receiver took: its `span_recorded` event holds the whole span. */
function recordedSpan(e: EvidenceEvent, group: readonly EvidenceEvent[]): TraceSpan {
  const d = e.data;
  const status = object(d.status);
  const end = text(d.end_time);
  return {
    trace_id: e.trace_id ?? "",
    span_id: e.span_id!,
    parent_span_id: e.parent_span_id,
    name: text(d.name) ?? "span",
    kind: typeof d.kind === "number" ? d.kind : 0,
    scope: { name: text(d.scope) ?? "", version: text(d.version) },
    start_time: e.started_at,
    end_time: end,
    duration_ms: durationMs(e.started_at, end),
    status: { code: typeof status.code === "number" ? status.code : 0, message: text(status.message) },
    attributes: object(d.attributes),
    events: [],
    links: [],
    run_id: "",
    source: "evidence",
    seqs: group.map((g) => g.seq),
  };
}

/**
 * A span made from the events on it, as provrun names its spans: the run's root span from `run_created` to the
 * run's end, a model call's `chat MODEL`, a tool's `execute_tool TOOL`, any other step by its event's type.
 */
function eventSpan(
  spanId: string,
  group: readonly EvidenceEvent[],
  events: readonly EvidenceEvent[],
): TraceSpan {
  const first = opener(group);
  const created = group.find((e) => e.type === "run_created");
  let name: string = first.type;
  let start: string | null = first.started_at;
  let end: string | null = group.at(-1)!.time;
  if (created) {
    const agent = text(created.data.agent);
    name = agent ? `invoke_agent ${agent}` : "run";
    start = created.started_at ?? created.time;
    const ending = events.find((e) => e.type === "run_completed" || e.type === "run_failed");
    end = ending && ending.span_id === spanId ? ending.time : null;
  } else if (first.type === "model_called") name = `chat ${text(first.data.model) ?? ""}`.trim();
  else if (first.type === "tool_called") name = `execute_tool ${text(first.data.tool) ?? ""}`.trim();
  const failed = group.find((e) =>
    e.type === "step_failed" || e.type === "run_failed" || (e.type === "tool_called" && e.data.error)
  );
  return {
    trace_id: first.trace_id ?? "",
    span_id: spanId,
    parent_span_id: first.parent_span_id,
    name,
    kind: 0,
    scope: { name: "provrun", version: null },
    start_time: start,
    end_time: end,
    duration_ms: durationMs(start, end),
    status: failed
      ? {
        code: 2,
        message: `${text(failed.data.error) ?? "Error"}: ${text(failed.data.message) ?? ""}`.trim(),
      }
      : { code: 0, message: null },
    attributes: {},
    events: [],
    links: [],
    run_id: "",
    source: "evidence",
    seqs: group.map((e) => e.seq),
  };
}

/**
 * Spans in tree order: each root (a span whose parent is not among them) by start, each child under its
 * parent by start, each with its depth (at most 50, as the viewer draws it). Without recursion, so a chain of
 * parents thousands deep (a sender may send one) costs no stack; spans whose parents name each other in a
 * circle reach no root, and come last, at depth 0.
 *
 * @param spans The spans, as {@linkcode runSpans} or `trace` gives them.
 * @returns Each span once, with its depth.
 * @example
 * ```ts
 * import { spanTree } from "./run_spans.ts";
 * spanTree([]); // []
 * ```
 */
export function spanTree(spans: readonly TraceSpan[]): { span: TraceSpan; depth: number }[] {
  const ids = new Set(spans.map((s) => s.span_id));
  const children = new Map<string | null, TraceSpan[]>();
  for (const s of spans) {
    // A span ID is unique within a trace: a parent in another run of the trace is still its parent.
    const parent = s.parent_span_id !== null && s.parent_span_id !== s.span_id && ids.has(s.parent_span_id)
      ? s.parent_span_id
      : null;
    const siblings = children.get(parent);
    if (siblings) siblings.push(s);
    else children.set(parent, [s]);
  }
  // Latest first, so that popping the stack takes the earliest.
  for (const siblings of children.values()) siblings.sort((a, b) => byStart(b, a));
  const out: { span: TraceSpan; depth: number }[] = [];
  const placed = new Set<TraceSpan>();
  const todo = (children.get(null) ?? []).map((span) => ({ span, depth: 0 }));
  while (todo.length > 0) {
    const { span, depth } = todo.pop()!;
    if (placed.has(span)) continue;
    placed.add(span);
    out.push({ span, depth: Math.min(depth, 50) });
    for (const child of children.get(span.span_id) ?? []) todo.push({ span: child, depth: depth + 1 });
  }
  for (const span of spans) if (!placed.has(span)) out.push({ span, depth: 0 });
  return out;
}

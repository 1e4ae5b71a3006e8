/**
 * The run's trace as the viewer's timeline draws it: its root span and one span per step, nested by their
 * parents, from the events' OpenTelemetry IDs and times.
 * @module
 */
import type { EvidenceEvent, Json } from "../evidence/event.ts";
import type { EventItem } from "../live/live.ts";
import { feedStatus } from "../live/feed.ts";
import type { ReceivedView } from "./run_received.ts";

/** One span of the run's trace, as a bar of the timeline. */
export interface ViewSpan {
  /** The trace it is part of (the run's own, or one that an agent program sent it in), or null. */
  trace_id: string | null;
  span_id: string;
  parent_span_id: string | null;
  name: string;
  /** Microseconds from the start of the run. */
  start_us: number;
  /** Microseconds from the start of the run. */
  end_us: number;
  depth: number;
  /** `error` for a failed step, `refused` for a call provrun refused, `running` while it runs. */
  status: "ok" | "error" | "refused" | "running";
  /** The events of the span (on a page, the first of them). */
  seqs: number[];
  /** How many events the span has. */
  event_count: number;
}

/** The parsed seconds of recent event times: a run's events fall in few seconds. */
const seconds = new Map<string, number>();

/** Microseconds since the epoch of an event time. */
export function micros(time: string): number {
  const second = time.slice(0, 19);
  let base = seconds.get(second);
  if (base === undefined) {
    if (seconds.size >= 4096) seconds.clear();
    seconds.set(second, base = Date.parse(second + "Z"));
  }
  // After the seconds: nothing, or a dot and digits; then the Z.
  const frac = time.charCodeAt(19) === 46 ? time.slice(20, Math.min(26, time.length - 1)) : "";
  return base * 1000 + Number(frac.padEnd(6, "0"));
}

/**
 * The spans of the run's trace: its root, one per step, and each span an agent program sent the run (`received`),
 * nested by their parents.
 */
export function spansOf(
  events: readonly EvidenceEvent[],
  shown: ReadonlyMap<number, EventItem>,
  options: { running: boolean; received?: readonly ReceivedView[] },
): ViewSpan[] {
  const { running } = options;
  if (events.length === 0) return [];
  const t0 = micros(events[0]!.time);
  const end = running
    ? Math.max(micros(events.at(-1)!.time), Date.now() * 1000)
    : micros(events.at(-1)!.time);
  const rootId = events[0]!.span_id ?? "root";
  const spans = new Map<string, ViewSpan>();
  const failed = feedStatus(events.at(-1)) !== "completed" && !running;
  const created = shown.get(events[0]!.seq)?.data ?? {};
  spans.set(rootId, {
    trace_id: events[0]!.trace_id,
    span_id: rootId,
    parent_span_id: null,
    name: `run ${typeof created.agent === "string" ? created.agent : ""}`.trim(),
    start_us: 0,
    end_us: end - t0,
    depth: 0,
    status: running ? "running" : failed ? "error" : "ok",
    seqs: [],
    event_count: 0,
  });
  const backend = typeof created.backend === "string" ? created.backend : null;
  for (const e of events) {
    const id = e.span_id ?? rootId;
    let span = spans.get(id);
    if (!span) {
      span = {
        trace_id: e.trace_id,
        span_id: id,
        parent_span_id: e.parent_span_id ?? rootId,
        name: "",
        start_us: micros(e.started_at ?? e.time) - t0,
        end_us: micros(e.time) - t0,
        depth: 0,
        status: "ok",
        seqs: [],
        event_count: 0,
      };
      spans.set(id, span);
    } else if (id !== rootId) {
      span.end_us = Math.max(span.end_us, micros(e.time) - t0);
      if (e.started_at !== null) span.start_us = Math.min(span.start_us, micros(e.started_at) - t0);
    }
    if (id !== rootId) {
      // A step is named by the event that ends it (a program's step ends with sandbox_completed after its
      // hooks), and a program's own span by its name and times.
      span.name = nameOf(e, shown.get(e.seq)?.data ?? {}, { backend, was: span.name });
      if (e.type === "span_recorded" && typeof e.data.end_time === "string") {
        span.end_us = micros(e.data.end_time) - t0;
      }
    }
    if (id !== rootId) span.status = worse(span.status, statusOf(e));
    span.seqs.push(e.seq);
    span.event_count++;
  }
  addReceived(spans, { received: options.received ?? [], t0 });
  return nested(spans, rootId);
}

/** The spans a program sent, each under its own parent (a step's span, or another of its spans). */
function addReceived(
  spans: Map<string, ViewSpan>,
  options: { received: readonly ReceivedView[]; t0: number },
): void {
  for (const r of options.received) {
    if (spans.has(r.span_id)) continue; // a step's span is the evidence's own; a span sent twice shows once
    spans.set(r.span_id, {
      trace_id: r.trace_id,
      span_id: r.span_id,
      parent_span_id: r.parent_span_id,
      name: r.name,
      start_us: r.start_us - options.t0,
      end_us: Math.max(r.start_us, r.end_us) - options.t0,
      depth: 0,
      status: r.failed ? "error" : "ok",
      seqs: [r.seq],
      event_count: 1,
    });
  }
}

const RANK: Record<ViewSpan["status"], number> = { ok: 0, running: 1, refused: 2, error: 3 };

function worse(a: ViewSpan["status"], b: ViewSpan["status"]): ViewSpan["status"] {
  return RANK[b] > RANK[a] ? b : a;
}

/** An event's status, from its type and the fixed words of its data: statuses show at every level. */
function statusOf(e: EvidenceEvent): ViewSpan["status"] {
  if (e.type === "step_failed" || e.type === "run_failed") return "error";
  if (e.type === "tool_called" && e.data.error !== null && e.data.error !== undefined) return "error";
  if (e.type === "span_recorded" && (e.data.status as { code?: unknown } | undefined)?.code === 2) {
    return "error";
  }
  if (e.type === "access_denied" || (e.type === "hook_called" && e.data.decision === "deny")) {
    return "refused";
  }
  return "ok";
}

/** A step's name from one of its events; an event that only observes a step keeps the name it has. */
function nameOf(
  e: EvidenceEvent,
  data: { [key: string]: Json },
  context: { backend: string | null; was: string },
): string {
  if (e.type === "span_recorded") return typeof data.name === "string" ? data.name : "span";
  if (e.type === "sandbox_completed" && context.was.startsWith("hook_called")) {
    return `invoke_agent ${context.backend ?? "program"}`;
  }
  if (
    context.was !== "" && (e.type === "hook_called" || e.type === "trace_imported" || e.type === "note_added")
  ) {
    return context.was;
  }
  const label = [data.model, data.tool, data.name].find((v) => typeof v === "string");
  return label ? `${stepName(e)} ${label}` : stepName(e);
}

/**
 * The spans depth first, each parent before its children, siblings by start, each with its depth (at most
 * 50). Linear in the spans, and without recursion: a run of thousands of steps may be one parent with
 * thousands of children, or a chain thousands deep.
 */
function nested(spans: ReadonlyMap<string, ViewSpan>, rootId: string): ViewSpan[] {
  const children = new Map<string | null, ViewSpan[]>();
  for (const span of spans.values()) {
    const key = span.span_id === rootId
      ? null
      : (spans.has(span.parent_span_id ?? "") ? span.parent_span_id : rootId);
    const siblings = children.get(key);
    if (siblings) siblings.push(span);
    else children.set(key, [span]);
  }
  for (const siblings of children.values()) siblings.sort((a, b) => b.start_us - a.start_us);
  const ordered: ViewSpan[] = [];
  const placed = new Set<ViewSpan>();
  const todo: { span: ViewSpan; depth: number }[] = (children.get(null) ?? []).map((span) => ({
    span,
    depth: 0,
  }));
  while (todo.length > 0) {
    const { span, depth } = todo.pop()!;
    if (placed.has(span)) continue;
    placed.add(span);
    span.depth = Math.min(depth, 50);
    ordered.push(span);
    for (const child of children.get(span.span_id) ?? []) todo.push({ span: child, depth: depth + 1 });
  }
  // Spans whose parents name each other in a circle reach no root: they are shown under it, not left out.
  const left = [...spans.values()].filter((span) => !placed.has(span)).sort((a, b) =>
    a.start_us - b.start_us
  );
  for (const span of left) ordered.push(Object.assign(span, { depth: 1 }));
  return ordered;
}

/** The GenAI name of a step's span from its event. */
function stepName(e: EvidenceEvent): string {
  const step = e.type === "step_failed" && typeof e.data.step === "string" ? e.data.step : e.type;
  if (step === "model_called") return "chat";
  if (step === "tool_called") return "execute_tool";
  return step;
}

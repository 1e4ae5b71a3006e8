/**
 * The trace of a run's copy: the root span from `run_created` to the run's end, a span for each step with its
 * events, and each library span (`span_recorded`) that the policy lets feed the destination, all cut to the
 * level. A span whose parent is not in the copy hangs under the root.
 * @module
 */
import type { EvidenceEvent, Json } from "../evidence/event.ts";
import { plainName, plainSpanName } from "../telemetry/plain_name.ts";
import { bodyAttributes, cutAttributes, stepOf } from "./_copy_steps.ts";
import { RUN_ID_TAG } from "./copy_tags.ts";

/** One span of the copy's trace, with times in nanoseconds since the epoch. */
export interface CopySpan {
  spanId: string;
  parentSpanId: string | null;
  name: string;
  /** The OpenTelemetry span kind (0 unspecified … 5 consumer). */
  kind: number;
  startNanos: bigint;
  endNanos: bigint;
  /** 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string };
  attributes: Record<string, Json>;
  events: { name: string; timeNanos: bigint; attributes: Record<string, Json> }[];
}

/** What the spans of a copy are made with. */
export interface SpanMaking {
  /** The level's rank: 0 names, 1 usage, 2 bodies. */
  rank: number;
  runId: string;
  /** A payload as JSON (a text when it is not JSON), or undefined when the digest names none. */
  payload: (digest: unknown) => Promise<Json | undefined>;
}

/** What {@linkcode copyTrace} needs besides the events. */
export interface TraceMaking extends SpanMaking {
  /** Whether the run failed (its root span's status). */
  failed: boolean;
  /** Whether the policy lets a library's spans feed the destination. */
  feeds: (library: string) => boolean;
}

/**
 * The trace of a sealed run's copy: its root span, and every span under it in the order they first appear.
 *
 * @param events The run's events, verified; the first is `run_created` with a trace and a span ID.
 * @param making The level's rank, the run, its payloads, whether it failed, and the policy's word on libraries.
 * @returns The root, the spans by ID, and the spans in order (the root first).
 * @example
 * ```ts
 * import { copyTrace } from "./copy_trace.ts";
 * // const { root, order } = await copyTrace(events, { rank: 1, runId, failed: false, payload, feeds });
 * ```
 */
export async function copyTrace(
  events: readonly EvidenceEvent[],
  making: TraceMaking,
): Promise<{ root: CopySpan; spans: Map<string, CopySpan>; order: CopySpan[] }> {
  const root = await rootSpan(events, making);
  return { root, ...await traceSpans(events, root, making) };
}

/**
 * The root span's input, as MLflow's viewer shows it well: the prompt the agent was given (the text of
 * `prompt_rendered`) and the run's settings (`run_created`'s data), as JSON. Not the run file: MLflow renders a
 * text input as Markdown, so the YAML's `#` comments became headings.
 */
async function rootInput(
  events: readonly EvidenceEvent[],
  payload: (digest: unknown) => Promise<Json | undefined>,
): Promise<Json> {
  const rendered = events.find((e) => e.type === "prompt_rendered");
  const prompt = rendered ? await payload(rendered.payload) : undefined;
  return { prompt: prompt ?? null, settings: events[0]!.data };
}

/** The spans of the trace under its root: each step's, and each library span the policy lets through. */
async function traceSpans(
  events: readonly EvidenceEvent[],
  root: CopySpan,
  making: TraceMaking,
): Promise<{ spans: Map<string, CopySpan>; order: CopySpan[] }> {
  const { rank, runId, payload } = making;
  const rootId = root.spanId;
  const created = events[0]!;
  const spans = new Map<string, CopySpan>([[rootId, root]]);
  const order: CopySpan[] = [root];
  for (const e of events) {
    if (e.type === "span_recorded") {
      const span = await librarySpan(e, making);
      if (span !== null && !spans.has(span.spanId)) {
        spans.set(span.spanId, span);
        order.push(span);
      }
      continue;
    }
    const ownSpan = e.span_id !== null && (e.span_id !== rootId || e.started_at !== null);
    if (!ownSpan || e.span_id === rootId) {
      if (rank === 2 && e.seq !== created.seq) {
        root.events.push({
          name: e.type,
          timeNanos: nanos(e.time),
          attributes: bodyAttributes(e),
        });
      }
      continue;
    }
    const spanId = e.span_id!;
    let span = spans.get(spanId);
    if (span === undefined) {
      span = {
        spanId,
        parentSpanId: e.parent_span_id ?? rootId,
        name: "",
        kind: 0,
        startNanos: nanos(e.started_at ?? e.time),
        endNanos: nanos(e.time),
        status: { code: 1, message: "" },
        attributes: {},
        events: [],
      };
      spans.set(spanId, span);
      order.push(span);
    }
    const start = nanos(e.started_at ?? e.time), end = nanos(e.time);
    if (start < span.startNanos) span.startNanos = start;
    if (end > span.endNanos) span.endNanos = end;
    await addStep(span, e, { rank, runId, payload });
  }
  for (const span of order) if (span.endNanos < span.startNanos) span.endNanos = span.startNanos;
  // A span whose parent is not in the copy (a library span the policy keeps out) hangs under the root.
  for (const span of order) {
    if (span.parentSpanId !== null && !spans.has(span.parentSpanId)) span.parentSpanId = rootId;
  }
  return { spans, order };
}

/** The run's root span, from `run_created` to the last event, with its input and output at `bodies`. */
async function rootSpan(
  events: readonly EvidenceEvent[],
  making: TraceMaking,
): Promise<CopySpan> {
  const { rank, runId, failed } = making;
  const created = events[0]!;
  const root: CopySpan = {
    spanId: created.span_id!,
    parentSpanId: null,
    name: "",
    kind: 0,
    startNanos: nanos(created.started_at ?? created.time),
    endNanos: nanos(events[events.length - 1]!.time),
    status: failed ? { code: 2, message: "" } : { code: 1, message: "" },
    attributes: {},
    events: [],
  };
  const agent = typeof created.data.agent === "string" ? created.data.agent : null;
  const model = typeof created.data.model === "string" ? created.data.model : null;
  const rootName = agent === null ? "invoke_agent" : `invoke_agent ${agent}`;
  root.name = rank === 2 || plainSpanName(rootName) ? rootName : "invoke_agent";
  const rootAttributes: Record<string, Json> = {
    [RUN_ID_TAG]: runId,
    "mlflow.spanType": JSON.stringify("AGENT"),
    "gen_ai.operation.name": "invoke_agent",
  };
  if (agent !== null) rootAttributes["gen_ai.agent.name"] = agent;
  if (model !== null) rootAttributes["gen_ai.request.model"] = model;
  root.attributes = cutAttributes(rootAttributes, rank);
  if (rank === 2) {
    root.attributes["mlflow.spanInputs"] = JSON.stringify(await rootInput(events, making.payload));
    const end = events.find((e) => e.type === "run_completed" || e.type === "run_failed");
    if (end) root.attributes["mlflow.spanOutputs"] = JSON.stringify(end.data);
  }
  return root;
}

/** Adds one event of a step to its span: a failure, or the step's name, attributes and bodies. */
async function addStep(span: CopySpan, e: EvidenceEvent, making: SpanMaking): Promise<void> {
  const { rank, runId, payload } = making;
  const end = nanos(e.time);
  if (e.type === "step_failed") {
    span.status = { code: 2, message: "" };
    const error = typeof e.data.error === "string" ? e.data.error : null;
    if (error !== null && (rank === 2 || plainName(error))) span.attributes["error.type"] = error;
    if (rank === 2) {
      span.events.push({ name: "step_failed", timeNanos: end, attributes: bodyAttributes(e) });
    }
    return;
  }
  const step = stepOf(e);
  span.name = rank === 2 || plainSpanName(step.name, { declared: step.declared }) ? step.name : step.label;
  Object.assign(span.attributes, cutAttributes({ [RUN_ID_TAG]: runId, ...step.attributes }, rank));
  if (step.failed) span.status = { code: 2, message: "" };
  if (rank === 2) {
    Object.assign(span.attributes, bodyAttributes(e));
    const inputs = await payload(e.payload);
    if (inputs !== undefined) span.attributes["mlflow.spanInputs"] = JSON.stringify(inputs);
    const outputs = await payload(e.data.response_payload ?? e.data.result_payload);
    if (outputs !== undefined) span.attributes["mlflow.spanOutputs"] = JSON.stringify(outputs);
  }
}

/** A library's span (`span_recorded`), when the policy lets its library feed the destination. */
async function librarySpan(e: EvidenceEvent, making: TraceMaking): Promise<CopySpan | null> {
  const { rank, payload } = making;
  const d = e.data;
  const library = typeof d.library === "string" ? d.library : null;
  if (library === null || !making.feeds(library)) return null;
  if (e.span_id === null) return null;
  const end = typeof d.end_time === "string" ? d.end_time : e.time;
  const status = typeof d.status === "object" && d.status !== null && !Array.isArray(d.status)
    ? d.status
    : {};
  const name = typeof d.name === "string" ? d.name : "span";
  const body = rank === 2 ? await payload(e.payload) : undefined;
  const bodyObject = typeof body === "object" && body !== null && !Array.isArray(body) ? body : {};
  const fullName = typeof bodyObject.name === "string" ? bodyObject.name : name;
  const span: CopySpan = {
    spanId: e.span_id,
    parentSpanId: e.parent_span_id,
    name: rank === 2 ? fullName : plainSpanName(name) ? name : library,
    kind: typeof d.kind === "number" ? d.kind : 0,
    startNanos: nanos(e.started_at ?? e.time),
    endNanos: nanos(end),
    status: {
      code: typeof status.code === "number" ? status.code : 0,
      message: rank === 2
        ? String(bodyObject.status_message ?? status.message ?? "")
        : typeof status.message === "string" && plainName(status.message)
        ? status.message
        : "",
    },
    attributes: {},
    events: [],
  };
  const attributes = typeof d.attributes === "object" && d.attributes !== null && !Array.isArray(d.attributes)
    ? d.attributes
    : {};
  span.attributes = cutAttributes(attributes, rank);
  span.attributes[RUN_ID_TAG] = e.run_id;
  if (rank === 2) {
    const more = bodyObject.attributes;
    if (typeof more === "object" && more !== null && !Array.isArray(more)) {
      Object.assign(span.attributes, more);
    }
    const spanEvents = Array.isArray(bodyObject.events) ? bodyObject.events : [];
    for (const ev of spanEvents) {
      if (typeof ev !== "object" || ev === null || Array.isArray(ev)) continue;
      const attrs =
        typeof ev.attributes === "object" && ev.attributes !== null && !Array.isArray(ev.attributes)
          ? ev.attributes
          : {};
      span.events.push({
        name: typeof ev.name === "string" ? ev.name : "event",
        timeNanos: typeof ev.time === "string" ? nanos(ev.time) : span.startNanos,
        attributes: attrs,
      });
    }
  }
  return span;
}

/** Nanoseconds since the epoch of an RFC 3339 UTC time with up to nine fraction digits. */
export function nanos(time: string): bigint {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z$/.exec(time);
  if (!m) throw new TypeError(`"${time}" is not a UTC RFC 3339 time`);
  const seconds = BigInt(Date.parse(`${m[1]}Z`) / 1000);
  return seconds * 1_000_000_000n + BigInt((m[2] ?? "").padEnd(9, "0"));
}

/**
 * One OTLP/HTTP trace request for one run: the rules of the span receiver, shared by `receiver()` (one run, in
 * the run's process) and `prove serve` (a daemon for many runs). A span belongs to the run because the request
 * reached that run's address, never because of a run ID the program wrote. Each span becomes a `span_recorded`
 * event (confidence `parsed`) and a span row; spans for a run that is sealed or not open are refused with 409
 * and an OTLP error body; a body that is not a trace request gets 400, and a body over the size limit (as sent or
 * unpacked), a request of too many spans, or a run past its limits ({@linkcode RunBudget}) gets 413, each with a
 * `telemetry_problem` event for the run. Who may send is the caller's to check first (`receiver_guard.ts`).
 * @module
 */
import protobuf from "protobufjs";
import type { EventInit } from "../evidence/chain.ts";
import { EvidenceError } from "../evidence/errors.ts";
import { formatMicros, type Json } from "../evidence/event.ts";
import type { StoredSpan } from "../evidence/spans_file.ts";
import { attributeLevel } from "../telemetry/attributes.ts";
import { problemData } from "../telemetry/telemetry_events.ts";
import { plainName, plainSpanName } from "../telemetry/plain_name.ts";
import { decodeTraceRequest, type OtlpValue, type ReceivedSpan } from "./otlp_receiver.ts";
import { decodeTraceJson, OtlpBodyError } from "./otlp_json.ts";
import { canonicalAttributes, canonicalData, type SpanData } from "./span_lines.ts";
import { BodyTooLarge, readSpanBody } from "./span_body.ts";
import type { RunBudget } from "./run_budget.ts";

/**
 * The run a receiver writes to: the run's recorder in provrun has this shape. `record` appends one event to
 * the run's chain (in the order the calls are made); `payload` stores a payload by hash.
 */
export interface ReceiverRun {
  /** The run's ID. */
  readonly runId: string;
  /** True once the run is sealed: no span may arrive after. */
  readonly sealed: boolean;
  /** Appends one event to the run's chain. */
  record(init: Omit<EventInit, "actor">): Promise<unknown>;
  /** Appends several events to the run's chain, in order, at once (optional: else `record` one by one). */
  recordMany?(inits: readonly Omit<EventInit, "actor">[]): Promise<unknown>;
  /** Stores a payload; returns its SHA-256. */
  payload(content: unknown): Promise<string | null>;
}

/** Where span rows go: a store's `addSpans`, when it has one. */
export interface SpanRows {
  addSpans?(runId: string, spans: readonly StoredSpan[]): Promise<void>;
}

/** The default body size limit, as sent and after gzip is undone: 16 MiB. */
export const DEFAULT_MAX_BODY = 16 * 1024 * 1024;

/** The default limit of spans in one request: 16,384 (an OTLP exporter sends 512 at a time). */
export const DEFAULT_MAX_REQUEST_SPANS = 16_384;

/** The component name of the receiver's events. */
export const RECEIVER_COMPONENT = "SpanReceiver";

const STATUS_ROOT = protobuf.parse(
  `syntax = "proto3"; package rpc; message Status { int32 code = 1; string message = 2; }
   message PartialSuccess { int64 rejected_spans = 1; string error_message = 2; }
   message ExportTraceServiceResponse { PartialSuccess partial_success = 1; }`,
  { keepCase: true },
).root;
const STATUS = STATUS_ROOT.lookupType("rpc.Status");
const OK_RESPONSE = STATUS_ROOT.lookupType("rpc.ExportTraceServiceResponse");

/** gRPC status codes the OTLP error body carries. */
const CODES = {
  400: 3,
  401: 16,
  403: 7,
  404: 5,
  405: 12,
  409: 9,
  413: 8,
  415: 3,
  421: 3,
  503: 14,
} as Record<number, number>;

function isJson(contentType: string | null): boolean {
  return (contentType ?? "").split(";")[0]!.trim().toLowerCase() === "application/json";
}

/**
 * An OTLP error response: a `google.rpc.Status` in the request's encoding (protobuf unless it sent JSON), as
 * the OTLP/HTTP specification asks of a failed export.
 *
 * @param status The HTTP status.
 * @param message One line that says what is wrong and what to do.
 * @param contentType The request's content type, to answer in the same encoding.
 * @returns The response.
 */
export function otlpError(status: number, message: string, contentType: string | null): Response {
  const code = CODES[status] ?? 2;
  if (isJson(contentType)) {
    return Response.json({ code, message }, { status });
  }
  const body = STATUS.encode(STATUS.create({ code, message })).finish();
  return new Response(new Uint8Array(body), {
    status,
    headers: { "content-type": "application/x-protobuf" },
  });
}

function otlpOk(contentType: string | null): Response {
  if (isJson(contentType)) return Response.json({});
  const body = OK_RESPONSE.encode(OK_RESPONSE.create({})).finish();
  return new Response(new Uint8Array(body), { headers: { "content-type": "application/x-protobuf" } });
}

function decode(body: Uint8Array, contentType: string | null): ReceivedSpan[] {
  if (isJson(contentType)) return decodeTraceJson(new TextDecoder("utf-8", { fatal: false }).decode(body));
  let spans: ReceivedSpan[];
  try {
    spans = decodeTraceRequest(body);
  } catch (error) {
    throw new OtlpBodyError(`not an ExportTraceServiceRequest: ${(error as Error).message}`);
  }
  // The decoder writes IDs as lowercase hex, two digits a byte: their length is all there is to check.
  for (const s of spans) {
    if (s.traceId.length !== 32 || s.spanId.length !== 16) {
      throw new OtlpBodyError(
        `a span has a trace ID of ${s.traceId.length / 2} bytes or a span ID of ${
          s.spanId.length / 2
        } bytes (16 and 8 are needed)`,
      );
    }
    if (s.parentSpanId !== null && s.parentSpanId.length !== 16) {
      throw new OtlpBodyError("a span's parent span ID is not 8 bytes");
    }
  }
  return spans;
}

const DIGITS = /^[0-9]+$/;
let lastSecond = "";
let lastPrefix = "";

/** A time in nanoseconds as RFC 3339 UTC with microseconds, as `formatMicros` writes it. */
function nanoTime(nanos: string): string {
  const n = nanos.length;
  // The usual case: whole seconds that a double holds exactly (under 9e18 ns), the microseconds sliced out.
  if (n >= 10 && (n < 19 || (n === 19 && nanos.charCodeAt(0) < 57)) && DIGITS.test(nanos)) {
    const second = nanos.slice(0, n - 9);
    if (second !== lastSecond) {
      lastPrefix = formatMicros(Number(second) * 1_000_000).slice(0, 20); // "YYYY-MM-DDThh:mm:ss."
      lastSecond = second;
    }
    // joined, not added: one flat text (see PlainNames)
    return [lastPrefix, nanos.slice(n - 9, n - 3), "Z"].join("");
  }
  let micros: number;
  if (/^[0-9]{4,19}$/.test(nanos)) micros = Number(nanos.slice(0, -3)); // the usual case, without a BigInt
  else {
    try {
      micros = Number(BigInt(nanos) / 1000n);
    } catch {
      micros = 0;
    }
  }
  return formatMicros(Number.isFinite(micros) ? micros : 0);
}

/** Sets a key, so that a key named `__proto__` is data, not the object's prototype. */
function put(target: { [key: string]: Json }, key: string, value: Json): void {
  if (key === "__proto__") {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else target[key] = value;
}

/** An OTLP value as JSON: bytes become base64 text. */
function json(value: OtlpValue): Json {
  if (value instanceof Uint8Array) return btoa(String.fromCharCode(...value));
  if (Array.isArray(value)) return value.map(json);
  if (value !== null && typeof value === "object") {
    const out: { [key: string]: Json } = {};
    for (const k in value) {
      if (!Object.hasOwn(value, k)) continue;
      const v = json(value[k]!);
      // A key named `__proto__` is data, not the object's prototype.
      if (k === "__proto__") {
        Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
      } else out[k] = v;
    }
    return out;
  }
  return typeof value === "number" && !Number.isFinite(value) ? String(value) : value;
}

function jsonRecord(values: Record<string, OtlpValue>): { [key: string]: Json } {
  return json(values) as { [key: string]: Json };
}

/**
 * A received span as a span row: OTLP's span kind (1 internal … 5 consumer) becomes OpenTelemetry's (0 … 4), and
 * times become RFC 3339 UTC with microseconds. The row keeps names and usage only; bodies stay in the payload.
 *
 * @param span A decoded span.
 * @returns The row.
 */
export function receivedRow(span: ReceivedSpan): StoredSpan {
  return splitRow(span, plainNames()).row;
}

/**
 * The texts of one request that go in its rows and events, each judged once (names repeat): whether a text is a
 * plain name or a plain span name, and one flat copy of it. The decoder builds its texts by concatenation, and
 * `JSON.stringify` writes an object that holds such a text (a V8 cons string) at about half its speed, twice
 * for each span (its row and its event): the copy is flat, and one per request serves every span.
 */
interface PlainNames {
  /** A text, and its flat copy when it is a plain name, else null. */
  names: Map<string, string | null>;
  /** The same for span names. */
  spans: Map<string, string | null>;
  /** Any text, and its flat copy. */
  texts: Map<string, string>;
}

function plainNames(): PlainNames {
  return { names: new Map(), spans: new Map(), texts: new Map() };
}

/** A flat copy of a text: the same characters in one piece. */
function flatCopy(text: string): string {
  return text.length < 13 ? text : JSON.parse(JSON.stringify(text)) as string; // V8 joins under 13 characters
}

/** The text, as one flat copy per request. */
function flatText(text: string, plain: PlainNames): string {
  let copy = plain.texts.get(text);
  if (copy === undefined) plain.texts.set(text, copy = flatCopy(text));
  return copy;
}

/** The text (a flat copy) when it is a plain name, else null. */
function plainNameOf(text: string, plain: PlainNames): string | null {
  let copy = plain.names.get(text);
  if (copy === undefined) plain.names.set(text, copy = plainName(text) ? flatCopy(text) : null);
  return copy;
}

/** The text (a flat copy) when it is a plain span name, else null. */
function plainSpanNameOf(text: string, plain: PlainNames): string | null {
  let copy = plain.spans.get(text);
  if (copy === undefined) plain.spans.set(text, copy = plainSpanName(text) ? flatCopy(text) : null);
  return copy;
}

/** The row and the body of a span; `plain` remembers the names of one request, which repeat. */
function splitRow(
  span: ReceivedSpan,
  plain: PlainNames,
): { row: StoredSpan; body: { [key: string]: Json } | null; canonical: boolean } {
  // splitBody(jsonRecord(span.attributes)) in one pass: each value made JSON, then kept or put in the body
  let kept: { [key: string]: Json } = {};
  let body: { [key: string]: Json } | null = null;
  const values = span.attributes;
  for (const key in values) {
    if (!Object.hasOwn(values, key)) continue;
    const value = json(values[key]!);
    if (attributeLevel(key, value) === "bodies") put(body ??= {}, key, value);
    else put(kept, key, typeof value === "string" ? flatText(value, plain) : value);
  }
  kept = sortedKeys(kept);
  const row: StoredSpan = {
    trace_id: span.traceId,
    span_id: span.spanId,
    parent_span_id: span.parentSpanId,
    name: plainSpanNameOf(span.name, plain) ?? "span",
    kind: Math.max(0, span.kind - 1),
    scope: {
      name: flatText(span.scope.name, plain),
      version: span.scope.version ? flatText(span.scope.version, plain) : null,
    },
    start_time: nanoTime(span.startTimeUnixNano),
    end_time: nanoTime(span.endTimeUnixNano),
    status: {
      code: span.status.code,
      message: plainNameOf(span.status.message, plain),
    },
    attributes: kept,
    events: [],
    links: span.links.map((l) => ({ trace_id: l.traceId, span_id: l.spanId })),
  };
  return { row, body, canonical: canonicalAttributes(kept) };
}

/** The same object with its keys in order (the order of a canonical line). */
function sortedKeys(o: { [key: string]: Json }): { [key: string]: Json } {
  const keys = Object.keys(o);
  for (let i = 1; i < keys.length; i++) {
    if (!(keys[i - 1]! < keys[i]!)) {
      return Object.fromEntries(keys.sort().map((k) => [k, o[k]!])) as { [key: string]: Json };
    }
  }
  return o;
}

/** What the intake did with a request, for a caller that counts (`prove serve`, tests). */
export interface IntakeResult {
  status: number;
  spans: number;
}

/** Options of {@linkcode takeTraces}. */
export interface IntakeOptions {
  /** The body size limit in bytes, as sent and after gzip; {@linkcode DEFAULT_MAX_BODY} by default. */
  maxBytes?: number;
  /** The most spans one request may hold; {@linkcode DEFAULT_MAX_REQUEST_SPANS} by default. */
  maxSpans?: number;
  /** Called with what was done. */
  onResult?: (result: IntakeResult) => void;
}

/** The run a request reached: its recorder, where its span rows go, and what it may still send. */
export interface IntakeTarget {
  run: ReceiverRun;
  rows: SpanRows;
  /** The run's budget; none means no limit but the request's own. */
  budget?: RunBudget;
}

/** The spans of a request, or the refusal to answer with (and write as the run's problem). */
async function spansOf(
  request: Request,
  contentType: string | null,
  { target, options }: { target: IntakeTarget; options: IntakeOptions },
): Promise<{ spans: ReceivedSpan[] } | { status: number; message: string; always?: boolean }> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BODY;
  const maxSpans = options.maxSpans ?? DEFAULT_MAX_REQUEST_SPANS;
  let body: Uint8Array;
  let spans: ReceivedSpan[];
  try {
    body = await readSpanBody(request, maxBytes);
    spans = decode(body, contentType);
  } catch (error) {
    if (error instanceof BodyTooLarge) return { status: 413, message: error.message };
    const message = error instanceof Error ? error.message : String(error);
    return { status: 400, message: message.split("\n")[0]!.slice(0, 500) };
  }
  if (spans.length > maxSpans) {
    return {
      status: 413,
      message:
        `the request holds ${spans.length} spans, over the receiver's limit of ${maxSpans} a request; ` +
        `send smaller batches (OTEL_BSP_MAX_EXPORT_BATCH_SIZE)`,
    };
  }
  const fresh = target.budget?.over === null;
  const over = target.budget?.take(spans.length, body.byteLength) ?? null;
  // the request that passes the run's limit is told, past the limit of problems too; the ones after are not
  if (over !== null) return { status: 413, message: `run ${target.run.runId}: ${over}`, always: fresh };
  return { spans };
}

/**
 * Takes one `POST /v1/traces` request for one run: decodes it, writes each span as a `span_recorded` event and
 * a span row, and answers as OTLP/HTTP asks. The caller has matched the path and checked who sent it.
 *
 * @param request The HTTP request.
 * @param target The run, its store's span rows and its budget, or null when the address names no open run.
 * @param options The size limits.
 * @returns The response: 200, or 400, 405, 409, 413, 415, 503 with an OTLP error body.
 */
export async function takeTraces(
  request: Request,
  target: IntakeTarget | null,
  options: IntakeOptions = {},
): Promise<Response> {
  const contentType = request.headers.get("content-type");
  const answer = (status: number, message: string, spans = 0) => {
    options.onResult?.({ status, spans });
    return otlpError(status, message, contentType);
  };
  if (request.method !== "POST") {
    await request.body?.cancel().catch(() => {});
    return answer(405, "send spans with POST to /v1/traces");
  }
  if (target === null || target.run.sealed) {
    await request.body?.cancel().catch(() => {});
    return answer(
      409,
      target === null
        ? "no open run takes spans at this address; a run's receiver takes spans only while the run is open"
        : `run ${target.run.runId} is sealed; it takes no more spans`,
    );
  }
  const { run } = target;
  const type = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/x-protobuf" && type !== "application/json") {
    await request.body?.cancel().catch(() => {});
    const message = "send application/x-protobuf or application/json";
    await refusalProblem(target, `the span receiver refused a request: ${message}`);
    return answer(415, message);
  }
  const taken = await spansOf(request, contentType, { target, options });
  if (!("spans" in taken)) {
    await refusalProblem(target, `the span receiver refused a body: ${taken.message}`, taken.always);
    return answer(taken.status, taken.message);
  }
  const { spans } = taken;
  try {
    await recordSpans(spans, target);
  } catch (error) {
    if (run.sealed) return answer(409, `run ${run.runId} is sealed; it takes no more spans`);
    if (!(error instanceof EvidenceError)) {
      // spans no evidence line can hold: nothing of them was written, and sending them again will not help
      const message = `the span receiver refused spans it cannot record: ${(error as Error).message}`
        .split("\n")[0]!.slice(0, 500);
      await refusalProblem(target, message);
      return answer(400, message);
    }
    return answer(
      503,
      `the run's evidence cannot take the spans: ${(error as Error).message}`.split("\n")[0]!,
    );
  }
  options.onResult?.({ status: 200, spans: spans.length });
  return otlpOk(contentType);
}

/** Writes a request's spans: their rows, their payloads, and their events, in the order of the request. */
async function recordSpans(spans: ReceivedSpan[], { run, rows }: IntakeTarget): Promise<void> {
  const plain = plainNames();
  const split = spans.map((s) => splitRow(s, plain));
  // The rows are an index beside the evidence: written while the events are made, and before them, so that
  // a request whose rows fail (503, which the exporter sends again) leaves no events behind.
  const rowsWritten = rows.addSpans?.(run.runId, split.map((s) => s.row));
  rowsWritten?.catch(() => {});
  // Spans of one request often share a payload (their resource, and nothing else): store it once. The
  // events of the request are written together, in the order of the request.
  const seen: Seen = { plain, payloads: new Map() };
  const payloads = spans.map((span, i) => payloadOf(span, split[i]!, seen));
  for (const { byHead } of seen.payloads.values()) {
    for (const payload of byHead.values()) payload.sha256 = await run.payload(payload.content);
  }
  const inits = spans.map((span, i) => spanEvent(span, split[i]!, payloads[i]!.sha256 ?? null, seen));
  await rowsWritten;
  if (run.recordMany) await run.recordMany(inits);
  else for (const init of inits) await run.record(init);
}

/**
 * Writes a refusal as the run's `telemetry_problem`, while its budget allows: past its limit of problems, one
 * last problem says that the rest are counted only.
 */
async function refusalProblem({ run, budget }: IntakeTarget, text: string, always = false): Promise<void> {
  const may = always ? "write" : budget?.problem() ?? "write";
  if (may === "skip") return;
  const line = may === "last"
    ? `${text.slice(0, 400)} (the receiver's limit of ${
      budget!.limits.maxProblems
    } problems a run is reached: ` +
      `further refusals are counted, not written)`
    : text.slice(0, 500);
  try {
    await run.record({ type: "telemetry_problem", component: RECEIVER_COMPONENT, data: problemData(line) });
  } catch { /* a sealed or broken run: the answer still says it */ }
}

/** A payload of a request: its text, and its SHA-256 once stored. */
interface Payload {
  content: string;
  sha256?: string | null;
}

/**
 * What one request's spans share: which names are plain, and the payloads, by resource and by the text before
 * the resource (spans of one resource share its object, and most share all of their payload).
 */
interface Seen {
  plain: PlainNames;
  payloads: Map<Record<string, OtlpValue>, { resource: string; byHead: Map<string, Payload> }>;
}

/** A span's payload: found among those of the request, else added (its resource made JSON once). */
function payloadOf(
  span: ReceivedSpan,
  split: { row: StoredSpan; body: { [key: string]: Json } | null },
  seen: Seen,
): Payload {
  let of = seen.payloads.get(span.resource);
  if (of === undefined) {
    seen.payloads.set(
      span.resource,
      of = { resource: JSON.stringify(jsonRecord(span.resource)), byHead: new Map() },
    );
  }
  const head = payloadHead(span, split);
  let payload = of.byHead.get(head);
  if (payload === undefined) of.byHead.set(head, payload = { content: `${head}"resource":${of.resource}}` });
  return payload;
}

/**
 * What of a span is not a name goes in its payload: bodies, span events, links, a name or status message that is
 * free text, and the resource. The payload's text up to its resource, written key by key as JSON.stringify would
 * write the object of these keys, in this order (the resource comes last).
 */
function payloadHead(
  span: ReceivedSpan,
  { row, body }: { row: StoredSpan; body: { [key: string]: Json } | null },
): string {
  let content = "{";
  if (row.name !== span.name) content += `"name":${JSON.stringify(span.name)},`;
  if (row.status.message !== span.status.message && span.status.message !== "") {
    content += `"status_message":${JSON.stringify(span.status.message)},`;
  }
  if (body !== null) content += `"attributes":${JSON.stringify(body)},`;
  if (span.events.length) {
    content += `"events":${
      JSON.stringify(span.events.map((e) => ({
        name: e.name,
        time: nanoTime(e.timeUnixNano),
        attributes: jsonRecord(e.attributes),
      })))
    },`;
  }
  if (span.links.length) {
    content += `"links":${
      JSON.stringify(span.links.map((l) => ({
        trace_id: l.traceId,
        span_id: l.spanId,
        attributes: jsonRecord(l.attributes),
      })))
    },`;
  }
  return content;
}

/** The `span_recorded` event of a span, with its payload stored. */
function spanEvent(
  span: ReceivedSpan,
  { row, canonical }: { row: StoredSpan; canonical: boolean },
  payload: string | null,
  seen: Seen,
): Omit<EventInit, "actor"> {
  const service = span.resource["service.name"];
  // in the order of the canonical line
  const data: SpanData = {
    attributes: row.attributes,
    end_time: row.end_time,
    kind: row.kind,
    library: null,
    name: row.name,
    scope: row.scope.name,
    service: typeof service === "string" ? plainNameOf(service, seen.plain) : null,
    source: "receiver",
    status: row.status,
    version: row.scope.version,
  };
  return {
    type: "span_recorded",
    component: RECEIVER_COMPONENT,
    confidence: "parsed",
    trace_id: row.trace_id,
    span_id: row.span_id,
    parent_span_id: row.parent_span_id,
    started_at: row.start_time,
    payload,
    data,
    dataCanonical: canonicalData(data, canonical),
  };
}

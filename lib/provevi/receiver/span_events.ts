/**
 * What a received span becomes: a span row (names and usage only), a payload (what is not a name: bodies, span
 * events, links, free text, the resource) and a `span_recorded` event (confidence `parsed`) that names the
 * payload. The spans of one request are made together: their names repeat and their payloads are often one.
 * @module
 */
import type { EventInit } from "../evidence/chain.ts";
import { formatMicros, type Json } from "../evidence/event.ts";
import type { StoredSpan } from "../evidence/spans_file.ts";
import { attributeLevel } from "../telemetry/attributes.ts";
import { plainName, plainSpanName } from "../telemetry/plain_name.ts";
import type { OtlpValue, ReceivedSpan } from "./otlp_receiver.ts";
import { canonicalAttributes, canonicalData, type SpanData } from "./span_lines.ts";

/** The component name of the receiver's events. */
export const RECEIVER_COMPONENT = "SpanReceiver";

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

/** A request's spans made into rows, payloads and events. */
export interface RequestRecords {
  /** The span rows, in the order of the request. */
  rows: StoredSpan[];
  /** The request's distinct payloads: store each, and set its `sha256`, before {@linkcode events}. */
  payloads(): Payload[];
  /** The `span_recorded` events, in the order of the request, naming the payloads stored. */
  events(): Omit<EventInit, "actor">[];
}

/**
 * Makes a request's spans into rows, payloads and events.
 *
 * @param spans The request's decoded spans.
 * @returns Their rows at once; their payloads and events on demand, in that order.
 */
export function requestRecords(spans: readonly ReceivedSpan[]): RequestRecords {
  const plain = plainNames();
  const split = spans.map((s) => splitRow(s, plain));
  const seen: Seen = { plain, payloads: new Map() };
  let each: Payload[] = [];
  return {
    rows: split.map((s) => s.row),
    payloads() {
      each = spans.map((span, i) => payloadOf(span, split[i]!, seen));
      return [...seen.payloads.values()].flatMap(({ byHead }) => [...byHead.values()]);
    },
    events() {
      return spans.map((span, i) => spanEvent(span, split[i]!, each[i]?.sha256 ?? null, seen));
    },
  };
}

/** A payload of a request: its text, and its SHA-256 once stored. */
export interface Payload {
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

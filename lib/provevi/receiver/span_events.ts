/**
 * What a request of received spans becomes: a span row for each span (names and usage only, in the run's span
 * index), and one `spans_received` event (confidence `parsed`) whose payload is the request's body as the program
 * sent it (gzip undone): every span, its bodies, events, links and resource, byte for byte. The spans of one
 * request are made together: their names repeat.
 * @module
 */
import type { EventInit } from "../evidence/chain.ts";
import { formatMicros, type Json } from "../evidence/event.ts";
import type { StoredSpan } from "../evidence/spans_file.ts";
import { attributeLevel, NAME_KEYS, USAGE_KEYS } from "../telemetry/attributes.ts";
import { plainName, plainSpanName } from "../telemetry/plain_name.ts";
import type { OtlpValue, ReceivedSpan } from "./otlp_receiver.ts";

/** The component name of the receiver's events. */
export const RECEIVER_COMPONENT = "SpanReceiver";

/** The event type of a batch of received spans: one request's body, as its payload. */
export const SPANS_RECEIVED = "spans_received";

const DIGITS = /^[0-9]+$/;
let lastSecond = "";
/** The character codes of the last second's time, "YYYY-MM-DDThh:mm:ss.", then six digits and `Z` to fill. */
let timeCodes: number[] = [];

/**
 * A time in nanoseconds as RFC 3339 UTC with microseconds, as `formatMicros` writes it.
 *
 * @param nanos The nanoseconds since the epoch, as decimal text.
 * @returns The time.
 */
export function nanoTime(nanos: string): string {
  const n = nanos.length;
  // The usual case: whole seconds that a double holds exactly (under 9e18 ns), the microseconds sliced out.
  if (n >= 10 && (n < 19 || (n === 19 && nanos.charCodeAt(0) < 57)) && DIGITS.test(nanos)) {
    const second = nanos.slice(0, n - 9);
    if (second !== lastSecond) {
      const prefix = formatMicros(Number(second) * 1_000_000).slice(0, 20); // "YYYY-MM-DDThh:mm:ss."
      timeCodes = Array.from(prefix + "000000Z", (c) => c.charCodeAt(0));
      lastSecond = second;
    }
    // made from its codes, not added: one flat text (see PlainNames), and at a third less than a join costs
    const at = timeCodes.length - 7;
    for (let i = 0; i < 6; i++) timeCodes[at + i] = nanos.charCodeAt(n - 9 + i);
    return String.fromCharCode.apply(null, timeCodes);
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

const hasOwn = Object.prototype.hasOwnProperty;

/** Sets a key, so that a key named `__proto__` is data, not the object's prototype. */
function put(target: { [key: string]: Json }, key: string, value: Json): void {
  if (key === "__proto__") {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else target[key] = value;
}

/**
 * An OTLP value as JSON: bytes become base64 text, a number that is not finite its text.
 *
 * @param value The value.
 * @returns Its JSON.
 */
export function json(value: OtlpValue): Json {
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

/**
 * A received span as a span row: OTLP's span kind (1 internal … 5 consumer) becomes OpenTelemetry's (0 … 4), and
 * times become RFC 3339 UTC with microseconds. The row keeps names and usage only; bodies stay in the payload.
 *
 * @param span A decoded span.
 * @returns The row.
 */
export function receivedRow(span: ReceivedSpan): StoredSpan {
  return splitRow(span, plainNames());
}

/**
 * The texts of one request that go in its rows and events, each judged once (names repeat): whether a text is a
 * plain name or a plain span name, and one flat copy of it. `JSON.stringify` writes an object that holds a text
 * made by concatenation (a V8 cons string) at about half its speed: the copy is flat, and one per request serves
 * every span. The decoders' own texts are flat already (TextDecoder, `String.fromCharCode`, `JSON.parse`), so
 * attribute values go to the row as they are.
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

/**
 * The attributes a span row keeps of a span's: names and usage, each made JSON, in the order of their keys.
 *
 * @param values The span's attributes.
 * @returns The kept ones.
 */
export function rowAttributes(values: Readonly<Record<string, OtlpValue>>): { [key: string]: Json } {
  // each value made JSON, then kept unless it is a body (the body stays in the batch's payload, the request)
  const kept: { [key: string]: Json } = {};
  for (const key in values) {
    if (!hasOwn.call(values, key)) continue;
    // a key provevi does not know is a body whatever it holds: it is not made JSON only to be left out
    if (!NAME_KEYS.has(key) && !USAGE_KEYS.has(key)) continue;
    const value = json(values[key]!);
    if (attributeLevel(key, value) === "bodies") continue;
    // the decoders' texts are flat already (TextDecoder, String.fromCharCode, JSON.parse)
    put(kept, key, value);
  }
  return sortedKeys(kept);
}

/** The row of a span; `plain` remembers the names of one request, which repeat. */
function splitRow(span: ReceivedSpan, plain: PlainNames): StoredSpan {
  const kept = rowAttributes(span.attributes);
  return {
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

/** The encodings of a request body, as `spans_received` names them. */
export type BatchEncoding = "protobuf" | "json";

/**
 * A request's spans made into rows (their names and usage) and the `spans_received` event of the batch: the
 * request's body, as received with gzip undone, is the event's payload, so the evidence holds every span exactly
 * as the program sent it, with one payload and one event for the request.
 *
 * @param spans The request's decoded spans.
 * @param options The body's encoding, and when the receiver took it.
 * @returns The rows, and the event to write once the body is stored (its `payload` to be set).
 */
export function requestRecords(
  spans: readonly ReceivedSpan[],
  options: { encoding: BatchEncoding; time?: string },
): { rows: StoredSpan[]; event: Omit<EventInit, "actor"> } {
  const plain = plainNames();
  const rows = spans.map((s) => splitRow(s, plain));
  return { rows, event: batchEvent(servicesOf(spans, plain), { ...options, spans: spans.length }) };
}

/**
 * The plain names of the services that sent spans (their resources' `service.name`), each once: what a
 * `spans_received` event names.
 *
 * @param spans The request's spans.
 * @param plain The names made plain so far (a request's, shared with its rows).
 * @returns The names.
 */
export function servicesOf(spans: readonly ReceivedSpan[], plain = plainNames()): Set<string> {
  const services = new Set<string>();
  for (const span of spans) {
    const service = span.resource["service.name"];
    const name = typeof service === "string" ? plainNameOf(service, plain) : null;
    if (name !== null) services.add(name);
  }
  return services;
}

/**
 * The `spans_received` event of a request, its `payload` to be set once the body is stored.
 *
 * @param services The plain names of the services that sent its spans.
 * @param options The body's encoding, its spans, and when the receiver took it.
 * @returns The event.
 */
export function batchEvent(
  services: Iterable<string>,
  options: { encoding: BatchEncoding; spans: number; time?: string },
): Omit<EventInit, "actor"> {
  const event: Omit<EventInit, "actor"> = {
    type: SPANS_RECEIVED,
    component: RECEIVER_COMPONENT,
    confidence: "parsed",
    data: { encoding: options.encoding, services: [...services].sort(), spans: options.spans },
    payload: null,
  };
  if (options.time !== undefined) event.time = options.time;
  return event;
}

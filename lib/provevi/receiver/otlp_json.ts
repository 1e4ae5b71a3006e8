/**
 * The OTLP/JSON trace body (`application/json` on `/v1/traces`): the same `ExportTraceServiceRequest` as the
 * protobuf body, written as the OTLP specification's JSON mapping (lowerCamelCase keys, trace and span IDs as
 * hex, 64-bit integers as decimal texts or numbers, enums as integers).
 * @module
 */
import type { OtlpValue, ReceivedSpan } from "./otlp_receiver.ts";

/** A body that is not an OTLP trace request; the message says what is wrong, and where. */
export class OtlpBodyError extends Error {
  override name = "OtlpBodyError";
}

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

function obj(v: unknown, where: string): Obj {
  if (v === undefined || v === null) return {};
  if (typeof v !== "object" || Array.isArray(v)) throw new OtlpBodyError(`${where} is not an object`);
  return v as Obj;
}

function list(v: unknown, where: string): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new OtlpBodyError(`${where} is not a list`);
  return v;
}

function field(o: Obj, camel: string, snake: string): unknown {
  return o[camel] ?? o[snake];
}

function text(v: unknown, where: string): string {
  if (v === undefined || v === null) return "";
  if (typeof v !== "string") throw new OtlpBodyError(`${where} is not a text`);
  return v;
}

function nanos(v: unknown, where: string): string {
  if (v === undefined || v === null) return "0";
  // A time past 2^53 ns written as a JSON number has lost its last digits already; it is taken as it reads.
  if (typeof v === "number" && Number.isInteger(v) && v >= 0) return BigInt(v).toString();
  if (typeof v === "string" && /^\d{1,20}$/.test(v)) return v.replace(/^0+(?=\d)/, "");
  throw new OtlpBodyError(`${where} is not a time in nanoseconds`);
}

function int(v: unknown, where: string): number {
  if (v === undefined || v === null) return 0;
  if (typeof v === "number" && Number.isInteger(v)) return v;
  throw new OtlpBodyError(`${where} is not an integer`);
}

/**
 * Checks an ID as OTLP/JSON writes it: lowercase or uppercase hex of the given number of bytes.
 * @returns The ID in lowercase, or "" for an absent one.
 */
export function hexId(v: unknown, bytes: number, where: string): string {
  if (v === undefined || v === null || v === "") return "";
  if (typeof v !== "string" || !new RegExp(`^[0-9a-fA-F]{${bytes * 2}}$`).test(v)) {
    throw new OtlpBodyError(`${where} is not ${bytes * 2} hex digits`);
  }
  return v.toLowerCase();
}

function base64(v: string, where: string): Uint8Array {
  try {
    return Uint8Array.from(atob(v), (c) => c.charCodeAt(0));
  } catch {
    throw new OtlpBodyError(`${where} is not base64`);
  }
}

function anyValue(v: unknown, where: string, depth: number): OtlpValue {
  if (depth > 32) throw new OtlpBodyError(`${where} nests more than 32 deep`);
  const o = obj(v, where);
  if ("stringValue" in o) return text(o.stringValue, where);
  if ("boolValue" in o) {
    if (typeof o.boolValue !== "boolean") throw new OtlpBodyError(`${where}.boolValue is not true or false`);
    return o.boolValue;
  }
  if ("intValue" in o) {
    const n = o.intValue;
    if (typeof n === "number" && Number.isInteger(n)) return n;
    if (typeof n === "string" && /^-?\d{1,20}$/.test(n)) {
      const x = Number(n);
      return Number.isSafeInteger(x) ? x : n;
    }
    throw new OtlpBodyError(`${where}.intValue is not an integer`);
  }
  if ("doubleValue" in o) {
    const d = o.doubleValue;
    if (typeof d === "number") return d;
    if (d === "NaN" || d === "Infinity" || d === "-Infinity") return Number(d);
    throw new OtlpBodyError(`${where}.doubleValue is not a number`);
  }
  if ("arrayValue" in o) {
    return list(obj(o.arrayValue, where).values, `${where}.arrayValue.values`)
      .map((x, i) => anyValue(x, `${where}.arrayValue.values[${i}]`, depth + 1));
  }
  if ("kvlistValue" in o) {
    return keyValues(obj(o.kvlistValue, where).values, `${where}.kvlistValue.values`, depth + 1);
  }
  if ("bytesValue" in o) return base64(text(o.bytesValue, where), `${where}.bytesValue`);
  return null;
}

function keyValues(v: unknown, where: string, depth = 0): Record<string, OtlpValue> {
  const out: Record<string, OtlpValue> = {};
  list(v, where).forEach((kv, i) => {
    const o = obj(kv, `${where}[${i}]`);
    Object.defineProperty(out, text(o.key, `${where}[${i}].key`), {
      value: anyValue(o.value, `${where}[${i}].value`, depth),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  });
  return out;
}

/** True when every string of a JSON value, and every key, is well-formed UTF-16. */
function wellFormed(value: unknown): boolean {
  if (typeof value === "string") return value.isWellFormed();
  if (Array.isArray(value)) return value.every(wellFormed);
  if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) if (!k.isWellFormed() || !wellFormed(v)) return false;
  }
  return true;
}

/**
 * Decodes an OTLP/JSON trace export body into spans.
 *
 * @param body The request's text.
 * @returns The spans, in the order of the request.
 * @throws OtlpBodyError when the text is not JSON or not an `ExportTraceServiceRequest`.
 * @example
 * ```ts
 * import { decodeTraceJson } from "./otlp_json.ts";
 * decodeTraceJson('{"resourceSpans":[]}'); // []
 * ```
 */
export function decodeTraceJson(body: string): ReceivedSpan[] {
  let root: unknown;
  try {
    root = JSON.parse(body);
  } catch (error) {
    throw new OtlpBodyError(`the body is not JSON: ${(error as Error).message}`);
  }
  // JSON can escape half of a UTF-16 pair ("\ud800"), which no evidence line may hold: such a body is refused
  // whole, before anything of it is written. (Protobuf's strings are UTF-8, decoded with replacement.)
  if (/\\u[dD][89abAB]|\\u[dD][c-fC-F]/.test(body) && !wellFormed(root)) {
    throw new OtlpBodyError("the body holds a lone UTF-16 surrogate (half of a character) in a string");
  }
  const spans: ReceivedSpan[] = [];
  const top = obj(root, "the body");
  list(field(top, "resourceSpans", "resource_spans"), "resourceSpans").forEach((rsv, r) => {
    const rs = obj(rsv, `resourceSpans[${r}]`);
    const resource = keyValues(
      obj(rs.resource, "resource").attributes,
      `resourceSpans[${r}].resource.attributes`,
    );
    list(field(rs, "scopeSpans", "scope_spans"), `resourceSpans[${r}].scopeSpans`).forEach((ssv, s) => {
      const at = `resourceSpans[${r}].scopeSpans[${s}]`;
      const ss = obj(ssv, at);
      const sc = obj(ss.scope, `${at}.scope`);
      const scope = {
        name: text(sc.name, `${at}.scope.name`),
        version: text(sc.version, `${at}.scope.version`),
      };
      list(ss.spans, `${at}.spans`).forEach((spv, k) => {
        const w = `${at}.spans[${k}]`;
        const sp = obj(spv, w);
        const traceId = hexId(field(sp, "traceId", "trace_id"), 16, `${w}.traceId`);
        const spanId = hexId(field(sp, "spanId", "span_id"), 8, `${w}.spanId`);
        if (!traceId || !spanId) throw new OtlpBodyError(`${w} has no traceId or spanId`);
        const parent = hexId(field(sp, "parentSpanId", "parent_span_id"), 8, `${w}.parentSpanId`);
        const status = obj(sp.status, `${w}.status`);
        spans.push({
          traceId,
          spanId,
          parentSpanId: parent === "" ? null : parent,
          name: text(sp.name, `${w}.name`),
          kind: int(sp.kind, `${w}.kind`),
          startTimeUnixNano: nanos(
            field(sp, "startTimeUnixNano", "start_time_unix_nano"),
            `${w}.startTimeUnixNano`,
          ),
          endTimeUnixNano: nanos(field(sp, "endTimeUnixNano", "end_time_unix_nano"), `${w}.endTimeUnixNano`),
          attributes: keyValues(sp.attributes, `${w}.attributes`),
          events: list(sp.events, `${w}.events`).map((ev, e) => {
            const o = obj(ev, `${w}.events[${e}]`);
            return {
              name: text(o.name, `${w}.events[${e}].name`),
              timeUnixNano: nanos(
                field(o, "timeUnixNano", "time_unix_nano"),
                `${w}.events[${e}].timeUnixNano`,
              ),
              attributes: keyValues(o.attributes, `${w}.events[${e}].attributes`),
            };
          }),
          links: list(sp.links, `${w}.links`).map((lv, l) => {
            const o = obj(lv, `${w}.links[${l}]`);
            return {
              traceId: hexId(field(o, "traceId", "trace_id"), 16, `${w}.links[${l}].traceId`),
              spanId: hexId(field(o, "spanId", "span_id"), 8, `${w}.links[${l}].spanId`),
              attributes: keyValues(o.attributes, `${w}.links[${l}].attributes`),
            };
          }),
          status: {
            code: int(status.code, `${w}.status.code`),
            message: text(status.message, `${w}.status.message`),
          },
          scope,
          resource,
        });
      });
    });
  });
  return spans;
}

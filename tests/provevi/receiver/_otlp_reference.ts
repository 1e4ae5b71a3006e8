/**
 * The reference for the wire decoder's tests and its fuzzer: protobufjs's reading of an OTLP trace body (the
 * receiver's decoder before the wire decoder), and a body that holds every kind of value.
 * @module
 */
import type { OtlpValue, ReceivedSpan } from "../../../lib/provevi/receiver/otlp_wire.ts";
import { OTLP_TRACE_REQUEST } from "../../../lib/provevi/telemetry/otlp_proto.ts";

/** The receiver's decoder before the wire decoder: protobufjs's message, made a plain object, made spans. */
export function protobufjsSpans(body: Uint8Array): ReceivedSpan[] {
  const hex = (b: Uint8Array | undefined) =>
    b ? Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("") : "";
  // deno-lint-ignore no-explicit-any
  const value = (v: any): OtlpValue => {
    if (v === undefined) return null;
    if (v.string_value !== undefined) return v.string_value;
    if (v.bool_value !== undefined) return v.bool_value;
    if (v.int_value !== undefined) {
      const n = Number(v.int_value);
      return Number.isSafeInteger(n) ? n : v.int_value;
    }
    if (v.double_value !== undefined) return v.double_value;
    if (v.array_value !== undefined) return (v.array_value.values ?? []).map(value);
    if (v.kvlist_value !== undefined) return attrs(v.kvlist_value.values);
    if (v.bytes_value !== undefined) return new Uint8Array(v.bytes_value);
    return null;
  };
  // deno-lint-ignore no-explicit-any
  const attrs = (list: any[] | undefined): Record<string, OtlpValue> => {
    const out: Record<string, OtlpValue> = {};
    for (const kv of list ?? []) {
      Object.defineProperty(out, kv.key ?? "", {
        value: value(kv.value),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  };
  const message = OTLP_TRACE_REQUEST.toObject(OTLP_TRACE_REQUEST.decode(body), {
    longs: String,
    arrays: true,
    defaults: false,
  });
  const spans: ReceivedSpan[] = [];
  // deno-lint-ignore no-explicit-any
  for (const rs of message.resource_spans as any[]) {
    const resource = attrs(rs.resource?.attributes);
    // deno-lint-ignore no-explicit-any
    for (const ss of rs.scope_spans as any[]) {
      const scope = { name: ss.scope?.name ?? "", version: ss.scope?.version ?? "" };
      // deno-lint-ignore no-explicit-any
      for (const s of ss.spans as any[]) {
        const parent = hex(s.parent_span_id);
        spans.push({
          traceId: hex(s.trace_id),
          spanId: hex(s.span_id),
          parentSpanId: parent === "" ? null : parent,
          name: s.name ?? "",
          kind: s.kind ?? 0,
          startTimeUnixNano: s.start_time_unix_nano ?? "0",
          endTimeUnixNano: s.end_time_unix_nano ?? "0",
          attributes: attrs(s.attributes),
          // deno-lint-ignore no-explicit-any
          events: s.events.map((e: any) => ({
            name: e.name ?? "",
            timeUnixNano: e.time_unix_nano ?? "0",
            attributes: attrs(e.attributes),
          })),
          // deno-lint-ignore no-explicit-any
          links: s.links.map((l: any) => ({
            traceId: hex(l.trace_id),
            spanId: hex(l.span_id),
            attributes: attrs(l.attributes),
          })),
          status: { code: s.status?.code ?? 0, message: s.status?.message ?? "" },
          scope,
          resource,
        });
      }
    }
  }
  return spans;
}

/** A request with every kind of value OTLP carries, written by protobufjs from the OTLP schema. */
export function everyKindOfValue(): Uint8Array {
  const v = (value: Record<string, unknown>) => value;
  return OTLP_TRACE_REQUEST.encode(OTLP_TRACE_REQUEST.fromObject({
    resource_spans: [{
      resource: { attributes: [{ key: "service.name", value: v({ string_value: "agent ünïcode" }) }] },
      scope_spans: [{
        scope: { name: "s", version: "9" },
        spans: [{
          trace_id: new Uint8Array(16).fill(0xab),
          span_id: new Uint8Array(8).fill(0x01),
          parent_span_id: new Uint8Array(8).fill(0xfe),
          name: "chat x".repeat(20),
          kind: 3,
          start_time_unix_nano: "1764590400123456789",
          end_time_unix_nano: "18446744073709551615",
          attributes: [
            { key: "big", value: v({ int_value: "9223372036854775807" }) },
            { key: "negative", value: v({ int_value: "-5" }) },
            { key: "min", value: v({ int_value: "-9223372036854775808" }) },
            { key: "safe", value: v({ int_value: "9007199254740991" }) },
            { key: "d", value: v({ double_value: -0.25 }) },
            { key: "no", value: v({ bool_value: false }) },
            { key: "empty", value: v({ string_value: "" }) },
            { key: "none", value: v({}) },
            { key: "bytes", value: v({ bytes_value: new Uint8Array([0, 255, 7]) }) },
            {
              key: "list",
              value: v({ array_value: { values: [{ string_value: "a" }, { int_value: "2" }] } }),
            },
            {
              key: "map",
              value: v({ kvlist_value: { values: [{ key: "k", value: { bool_value: true } }] } }),
            },
            { key: "__proto__", value: v({ string_value: "data, not a prototype" }) },
            { key: "long", value: v({ string_value: "x".repeat(200) }) },
            { key: "big", value: v({ int_value: "1" }) },
          ],
          events: [{ time_unix_nano: "5", name: "exception", attributes: [{ key: "t", value: v({}) }] }],
          links: [{ trace_id: new Uint8Array(16), span_id: new Uint8Array(8).fill(9), attributes: [] }],
          status: { code: 2, message: "Boom" },
        }, { name: "bare" }],
      }, { spans: [{ trace_id: new Uint8Array(16).fill(1), span_id: new Uint8Array(8).fill(2), kind: -1 }] }],
    }, {}],
  })).finish();
}

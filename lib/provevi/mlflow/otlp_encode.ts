/**
 * Encodes the copy's spans as an OTLP/HTTP `ExportTraceServiceRequest` protobuf body, the form MLflow's trace
 * endpoint (`/v1/traces`) takes. The schema is the part of the OTLP specification's `trace.proto`,
 * `common.proto` and `resource.proto` that a request needs, by its field numbers.
 * @module
 */
import protobuf from "protobufjs";
import type { Json } from "../evidence/event.ts";
import type { CopySpan } from "./copy_content.ts";

const SCHEMA = `
syntax = "proto3";
package otlp;
message AnyValue {
  oneof value {
    string string_value = 1;
    bool bool_value = 2;
    int64 int_value = 3;
    double double_value = 4;
    ArrayValue array_value = 5;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message InstrumentationScope { string name = 1; string version = 2; }
message Resource { repeated KeyValue attributes = 1; }
message Status { string message = 2; int32 code = 3; }
message Event { fixed64 time_unix_nano = 1; string name = 2; repeated KeyValue attributes = 3; }
message Span {
  bytes trace_id = 1;
  bytes span_id = 2;
  bytes parent_span_id = 4;
  string name = 5;
  int32 kind = 6;
  fixed64 start_time_unix_nano = 7;
  fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9;
  repeated Event events = 11;
  Status status = 15;
}
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
`;

const REQUEST = protobuf.parse(SCHEMA, { keepCase: true }).root.lookupType("otlp.ExportTraceServiceRequest");

function hexBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

function anyValue(value: Json, depth = 0): Record<string, unknown> {
  if (typeof value === "string") return { string_value: value };
  if (typeof value === "boolean") return { bool_value: value };
  if (typeof value === "number") {
    return Number.isSafeInteger(value) ? { int_value: value } : { double_value: value };
  }
  if (Array.isArray(value) && depth === 0) {
    return { array_value: { values: value.map((v) => anyValue(v, 1)) } };
  }
  return { string_value: JSON.stringify(value) };
}

function keyValues(attributes: Record<string, Json>): Record<string, unknown>[] {
  return Object.entries(attributes).map(([key, value]) => ({ key, value: anyValue(value) }));
}

/** protobufjs writes a fixed64 from a Long-like `{ low, high }`; a bigint does not fit its types. */
function fixed64(n: bigint): { low: number; high: number; unsigned: boolean } {
  return { low: Number(n & 0xffffffffn) | 0, high: Number((n >> 32n) & 0xffffffffn) | 0, unsigned: true };
}

/**
 * The protobuf body of an OTLP trace export of the spans of one trace.
 *
 * @param traceId The trace ID, 32 hex digits.
 * @param spans The spans.
 * @param options `service`: the resource's `service.name`; `scope`: the instrumentation scope's name.
 * @returns The body, for `Content-Type: application/x-protobuf`.
 * @example
 * ```ts
 * import { encodeTraceRequest } from "./otlp_encode.ts";
 * const body = encodeTraceRequest("0123456789abcdef0123456789abcdef", []);
 * ```
 */
export function encodeTraceRequest(
  traceId: string,
  spans: readonly CopySpan[],
  options: { service?: string; scope?: string } = {},
): Uint8Array {
  const trace = hexBytes(traceId);
  const message = REQUEST.fromObject({
    resource_spans: [{
      resource: { attributes: keyValues({ "service.name": options.service ?? "provevi" }) },
      scope_spans: [{
        scope: { name: options.scope ?? "provevi.mlflow", version: "" },
        spans: spans.map((s) => ({
          trace_id: trace,
          span_id: hexBytes(s.spanId),
          parent_span_id: s.parentSpanId === null ? new Uint8Array() : hexBytes(s.parentSpanId),
          name: s.name,
          kind: s.kind,
          start_time_unix_nano: fixed64(s.startNanos),
          end_time_unix_nano: fixed64(s.endNanos),
          attributes: keyValues(s.attributes),
          events: s.events.map((e) => ({
            time_unix_nano: fixed64(e.timeNanos),
            name: e.name,
            attributes: keyValues(e.attributes),
          })),
          status: { code: s.status.code, message: s.status.message },
        })),
      }],
    }],
  });
  return REQUEST.encode(message).finish();
}

/**
 * Encodes the copy's spans as an OTLP/HTTP `ExportTraceServiceRequest` protobuf body, the form MLflow's trace
 * endpoint (`/v1/traces`) takes. The schema is the one the span
 * receiver decodes with (`telemetry/otlp_proto.ts`).
 * @module
 */
import { OTLP_TRACE_REQUEST } from "../telemetry/otlp_proto.ts";
import { DOUBLE_KEYS } from "../telemetry/genai_conventions.ts";
import type { Json } from "../evidence/event.ts";
import type { CopySpan } from "./copy_trace.ts";

const REQUEST = OTLP_TRACE_REQUEST;

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
  // an attribute the GenAI conventions type as double stays one when whole (a temperature of 0 is 0.0)
  return Object.entries(attributes).map(([key, value]) => ({
    key,
    value: typeof value === "number" && DOUBLE_KEYS.has(key) ? { double_value: value } : anyValue(value),
  }));
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

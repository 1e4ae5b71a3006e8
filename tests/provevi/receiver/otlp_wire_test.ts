import assert from "node:assert/strict";
import { SpanStatusCode } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { decodeTraceRequest } from "../../../lib/provevi/receiver/otlp_receiver.ts";
import type { OtlpValue } from "../../../lib/provevi/receiver/otlp_wire.ts";
import { OTLP_TRACE_REQUEST } from "../../../lib/provevi/telemetry/otlp_proto.ts";
import { decodeTraceJson } from "../../../lib/provevi/receiver/otlp_json.ts";
import { everyKindOfValue, protobufjsSpans } from "./_otlp_reference.ts";

Deno.test("the wire decoder reads every kind of OTLP value as the protobufjs decoder did", () => {
  const body = everyKindOfValue();
  const spans = decodeTraceRequest(body);
  assert.deepEqual(spans, protobufjsSpans(body));
  assert.equal(spans.length, 3);
  assert.equal(spans[0]!.attributes.big, 1); // a later key of the same name wins
  assert.equal(spans[0]!.attributes.min, "-9223372036854775808");
  assert.equal(spans[0]!.endTimeUnixNano, "18446744073709551615");
  assert.equal(Object.getPrototypeOf(spans[0]!.attributes), Object.prototype);
  assert.equal(spans[2]!.kind, -1);
});

Deno.test("the wire decoder reads what the OpenTelemetry SDK sends as the protobufjs decoder did", () => {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });
  const tracer = provider.getTracer("claude_code", "2.1.332");
  for (let i = 0; i < 64; i++) {
    const span = tracer.startSpan(i % 2 ? "claude_code.llm_request" : "claude_code.tool", {
      attributes: { "gen_ai.usage.input_tokens": 1000 + i, "tool.name": "Read", list: ["a", "b"], f: 0.5 },
    });
    span.addEvent("e", { n: i });
    if (i % 5 === 0) span.setStatus({ code: SpanStatusCode.ERROR, message: `failed ${i}` });
    span.end();
  }
  const body = ProtobufTraceSerializer.serializeRequest(memory.getFinishedSpans())!;
  assert.deepEqual(decodeTraceRequest(body), protobufjsSpans(body));
});

Deno.test("the wire decoder refuses bodies that are not well-formed protobuf, with an Error that says where", () => {
  const body = everyKindOfValue();
  for (
    const bad of [
      body.subarray(0, body.length - 3), // cut
      new Uint8Array([0x0a, 0xff]), // a length past the end
      new Uint8Array([0x0a, 0x02, 0x08]), // a field cut inside its message
      new Uint8Array([0x08, 0x01]), // resource_spans as a varint
      new Uint8Array(Array(11).fill(0xff)), // a varint of 11 bytes
      new Uint8Array([0x0b, 0x10, 0x01]), // a group that never closes
      new Uint8Array([0x07]), // wire type 7
      new Uint8Array([0x00]), // field 0
    ]
  ) {
    assert.throws(() => decodeTraceRequest(bad), (e: Error) => /at byte \d+ of \d+/.test(e.message));
  }
  // unknown fields of every wire type are skipped
  const unknown = new Uint8Array([
    0x78,
    0x05,
    0x79,
    1,
    2,
    3,
    4,
    5,
    6,
    7,
    8,
    0x7d,
    1,
    2,
    3,
    4,
    0x7a,
    0x01,
    0x00,
  ]);
  assert.deepEqual(decodeTraceRequest(unknown), []);
});

Deno.test("the wire decoder never fails on a mutated body with anything but an Error", () => {
  const body = everyKindOfValue();
  let seed = 7;
  // Math.imul keeps the low 32 bits exact, where a plain product past 2 ** 53 loses them and the draws repeat.
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  for (let round = 0; round < 2000; round++) {
    const copy = body.slice();
    for (let k = 0; k < 3; k++) copy[Math.floor(next() * copy.length)] = Math.floor(next() * 256);
    try {
      decodeTraceRequest(copy.subarray(0, Math.floor(next() * copy.length) + 1));
    } catch (error) {
      assert.ok(error instanceof Error && !(error instanceof TypeError), String(error));
    }
  }
});

Deno.test("the wire decoder refuses an attribute nested more than 32 lists deep, as the OTLP/JSON decoder does, and reads one of 32", () => {
  const nested = (depth: number): Record<string, unknown> =>
    depth === 0 ? { string_value: "leaf" } : { array_value: { values: [nested(depth - 1)] } };
  const body = (depth: number) =>
    OTLP_TRACE_REQUEST.encode(OTLP_TRACE_REQUEST.fromObject({
      resource_spans: [{
        scope_spans: [{
          spans: [{
            trace_id: new Uint8Array(16).fill(1),
            span_id: new Uint8Array(8).fill(2),
            attributes: [{ key: "deep", value: nested(depth) }],
          }],
        }],
      }],
    })).finish();
  let leaf = decodeTraceRequest(body(32))[0]!.attributes.deep;
  for (let i = 0; i < 32; i++) leaf = (leaf as OtlpValue[])[0]!;
  assert.equal(leaf, "leaf");
  assert.throws(() => decodeTraceRequest(body(33)), /nested more than 32 deep at byte/);
  const json = (depth: number): unknown =>
    depth === 0 ? { stringValue: "leaf" } : { arrayValue: { values: [json(depth - 1)] } };
  const jsonBody = (depth: number) =>
    JSON.stringify({
      resourceSpans: [{
        scopeSpans: [{
          spans: [{
            traceId: "01".repeat(16),
            spanId: "02".repeat(8),
            attributes: [{ key: "deep", value: json(depth) }],
          }],
        }],
      }],
    });
  assert.equal(decodeTraceJson(jsonBody(32)).length, 1);
  assert.throws(() => decodeTraceJson(jsonBody(33)), /nests more than 32 deep/);
  // 1,000 lists deep, written by hand (protobufjs will not write one): refused, not a stack overflow
  const field = (tag: number, inner: number[]) => {
    const length: number[] = [];
    for (let n = inner.length;; n >>>= 7) {
      if (n < 0x80) {
        length.push(n);
        break;
      }
      length.push((n & 0x7f) | 0x80);
    }
    return [tag, ...length, ...inner];
  };
  let value: number[] = [];
  for (let i = 0; i < 1000; i++) value = field(0x2a, field(0x0a, value)); // AnyValue.array_value.values
  const span = [
    ...field(0x0a, Array(16).fill(1)),
    ...field(0x12, Array(8).fill(2)),
    ...field(0x4a, field(0x12, value)),
  ];
  const deep = new Uint8Array(field(0x0a, field(0x12, field(0x12, span))));
  assert.throws(() => decodeTraceRequest(deep), /nested more than 32 deep at byte/);
});

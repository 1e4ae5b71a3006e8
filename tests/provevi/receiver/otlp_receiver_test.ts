import assert from "node:assert/strict";
import { ROOT_CONTEXT, SpanStatusCode, trace } from "@opentelemetry/api";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { decodeTraceRequest, OtlpReceiver } from "../../../lib/provevi/receiver/otlp_receiver.ts";

Deno.test("OtlpReceiver decodes what the real OTLP/HTTP protobuf exporter sends", async () => {
  await using receiver = await OtlpReceiver.start();
  const provider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: receiver.tracesUrl }))],
  });
  const tracer = provider.getTracer("provrun", "1.2.3");
  const parent = tracer.startSpan("invoke_agent q");
  const child = tracer.startSpan("chat gpt-4o", {
    attributes: {
      "gen_ai.usage.input_tokens": 14,
      "gen_ai.response.finish_reasons": ["stop"],
      ok: true,
      t: 0.5,
    },
  }, trace.setSpan(ROOT_CONTEXT, parent));
  child.addEvent("exception", { "exception.type": "Boom" });
  child.setStatus({ code: SpanStatusCode.ERROR, message: "Boom" });
  child.end();
  parent.end();
  await provider.shutdown();
  assert.equal(receiver.requests.length, 2);
  assert.deepEqual(receiver.requests[0], { path: "/v1/traces", contentType: "application/x-protobuf" });
  const [c, p] = receiver.spans;
  assert.equal(c!.traceId, parent.spanContext().traceId);
  assert.equal(c!.spanId, child.spanContext().spanId);
  assert.equal(c!.parentSpanId, parent.spanContext().spanId);
  assert.equal(p!.parentSpanId, null);
  assert.deepEqual(c!.attributes, {
    "gen_ai.usage.input_tokens": 14,
    "gen_ai.response.finish_reasons": ["stop"],
    ok: true,
    t: 0.5,
  });
  assert.deepEqual(c!.events.map((e) => [e.name, e.attributes]), [["exception", {
    "exception.type": "Boom",
  }]]);
  assert.deepEqual(c!.status, { code: 2, message: "Boom" });
  assert.deepEqual(c!.scope, { name: "provrun", version: "1.2.3" });
  assert.ok(BigInt(c!.endTimeUnixNano) >= BigInt(c!.startTimeUnixNano));
});

Deno.test("OtlpReceiver refuses what is not protobuf, and counts it", async () => {
  await using receiver = await OtlpReceiver.start();
  const r = await fetch(receiver.tracesUrl, {
    method: "POST",
    body: "{}",
    headers: { "content-type": "text/plain" },
  });
  assert.equal(r.status, 415);
  await r.body?.cancel();
  const bad = await fetch(receiver.tracesUrl, {
    method: "POST",
    body: new Uint8Array([0x0a, 0xff]),
    headers: { "content-type": "application/x-protobuf" },
  });
  assert.equal(bad.status, 400);
  await bad.body?.cancel();
  assert.equal(receiver.requests.length, 2);
  assert.deepEqual(receiver.spans, []);
});

Deno.test("decodeTraceRequest() of an empty request is no spans", () => {
  assert.deepEqual(decodeTraceRequest(new Uint8Array()), []);
});

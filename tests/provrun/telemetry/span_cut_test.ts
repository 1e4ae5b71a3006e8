import assert from "node:assert/strict";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { context, SpanStatusCode, trace } from "@opentelemetry/api";
import { TraceState } from "@opentelemetry/core";
import { cutAttributes, cutName, cutSpan } from "../../../lib/provrun/telemetry/span_cut.ts";

const ATTRIBUTES = {
  "gen_ai.operation.name": "chat",
  "gen_ai.request.model": "openrouter/meta-llama/llama-3-70b",
  "gen_ai.response.id": "https://user:pw@host/x",
  "gen_ai.usage.input_tokens": 14,
  "gen_ai.input.messages_ref": "ab".repeat(32),
  "ai.prompt": "the prompt",
};

Deno.test("cutAttributes() keeps what each level allows, and below bodies only plain names", () => {
  assert.deepEqual(cutAttributes(ATTRIBUTES, "names"), {
    "gen_ai.operation.name": "chat",
    "gen_ai.request.model": "openrouter/meta-llama/llama-3-70b",
  });
  assert.deepEqual(cutAttributes(ATTRIBUTES, "usage"), {
    "gen_ai.operation.name": "chat",
    "gen_ai.request.model": "openrouter/meta-llama/llama-3-70b",
    "gen_ai.usage.input_tokens": 14,
  });
  assert.deepEqual(cutAttributes(ATTRIBUTES, "bodies"), ATTRIBUTES);
});

Deno.test("cutName() keeps a plain span name, else the operation, else span", () => {
  assert.equal(cutName("chat gpt-4o", {}, "names"), "chat gpt-4o");
  assert.equal(
    cutName("read /etc/passwd", { "gen_ai.operation.name": "execute_tool" }, "usage"),
    "execute_tool",
  );
  assert.equal(cutName("read /etc/passwd", {}, "names"), "span");
  assert.equal(cutName("read /etc/passwd", {}, "bodies"), "read /etc/passwd");
});

Deno.test("cutSpan() drops events and a status message that is not a name below bodies; IDs stay", () => {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });
  const span = provider.getTracer("provrun").startSpan("chat x", { attributes: ATTRIBUTES });
  span.addEvent("exception", { "exception.message": "secret text" });
  span.setStatus({ code: SpanStatusCode.ERROR, message: "it failed on /home/ada/.env" });
  span.end();
  const done = memory.getFinishedSpans()[0]!;
  const cut = cutSpan(done, "usage");
  assert.deepEqual(cut.events, []);
  assert.deepEqual(cut.status, { code: SpanStatusCode.ERROR });
  assert.equal(cut.spanContext().spanId, done.spanContext().spanId);
  assert.equal(cutSpan(done, "bodies").events.length, 1);
  assert.equal(cutSpan(done, "bodies").status.message, "it failed on /home/ada/.env");
});

Deno.test("cutSpan() leaves out the trace state of the span and its links below bodies", () => {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });
  const state = new TraceState("vendor=chat the secret prompt");
  const parent = {
    traceId: "0af7651916cd43dd8448eb211c80319c",
    spanId: "b7ad6b7169203331",
    traceFlags: 1,
    isRemote: true,
    traceState: state,
  };
  const span = provider.getTracer("ai").startSpan(
    "chat x",
    { links: [{ context: parent, attributes: { text: "secret" } }] },
    trace.setSpanContext(context.active(), parent),
  );
  span.end();
  const done = memory.getFinishedSpans()[0]!;
  assert.equal(done.spanContext().traceState?.get("vendor"), "chat the secret prompt");
  for (const level of ["names", "usage"] as const) {
    const cut = cutSpan(done, level);
    assert.equal(cut.spanContext().traceState, undefined, level);
    assert.equal(cut.spanContext().spanId, done.spanContext().spanId, level);
    assert.equal(cut.spanContext().traceId, done.spanContext().traceId, level);
    assert.equal(cut.links[0]!.context.traceState, undefined, level);
    assert.equal(cut.links[0]!.context.spanId, parent.spanId, level);
    assert.equal(cut.links[0]!.attributes, undefined, level);
  }
  assert.equal(cutSpan(done, "bodies").spanContext().traceState, state);
});

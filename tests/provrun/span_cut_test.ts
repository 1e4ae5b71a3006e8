import assert from "node:assert/strict";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { SpanStatusCode } from "@opentelemetry/api";
import { cutAttributes, cutName, cutSpan } from "../../lib/provrun/mod.ts";

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

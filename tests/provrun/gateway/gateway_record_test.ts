/**
 * What the gateway records of a call, whole: the events (their fields, data and payloads), and the call's `chat`
 * span (its parent, start, attributes), for a stream that comes in several chunks, a call that does not stream,
 * a provider's error and a stream cut short. The gateway does the call's record work off the way to the
 * program's first token (the request is read and stored, the span's attributes set, once the first chunk went
 * on): these tests hold that the record is still what it was, and that the step still starts when the request
 * arrives, before the provider gets it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { SpanKind } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import type { EvidenceEvent, Json } from "../../../lib/provevi/evidence/event.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { readEventsText } from "../../../lib/provevi/evidence/read_events.ts";
import { FileRunRecord } from "../../../lib/provevi/store/file_run_record.ts";
import { EvidenceRecorder } from "../../../lib/provrun/run/recorder.ts";
import { ModelGateway } from "../../../lib/provrun/gateway/gateway.ts";
import { newRunId } from "../../../lib/provrun/run/run_context.ts";
import { removeWritable } from "../../_files.ts";
import { programHeaders } from "./_gateway.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const MESSAGE = {
  id: "msg_rec",
  type: "message",
  role: "assistant",
  model: "claude-sonnet-4-5-20250929",
  content: [],
  stop_reason: null,
  usage: { input_tokens: 30, output_tokens: 1, cache_read_input_tokens: 5 },
};
const REST = [
  ["content_block_start", {
    type: "content_block_start",
    index: 0,
    content_block: { type: "text", text: "" },
  }],
  ["content_block_delta", {
    type: "content_block_delta",
    index: 0,
    delta: { type: "text_delta", text: "Up 12%." },
  }],
  ["content_block_stop", { type: "content_block_stop", index: 0 }],
  ["message_delta", {
    type: "message_delta",
    delta: { stop_reason: "end_turn", stop_sequence: null },
    usage: { output_tokens: 9 },
  }],
];
const sse = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
const FIRST = sse("message_start", { type: "message_start", message: MESSAGE });
const LATER = REST.map(([name, data]) => sse(name as string, data)).join("");
const LAST = sse("message_stop", { type: "message_stop" });
const REPLY = {
  ...MESSAGE,
  content: [{ type: "text", text: "Up 12%." }],
  stop_reason: "end_turn",
  usage: { ...MESSAGE.usage, output_tokens: 9 },
};
const REQUEST = (stream: boolean) =>
  JSON.stringify({
    model: "claude-sonnet-4-5",
    max_tokens: 256,
    temperature: 0.5,
    stream,
    messages: [{ role: "user", content: "What was the growth?" }],
    tools: [{ name: "Read", description: "Reads a file.", input_schema: { type: "object" } }],
  });

type Mode = "stream" | "whole" | "error" | "cut";

/** A provider whose stream comes in three chunks, 30 ms apart, so that the first goes on alone. */
function provider(mode: Mode, seen: number[]): Deno.HttpServer<Deno.NetAddr> {
  return Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
    seen.push(performance.timeOrigin + performance.now());
    await request.arrayBuffer();
    if (mode === "whole") return Response.json(REPLY);
    if (mode === "error") {
      return Response.json({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }, {
        status: 529,
      });
    }
    const stream = new ReadableStream<Uint8Array>({
      async start(c) {
        c.enqueue(encoder.encode(FIRST));
        await new Promise((r) => setTimeout(r, 30));
        c.enqueue(encoder.encode(LATER));
        await new Promise((r) => setTimeout(r, 30));
        if (mode === "cut") c.error(new Error("the connection dropped"));
        else (c.enqueue(encoder.encode(LAST)), c.close());
      },
    });
    return new Response(stream, { headers: { "content-type": "text/event-stream" } });
  });
}

interface Recorded {
  events: EvidenceEvent[];
  spans: ReadableSpan[];
  root: string;
  /** When the provider got the request (ms since the epoch). */
  reached: number;
  /** What the program read. */
  text: string;
  payload(sha: Json | undefined): Promise<string>;
}

/** One call through a gateway over a run with a root span and a tracer that keeps its spans. */
async function recordOne(mode: Mode): Promise<Recorded> {
  const runs = await Deno.makeTempDir({ prefix: "provrun-gateway-record-" });
  const seen: number[] = [];
  const upstream = provider(mode, seen);
  const exporter = new InMemorySpanExporter();
  const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer(
    "t",
  );
  const writer = await new FileStore({ runs }).openRun(newRunId());
  const recorder = new EvidenceRecorder(writer, { actor: "ada", mode: "strict", tracer });
  const root = recorder.startRoot("invoke_agent test").spanContext().spanId;
  await recorder.record({ type: "run_created", component: "test", data: {} });
  const gateway = ModelGateway.start({
    provider: "anthropic",
    upstream: `http://127.0.0.1:${upstream.addr.port}`,
    key: "sk-real-key",
    recorder,
    component: "ModelGateway",
    responseBytes: 1 << 20,
  });
  try {
    const response = await fetch(`${gateway.url}/v1/messages`, {
      method: "POST",
      headers: programHeaders(gateway, "anthropic"),
      body: REQUEST(mode !== "whole"),
    });
    const text = await response.text();
    await gateway.close();
    await recorder.flush();
    const lines = await Deno.readTextFile(join(writer.folder, "evidence", "events.jsonl"));
    const folder = writer.folder;
    const payloads = new Map<string, string>();
    for (const e of readEventsText(lines).events) {
      for (const sha of [e.payload, e.data.response_payload, e.data.stream_payload]) {
        if (typeof sha === "string") {
          payloads.set(sha, decoder.decode(await new FileRunRecord(writer.runId, folder).payload(sha)));
        }
      }
    }
    return {
      events: readEventsText(lines).events,
      spans: exporter.getFinishedSpans(),
      root,
      reached: seen[0]!,
      text,
      payload: (sha) => Promise.resolve(payloads.get(String(sha)) ?? "(no payload)"),
    };
  } finally {
    await gateway.close();
    await upstream.shutdown();
    await removeWritable(runs);
  }
}

const epochMs = (time: string) => Date.parse(time) + Number(`0.${time.split(".")[1]?.slice(3, 6) ?? "0"}`);

/** The call's event, less its times, and checks of what is left out: its IDs, start and timings. */
function callEvent(r: Recorded, type: string): { [key: string]: Json } {
  assert.deepEqual(r.events.map((e) => e.type), ["run_created", type]);
  const event = r.events[1]!;
  assert.equal(event.component, "ModelGateway");
  assert.equal(event.actor, "ada");
  assert.equal(event.parent_span_id, r.root, "the call is a child of the run's root, as before");
  const span = r.spans.find((s) => s.name.startsWith("chat"))!;
  assert.equal(event.span_id, span.spanContext().spanId);
  assert.ok(
    event.started_at !== null && epochMs(event.started_at) <= r.reached,
    "the step starts on arrival",
  );
  const { first_byte_ms, duration_ms, ...data } = event.data;
  assert.ok(
    typeof first_byte_ms === "number" && typeof duration_ms === "number" && first_byte_ms <= duration_ms,
  );
  return data;
}

/** The `chat` span, less its times, and checks of its parent and start. */
function chatSpan(r: Recorded): { [key: string]: unknown } {
  const span = r.spans.find((s) => s.name.startsWith("chat"))!;
  assert.equal(span.parentSpanContext?.spanId, r.root);
  assert.equal(span.kind, SpanKind.CLIENT);
  const start = span.startTime[0] * 1000 + span.startTime[1] / 1e6;
  assert.ok(start <= r.reached, "the span starts when the request arrives, before the provider gets it");
  const { "gen_ai.response.time_to_first_chunk": ttfc, ...attributes } = span.attributes;
  if (ttfc !== undefined) assert.ok(typeof ttfc === "number" && ttfc >= 0);
  return { name: span.name, status: span.status.code, attributes };
}

const REQUESTED = {
  "gen_ai.operation.name": "chat",
  "gen_ai.provider.name": "anthropic",
  "gen_ai.request.model": "claude-sonnet-4-5",
  "server.address": "127.0.0.1",
  "gen_ai.request.max_tokens": 256,
  "gen_ai.request.temperature": 0.5,
};

Deno.test("a call streamed in several chunks records the same model_called and chat span as ever: request, reassembled response, raw stream, usage, start on arrival", async () => {
  const r = await recordOne("stream");
  assert.equal(r.text, FIRST + LATER + LAST, "the program gets the stream as the provider sent it");
  const data = callEvent(r, "model_called");
  assert.deepEqual(data, {
    provider: "anthropic",
    model: "claude-sonnet-4-5",
    streamed: true,
    via: "gateway",
    api: "anthropic-messages",
    request_bytes: encoder.encode(REQUEST(true)).byteLength,
    status: 200,
    response_id: "msg_rec",
    answered_by: "claude-sonnet-4-5-20250929",
    input_tokens: 35,
    output_tokens: 9,
    cache_read_tokens: 5,
    cache_write_tokens: 0,
    reasoning_tokens: 0,
    finish_reason: "stop",
    provider_finish_reason: "end_turn",
    tool_calls: [],
    response_payload: data.response_payload!,
    stream_payload: data.stream_payload!,
    response_bytes: encoder.encode(FIRST + LATER + LAST).byteLength,
  });
  assert.equal(await r.payload(r.events[1]!.payload!), REQUEST(true), "the request, byte for byte");
  assert.equal(await r.payload(data.stream_payload), FIRST + LATER + LAST);
  // a stream's message_start carries stop_sequence, which the reassembly keeps
  assert.deepEqual(JSON.parse(await r.payload(data.response_payload)), { ...REPLY, stop_sequence: null });
  const span = chatSpan(r);
  const { "server.port": port, "provrun.run_id": runId, ...attributes } = span.attributes as {
    [key: string]: unknown;
  };
  assert.equal(typeof port, "number");
  assert.equal(runId, r.events[0]!.run_id);
  assert.deepEqual({ ...span, attributes }, {
    name: "chat claude-sonnet-4-5",
    status: 0,
    attributes: {
      ...REQUESTED,
      "gen_ai.request.stream": true,
      "gen_ai.response.model": "claude-sonnet-4-5-20250929",
      "gen_ai.response.id": "msg_rec",
      "gen_ai.usage.input_tokens": 35,
      "gen_ai.usage.output_tokens": 9,
      "gen_ai.usage.cache_read.input_tokens": 5,
      "gen_ai.usage.cache_creation.input_tokens": 0,
      "gen_ai.usage.reasoning.output_tokens": 0,
      "gen_ai.response.finish_reasons": ["stop"],
    },
  });
});

Deno.test("a call that does not stream records the same model_called and chat span as ever", async () => {
  const r = await recordOne("whole");
  assert.deepEqual(JSON.parse(r.text), REPLY);
  const data = callEvent(r, "model_called");
  assert.equal(data.streamed, false);
  assert.equal(data.stream_payload, undefined);
  assert.equal(data.response_bytes, encoder.encode(JSON.stringify(REPLY)).byteLength);
  assert.deepEqual([data.input_tokens, data.output_tokens, data.finish_reason], [35, 9, "stop"]);
  assert.equal(await r.payload(r.events[1]!.payload!), REQUEST(false));
  assert.equal(await r.payload(data.response_payload), JSON.stringify(REPLY));
  const span = chatSpan(r);
  const attributes = span.attributes as { [key: string]: unknown };
  assert.equal(attributes["gen_ai.request.stream"], undefined);
  for (const [key, value] of Object.entries(REQUESTED)) {
    assert.deepEqual(attributes[key], value, key);
  }
  assert.deepEqual(attributes["gen_ai.response.finish_reasons"], ["stop"]);
});

Deno.test("a provider's error and a stream cut short record the same step_failed as ever, with the request and what arrived", async () => {
  const error = await recordOne("error");
  const failed = callEvent(error, "step_failed");
  assert.deepEqual({ ...failed, response_payload: "(sha)" }, {
    provider: "anthropic",
    model: "claude-sonnet-4-5",
    streamed: false,
    via: "gateway",
    api: "anthropic-messages",
    request_bytes: encoder.encode(REQUEST(true)).byteLength,
    status: 529,
    partial: false,
    response_payload: "(sha)",
    step: "model_called",
    error: "ProviderError",
    message: "Overloaded",
  });
  assert.equal(await error.payload(error.events[1]!.payload!), REQUEST(true));
  const span = chatSpan(error);
  assert.equal(span.status, 2);
  assert.equal((span.attributes as { [key: string]: unknown })["gen_ai.request.max_tokens"], 256);

  const cut = await recordOne("cut");
  const data = callEvent(cut, "step_failed");
  assert.deepEqual(
    [data.streamed, data.status, data.partial, data.error, data.input_tokens, data.output_tokens],
    [true, 200, true, "ProviderUnreachable", 35, 9],
  );
  assert.equal(await cut.payload(cut.events[1]!.payload!), REQUEST(true));
  assert.equal(await cut.payload(data.stream_payload), FIRST + LATER);
  assert.match(cut.text, /^event: message_start[\s\S]*event: error\n/);
  assert.equal((chatSpan(cut).attributes as { [key: string]: unknown })["gen_ai.request.stream"], true);
});

/**
 * A provider that sends the given chunks of a stream, each once the program has read the ones before, and closes
 * it only 300 ms after the last: the gateway must know the call ended from the chunk itself.
 */
function chunked(chunks: string[], read: () => number): Deno.HttpServer<Deno.NetAddr> {
  return Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
    await request.arrayBuffer();
    const stream = new ReadableStream<Uint8Array>({
      async start(c) {
        for (const [i, chunk] of chunks.entries()) {
          // Each next chunk once the program has read the ones before (or 5 s passed: a gateway that held one
          // back then fails the test, never hangs it), so that what the program saw first does not depend on
          // how fast a loaded machine runs.
          const before = chunks.slice(0, i).join("").length;
          for (let waited = 0; read() < before && waited < 5000; waited += 5) {
            await new Promise((r) => setTimeout(r, 5));
          }
          c.enqueue(encoder.encode(chunk));
        }
        await new Promise((r) => setTimeout(r, 300));
        c.close();
      },
    });
    return new Response(stream, { headers: { "content-type": "text/event-stream" } });
  });
}

/**
 * Reads a stream through the gateway chunk by chunk, and notes, as each chunk arrives, whether the call's event
 * is written yet.
 */
async function orderOf(
  provider: "anthropic" | "openai",
  path: string,
  chunks: string[],
): Promise<{ seen: [string, boolean][]; events: EvidenceEvent[] }> {
  const runs = await Deno.makeTempDir({ prefix: "provrun-gateway-order-" });
  let read = 0;
  const upstream = chunked(chunks, () => read);
  const writer = await new FileStore({ runs }).openRun(newRunId());
  const recorder = new EvidenceRecorder(writer, { actor: "ada", mode: "strict" });
  await recorder.record({ type: "run_created", component: "test", data: {} });
  const gateway = ModelGateway.start({
    provider,
    upstream: `http://127.0.0.1:${upstream.addr.port}${provider === "openai" ? "/v1" : ""}`,
    key: "sk-real-key",
    recorder,
    component: "ModelGateway",
    responseBytes: 1 << 20,
  });
  const file = join(writer.folder, "evidence", "events.jsonl");
  const written = () => /"type":"(model_called|step_failed)"/.test(Deno.readTextFileSync(file));
  try {
    const response = await fetch(`${gateway.url}${path}`, {
      method: "POST",
      headers: programHeaders(gateway, provider),
      body: JSON.stringify({ model: "m-1", stream: true, messages: [] }),
    });
    const seen: [string, boolean][] = [];
    for await (const chunk of response.body!.pipeThrough(new TextDecoderStream())) {
      seen.push([chunk, written()]);
      read += chunk.length;
    }
    await gateway.close();
    await recorder.flush();
    return { seen, events: readEventsText(await Deno.readTextFile(file)).events };
  } finally {
    await gateway.close();
    await upstream.shutdown();
    await removeWritable(runs);
  }
}

const STOP = sse("message_stop", { type: "message_stop" });
const ESCAPED_STOP = `data: {"type":"message\\u005fstop"}\n\n`;
const ENDINGS: [string, "anthropic" | "openai", string, string[], string][] = [
  ["its own chunk", "anthropic", "/v1/messages", [FIRST, LATER, STOP], "model_called"],
  [
    "a chunk with the stream's every event",
    "anthropic",
    "/v1/messages",
    [FIRST + LATER + STOP],
    "model_called",
  ],
  // the event's name is all that says it ends the stream: the chunk that ends it holds no marker
  ["a chunk that ends an event begun in the one before", "anthropic", "/v1/messages", [
    FIRST + LATER + "event: message_stop\n",
    "data: {}\n\n",
  ], "model_called"],
  ["a chunk whose line was begun in the one before", "anthropic", "/v1/messages", [
    FIRST + LATER + "event: message_st",
    "op\ndata: {}\n\n",
  ], "model_called"],
  ["a type spelled with a JSON escape, with no event name", "anthropic", "/v1/messages", [
    FIRST,
    LATER,
    ESCAPED_STOP,
  ], "model_called"],
  ["an error event", "anthropic", "/v1/messages", [
    FIRST,
    sse("error", { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }),
  ], "step_failed"],
  ["OpenAI Chat's [DONE]", "openai", "/v1/chat/completions", [
    `data: ${
      JSON.stringify({ id: "c1", model: "m-1", choices: [{ index: 0, delta: { content: "Up" } }] })
    }\n\n`,
    `data: ${
      JSON.stringify({ id: "c1", choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage: null })
    }\n\n`,
    "data: [DONE]\n\n",
  ], "model_called"],
  ["OpenAI Responses' response.completed, its type escaped", "openai", "/v1/responses", [
    `data: ${
      JSON.stringify({ type: "response.created", response: { id: "r1", status: "in_progress" } })
    }\n\n`,
    `data: {"type":"response\\u002ecompleted","response":{"id":"r1","status":"completed","output":[]}}\n\n`,
  ], "model_called"],
];

for (const [name, provider, path, chunks, type] of ENDINGS) {
  Deno.test(`the chunk that ends a stream reaches the program only after the call's event is written: ${name}`, async () => {
    const { seen, events } = await orderOf(provider, path, chunks);
    assert.equal(seen.map(([text]) => text).join(""), chunks.join(""), "the program gets the stream whole");
    assert.equal(seen.at(-1)![1], true, "the last chunk came after the record");
    assert.deepEqual(events.map((e) => e.type), ["run_created", type]);
    if (chunks.length > 1) {
      assert.equal(seen[0]![1], false, "the first chunk went on before the call ended");
    }
  });
}

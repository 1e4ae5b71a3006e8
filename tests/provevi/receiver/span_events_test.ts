import assert from "node:assert/strict";
import canonicalize from "canonicalize";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import type { EvidenceEvent } from "../../../lib/provevi/evidence/event.ts";
import { findRun } from "../../../lib/provevi/runs/find_run.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { decodeTraceRequest } from "../../../lib/provevi/receiver/otlp_receiver.ts";
import { formatMicros } from "../../../lib/provevi/evidence/event.ts";
import { sha256Hex } from "../../../lib/provevi/evidence/hash.ts";
import { indexedSpans } from "../../../lib/provevi/store/trace.ts";
import { takeTraces } from "../../../lib/provevi/receiver/span_intake.ts";
import { receivedRow } from "../../../lib/provevi/receiver/span_events.ts";
import { decodeTraceJson } from "../../../lib/provevi/receiver/otlp_json.ts";
import type { ReceivedSpan } from "../../../lib/provevi/receiver/otlp_receiver.ts";
import { attributeLevel } from "../../../lib/provevi/telemetry/attributes.ts";
import { EvidenceRecorder } from "../../../lib/provrun/run/recorder.ts";
import { removeWritable } from "../../_files.ts";

/** Texts RFC 8785 is particular about, and names the receiver keeps. */
const TEXTS = [
  "",
  "a",
  "é",
  "\u2028",
  "\u2029x",
  "\u0000\u001f\u007f",
  '"\\/',
  "😀",
  "\ud83d\ude00b",
  "€",
  "__proto__",
  "1abc",
  "gpt-4o",
  "claude-sonnet-4-5",
  "claude_code.llm_request",
  "two words",
  "x".repeat(250),
  "\ufeff",
  "Z",
  "z",
];
/** Numbers whose text RFC 8785 fixes: -0, big, small, the shortest round trip. */
const NUMBERS = [
  0,
  -0,
  1,
  -1,
  -1.5,
  1e21,
  1e-7,
  123456789012345680000,
  5e-324,
  0.1 + 0.2,
  2 ** 53,
  -(2 ** 60),
];
/** Keys the row keeps (names and counts), and others that go to the payload. */
const KEYS = [
  "gen_ai.request.model",
  "gen_ai.response.model",
  "gen_ai.response.finish_reasons",
  "gen_ai.operation.name",
  "server.port",
  "gen_ai.usage.input_tokens",
  "gen_ai.usage.cost",
  "gen_ai.request.temperature",
  "session.id",
  "tool.name",
  "__proto__",
  "é",
];

function random(seed: number): () => number {
  return () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

function pick<T>(rand: () => number, list: readonly T[]): T {
  return list[Math.floor(rand() * list.length)]!;
}

/** An OTLP/JSON attribute value: a text, an integer, a double, a yes or no, or a list of them. */
function otlpValue(rand: () => number, depth = 0): Record<string, unknown> {
  const k = Math.floor(rand() * (depth > 1 ? 4 : 6));
  if (k === 0) return { stringValue: pick(rand, TEXTS) };
  if (k === 1) return { intValue: pick(rand, ["0", "-1", "42", "9007199254740993", "-9223372036854775808"]) };
  if (k === 2) return { doubleValue: pick(rand, NUMBERS) };
  if (k === 3) return { boolValue: rand() < 0.5 };
  if (k === 4) {
    return {
      arrayValue: {
        values: Array.from({ length: Math.floor(rand() * 3) }, () => otlpValue(rand, depth + 1)),
      },
    };
  }
  return {
    kvlistValue: {
      values: Array.from({ length: Math.floor(rand() * 3) }, () => ({
        key: pick(rand, KEYS),
        value: otlpValue(rand, depth + 1),
      })),
    },
  };
}

const hex = (rand: () => number, digits: number) =>
  Array.from({ length: digits }, () => Math.floor(rand() * 16).toString(16)).join("");

/** A request of a few random spans, with names, scopes, kinds, statuses and attributes of every shape. */
function randomRequest(rand: () => number): string {
  const attributes = () =>
    Array.from({ length: Math.floor(rand() * 6) }, () => ({ key: pick(rand, KEYS), value: otlpValue(rand) }));
  return JSON.stringify({
    resourceSpans: [{
      resource: {
        attributes: [{ key: "service.name", value: { stringValue: pick(rand, TEXTS) } }, ...attributes()],
      },
      scopeSpans: [{
        scope: { name: pick(rand, TEXTS), version: rand() < 0.5 ? "" : pick(rand, TEXTS) },
        spans: Array.from({ length: 1 + Math.floor(rand() * 5) }, () => ({
          traceId: hex(rand, 32),
          spanId: hex(rand, 16),
          parentSpanId: rand() < 0.5 ? "" : hex(rand, 16),
          name: pick(rand, TEXTS),
          kind: Math.floor(rand() * 6),
          startTimeUnixNano: String(1764500000000000000n + BigInt(Math.floor(rand() * 1e12))),
          endTimeUnixNano: rand() < 0.1
            ? "0"
            : String(1764500001000000000n + BigInt(Math.floor(rand() * 1e12))),
          attributes: attributes(),
          events: rand() < 0.2
            ? [{ name: pick(rand, TEXTS), timeUnixNano: "1764500000500000000", attributes: attributes() }]
            : [],
          links: rand() < 0.2
            ? [{ traceId: hex(rand, 32), spanId: hex(rand, 16), attributes: attributes() }]
            : [],
          status: { code: Math.floor(rand() * 3), message: rand() < 0.5 ? "" : pick(rand, TEXTS) },
        })),
      }],
    }],
  });
}

async function openRun() {
  const runs = await Deno.makeTempDir({ prefix: "provevi-span-lines-" });
  const store = new FileStore({ runs });
  const writer = await store.openRun("run-20261130T120000Z-0000abcd");
  const recorder = new EvidenceRecorder(writer, { actor: "ada", mode: "strict" });
  const events: EvidenceEvent[] = [];
  recorder.onEvent = (e) => events.push(e);
  await recorder.record({ type: "run_created", component: "RunContext", data: {} });
  return {
    store,
    recorder,
    folder: writer.folder,
    events,
    async [Symbol.asyncDispose]() {
      await removeWritable(runs);
    },
  };
}

/** Posts a body of traces to the run's receiver; it must be taken whole (200). */
async function post(run: Awaited<ReturnType<typeof openRun>>, body: BodyInit, type: string): Promise<void> {
  const response = await takeTraces(
    new Request("http://127.0.0.1/v1/traces", { method: "POST", headers: { "content-type": type }, body }),
    { run: run.recorder, rows: run.store },
  );
  assert.equal(response.status, 200, await response.clone().text());
  await response.body?.cancel();
}

/**
 * Each line on disk is the general canonicalizer's text of its event; each request is one `spans_received`
 * event whose payload is the body as sent; the rows are the spans sent, in order; the run verifies.
 */
async function assertBatches(
  run: Awaited<ReturnType<typeof openRun>>,
  sent: { body: Uint8Array; spans: ReceivedSpan[]; encoding: string }[],
): Promise<void> {
  await run.recorder.seal();
  const lines = (await Deno.readTextFile(`${run.folder}/evidence/events.jsonl`)).split("\n").slice(0, -1);
  assert.equal(lines.length, run.events.length);
  for (const [i, line] of lines.entries()) {
    assert.equal(line, canonicalize(run.events[i]), `line ${i + 1}`);
    assert.equal(line, canonicalize(JSON.parse(line)), `line ${i + 1}`);
  }
  const batches = run.events.filter((e) => e.type === "spans_received");
  assert.equal(batches.length, sent.length);
  for (const [i, batch] of batches.entries()) {
    assert.equal(batch.payload, sha256Hex(sent[i]!.body), `batch ${i}`);
    assert.equal(batch.data.spans, sent[i]!.spans.length);
    assert.equal(batch.data.encoding, sent[i]!.encoding);
    assert.equal(batch.confidence, "parsed");
  }
  const spans = sent.flatMap((s) => s.spans);
  // the rows of JSON requests are written as they come, those of protobuf ones made from the payloads when read
  const rows = await indexedSpans(await findRun(run.folder), run.events);
  assert.deepEqual(rows, spans.map(receivedRow));
  // a row keeps no body
  for (const row of rows) {
    for (const [key, value] of Object.entries(row.attributes)) {
      assert.notEqual(attributeLevel(key, value), "bodies");
    }
  }
  const check = await verifyRun(await findRun(run.folder));
  assert.ok(check.ok, JSON.stringify(check.problems));
}

Deno.test("the receiver writes one spans_received event a request, its body the payload, and a row a span, for random spans of every shape", async () => {
  await using run = await openRun();
  const rand = random(11);
  const sent: { body: Uint8Array; spans: ReceivedSpan[]; encoding: string }[] = [];
  for (let i = 0; i < 300; i++) {
    const body = randomRequest(rand);
    await post(run, body, "application/json");
    sent.push({ body: new TextEncoder().encode(body), spans: decodeTraceJson(body), encoding: "json" });
  }
  await assertBatches(run, sent);
});

Deno.test("the receiver's batches from OTLP protobuf keep each body byte for byte, lone surrogates and all", async () => {
  await using run = await openRun();
  const rand = random(5);
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });
  const sent: { body: Uint8Array; spans: ReceivedSpan[]; encoding: string }[] = [];
  for (let i = 0; i < 20; i++) {
    memory.reset();
    const tracer = provider.getTracer(pick(rand, TEXTS), pick(rand, TEXTS));
    for (let k = 0; k < 30; k++) {
      const attributes: Record<string, string | number | boolean | string[]> = {};
      for (let a = Math.floor(rand() * 6); a > 0; a--) {
        const r = rand();
        attributes[pick(rand, KEYS)] = r < 0.4
          ? pick(rand, TEXTS)
          : r < 0.7
          ? pick(rand, NUMBERS)
          : r < 0.8
          ? rand() < 0.5
          : [pick(rand, TEXTS), pick(rand, TEXTS)];
      }
      // a lone surrogate too: protobuf carries UTF-8, so it arrives as U+FFFD
      tracer.startSpan(pick(rand, [...TEXTS, "a\ud800"]), { attributes }).end();
    }
    const body = new Uint8Array(ProtobufTraceSerializer.serializeRequest(memory.getFinishedSpans())!);
    await post(run, body, "application/x-protobuf");
    sent.push({ body, spans: decodeTraceRequest(body), encoding: "protobuf" });
  }
  await provider.shutdown();
  await assertBatches(run, sent);
});

Deno.test("a span row's times are the nanoseconds cut to microseconds, as formatMicros writes them, for any length", () => {
  const rand = random(17);
  const times = [
    "0",
    "999",
    "1000",
    "123456789",
    "1000000000",
    "0000000001000",
    "1764500000000000000",
    "1764500000123456789",
    "8999999999999999999",
    "9007199254740993000",
    "18446744073709551615",
    "0001764500000123456789",
  ];
  for (let i = 0; i < 2000; i++) {
    const digits = 1 + Math.floor(rand() * 20);
    times.push(Array.from({ length: digits }, () => Math.floor(rand() * 10)).join(""));
  }
  for (const t of times) {
    const row = receivedRow({
      traceId: "a".repeat(32),
      spanId: "b".repeat(16),
      parentSpanId: null,
      name: "x",
      kind: 1,
      startTimeUnixNano: t,
      endTimeUnixNano: t,
      attributes: {},
      events: [],
      links: [],
      status: { code: 0, message: "" },
      scope: { name: "s", version: "" },
      resource: {},
    });
    const micros = Number(BigInt(t) / 1000n);
    assert.equal(row.start_time, formatMicros(micros), t);
    assert.equal(row.end_time, row.start_time);
  }
});

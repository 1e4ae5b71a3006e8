import assert from "node:assert/strict";
import { gzipSync } from "node:zlib";
import protobuf from "protobufjs";
import { ROOT_CONTEXT, trace } from "@opentelemetry/api";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { OTLPTraceExporter as ProtoExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { findRun } from "../../../lib/provevi/runs/find_run.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import type { ReceivedSpan } from "../../../lib/provevi/receiver/otlp_wire.ts";
import { batchSpans } from "../../../lib/provevi/receiver/received_batch.ts";
import { receiver } from "../../../lib/provevi/receiver/run_receiver.ts";
import { readEventsText } from "../../../lib/provevi/evidence/read_events.ts";
import { readSpansFile } from "../../../lib/provevi/evidence/spans_file.ts";
import { indexedSpans } from "../../../lib/provevi/store/trace.ts";
import { EvidenceRecorder } from "../../../lib/provrun/run/recorder.ts";
import { removeWritable } from "../../_files.ts";
import { FileRunRecord } from "../../../lib/provevi/store/file_run_record.ts";

/** A store, an open run with its recorder, and the run's first event written. */
async function openRun() {
  const runs = await Deno.makeTempDir({ prefix: "provevi-receiver-" });
  const store = new FileStore({ runs });
  const writer = await store.openRun("run-20261130T120000Z-0000abcd");
  const recorder = new EvidenceRecorder(writer, { actor: "ada", mode: "strict" });
  await recorder.record({ type: "run_created", component: "RunContext", data: {} });
  return {
    store,
    recorder,
    folder: writer.folder,
    events: async () =>
      readEventsText(await Deno.readTextFile(`${writer.folder}/evidence/events.jsonl`)).events,
    /** The spans of the run's `spans_received` events, read back from their payloads. */
    async received(): Promise<ReceivedSpan[]> {
      const events = readEventsText(await Deno.readTextFile(`${writer.folder}/evidence/events.jsonl`)).events;
      const spans: ReceivedSpan[] = [];
      for (const e of events.filter((e) => e.type === "spans_received")) {
        const body = await new FileRunRecord(writer.runId, writer.folder).payload(e.payload!);
        spans.push(...batchSpans(e, body));
      }
      return spans;
    },
    async [Symbol.asyncDispose]() {
      await removeWritable(runs);
    },
  };
}

function exportTwoSpans(
  exporter: ProtoExporter | JsonExporter,
): { traceId: string; provider: BasicTracerProvider } {
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer("claude_code", "2.1.332");
  const root = tracer.startSpan("claude_code.interaction");
  tracer.startSpan("claude_code.llm_request", {
    attributes: {
      "gen_ai.usage.input_tokens": 21,
      "gen_ai.input.messages": '[{"role":"user","content":"secret"}]',
    },
  }, trace.setSpan(ROOT_CONTEXT, root)).end();
  root.end();
  return { traceId: root.spanContext().traceId, provider };
}

Deno.test("receiver() takes the real OTLP/HTTP protobuf and JSON exporters' spans as evidence and span rows", async () => {
  await using run = await openRun();
  await using spans = receiver(run.store, run.recorder);
  const proto = exportTwoSpans(new ProtoExporter({ url: spans.tracesUrl, headers: { ...spans.headers } }));
  await proto.provider.shutdown();
  const json = exportTwoSpans(new JsonExporter({ url: spans.tracesUrl, headers: { ...spans.headers } }));
  await json.provider.shutdown();
  assert.equal(spans.spans, 4);
  // SimpleSpanProcessor exports each span as it ends, so two requests may cross: compare in a fixed order
  const key = (s: ReceivedSpan) => `${s.traceId} ${s.name}`;
  const received = (await run.received()).sort((a, b) => key(a).localeCompare(key(b)));
  assert.deepEqual(
    received.map((s) => [s.traceId, s.name]),
    [
      [proto.traceId, "claude_code.interaction"],
      [proto.traceId, "claude_code.llm_request"],
      [json.traceId, "claude_code.interaction"],
      [json.traceId, "claude_code.llm_request"],
    ].sort((a, b) => a.join(" ").localeCompare(b.join(" "))),
  );
  // one event a request: the body is the payload, and the event holds only counts and names
  const batches = (await run.events()).filter((e) => e.type === "spans_received");
  assert.equal(batches.length, 4);
  for (const e of batches) {
    assert.equal(e.confidence, "parsed");
    assert.equal(e.component, "SpanReceiver");
    assert.equal(e.data.spans, 1);
    assert.ok(!JSON.stringify(e.data).includes("secret"));
  }
  assert.deepEqual(batches.map((e) => e.data.encoding).sort(), ["json", "json", "protobuf", "protobuf"]);
  const request = received.find((s) => s.traceId === proto.traceId && s.name === "claude_code.llm_request")!;
  const root = received.find((s) => s.traceId === proto.traceId && s.name === "claude_code.interaction")!;
  assert.equal(request.scope.name, "claude_code");
  assert.equal(request.attributes["gen_ai.usage.input_tokens"], 21);
  assert.match(String(request.attributes["gen_ai.input.messages"]), /secret/);
  assert.equal(request.parentSpanId, root.spanId);
  // the index holds the JSON requests' rows; a reader makes the protobuf ones' from their payloads
  assert.equal((await readSpansFile(run.folder)).length, 2);
  await run.recorder.seal();
  const rows = await indexedSpans(await findRun(run.folder), await run.events());
  assert.equal(rows.length, 4);
  assert.deepEqual(rows.map((r) => r.kind), [0, 0, 0, 0]);
  assert.ok(!JSON.stringify(rows).includes("secret"));
  const check = await verifyRun(await findRun(run.folder));
  assert.ok(check.ok, JSON.stringify(check.problems));
});

Deno.test("receiver() takes a gzip body, and refuses an unknown encoding", async () => {
  await using run = await openRun();
  await using spans = receiver(run.store, run.recorder);
  const body = JSON.stringify({
    resourceSpans: [{
      resource: { attributes: [{ key: "service.name", value: { stringValue: "codex" } }] },
      scopeSpans: [{
        scope: { name: "codex_otel" },
        spans: [{
          traceId: "0af7651916cd43dd8448eb211c80319c",
          spanId: "b7ad6b7169203331",
          name: "session_loop",
          kind: 1,
          startTimeUnixNano: "1764417600000000000",
          endTimeUnixNano: 1764417601000000000,
          attributes: [{ key: "gen_ai.usage.output_tokens", value: { intValue: "7" } }],
        }],
      }],
    }],
  });
  const ok = await fetch(spans.tracesUrl, {
    method: "POST",
    headers: { ...spans.headers, "content-type": "application/json", "content-encoding": "gzip" },
    body: new Uint8Array(gzipSync(body)),
  });
  assert.equal(ok.status, 200);
  assert.deepEqual(await ok.json(), {});
  const bad = await fetch(spans.tracesUrl, {
    method: "POST",
    headers: { ...spans.headers, "content-type": "application/json", "content-encoding": "br" },
    body,
  });
  assert.equal(bad.status, 400);
  await bad.body?.cancel();
  const [batch] = (await run.events()).filter((e) => e.type === "spans_received");
  assert.deepEqual(batch!.data, { encoding: "json", services: ["codex"], spans: 1 });
  // the payload is the body unpacked, as sent
  const stored = await new FileRunRecord(batch!.run_id, run.folder).payload(batch!.payload!);
  assert.equal(new TextDecoder().decode(stored), body);
  const [row] = await readSpansFile(run.folder);
  assert.equal(row!.start_time, "2025-11-29T12:00:00.000000Z");
  assert.equal(row!.end_time, "2025-11-29T12:00:01.000000Z");
  assert.deepEqual(row!.attributes, { "gen_ai.usage.output_tokens": 7 });
});

Deno.test("receiver() answers a malformed body with 400 and a telemetry_problem, and goes on taking spans", async () => {
  await using run = await openRun();
  await using spans = receiver(run.store, run.recorder);
  const cases: [string, BodyInit][] = [
    ["application/x-protobuf", new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f])],
    ["application/json", "{not json"],
    [
      "application/json",
      JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: "xyz", spanId: "1" }] }] }] }),
    ],
    ["application/json", JSON.stringify({ resourceSpans: "many" })],
  ];
  for (const [type, body] of cases) {
    const r = await fetch(spans.tracesUrl, {
      method: "POST",
      headers: { ...spans.headers, "content-type": type },
      body,
    });
    assert.equal(r.status, 400, `${type} ${String(body)}`);
    if (type === "application/json") assert.equal((await r.json()).code, 3);
    else await r.body?.cancel();
  }
  const text = await fetch(spans.tracesUrl, {
    method: "POST",
    headers: { ...spans.headers, "content-type": "text/plain" },
    body: "x",
  });
  assert.equal(text.status, 415);
  await text.body?.cancel();
  const good = exportTwoSpans(new ProtoExporter({ url: spans.tracesUrl, headers: { ...spans.headers } }));
  await good.provider.shutdown();
  const events = await run.events();
  const problems = events.filter((e) => e.type === "telemetry_problem");
  assert.equal(problems.length, 5);
  assert.match(String(problems[2]!.data.problem), /traceId is not 32 hex digits/);
  assert.match(String(problems[4]!.data.problem), /send application\/x-protobuf or application\/json/);
  assert.equal((await run.received()).length, 2);
  assert.equal(spans.refused, 5);
});

Deno.test("receiver() refuses a body over its size limit with 413, before reading it all", async () => {
  await using run = await openRun();
  await using spans = receiver(run.store, run.recorder, { maxBytes: 1024 });
  const big = JSON.stringify({ resourceSpans: [], pad: "x".repeat(4096) });
  const r = await fetch(spans.tracesUrl, {
    method: "POST",
    headers: { ...spans.headers, "content-type": "application/json" },
    body: big,
  });
  assert.equal(r.status, 413);
  assert.equal((await r.json()).code, 8);
  // a small body that unzips past the limit is refused too
  const bomb = gzipSync(JSON.stringify({ resourceSpans: [], pad: "y".repeat(100_000) }));
  assert.ok(bomb.byteLength < 1024);
  const z = await fetch(spans.tracesUrl, {
    method: "POST",
    headers: { ...spans.headers, "content-type": "application/json", "content-encoding": "gzip" },
    body: new Uint8Array(bomb),
  });
  assert.equal(z.status, 413);
  assert.match((await z.json()).message, /unpacks to over the receiver's limit of 1024 bytes/);
  const events = await run.events();
  assert.equal(events.filter((e) => e.type === "spans_received").length, 0);
  // each refusal is the run's telemetry_problem
  assert.deepEqual(
    events.filter((e) => e.type === "telemetry_problem").map((e) =>
      String(e.data.problem).replace(/:.*/, "")
    ),
    ["the span receiver refused a body", "the span receiver refused a body"],
  );
});

Deno.test("receiver() refuses spans after the run is sealed with 409 and an OTLP error body", async () => {
  await using run = await openRun();
  await using spans = receiver(run.store, run.recorder);
  await run.recorder.seal();
  const exporter = exportTwoSpans(new ProtoExporter({ url: spans.tracesUrl, headers: { ...spans.headers } }));
  await exporter.provider.shutdown();
  assert.equal(spans.spans, 0);
  const r = await fetch(spans.tracesUrl, {
    method: "POST",
    headers: { ...spans.headers, "content-type": "application/x-protobuf" },
    body: new Uint8Array(),
  });
  assert.equal(r.status, 409);
  const status = protobuf.parse(`syntax = "proto3"; message Status { int32 code = 1; string message = 2; }`)
    .root
    .lookupType("Status");
  const decoded = status.toObject(status.decode(new Uint8Array(await r.arrayBuffer()))) as {
    code: number;
    message: string;
  };
  assert.equal(decoded.code, 9);
  assert.match(decoded.message, /is sealed; it takes no more spans/);
  const check = await verifyRun(await findRun(run.folder));
  assert.ok(check.ok, JSON.stringify(check.problems));
  assert.equal((await run.events()).length, 1);
});

Deno.test("recordMany() writes a request's events in one write, chained as one by one, with a store that takes a batch and one that does not", async () => {
  for (const batch of [true, false]) {
    await using run = await openRun();
    // without appendMany (as the postgres store's writer), the recorder appends the events one by one
    const recorder = batch ? run.recorder : new EvidenceRecorder(
      await (async () => {
        const store = new FileStore({ runs: await Deno.makeTempDir({ prefix: "provevi-many-" }) });
        const w = await store.openRun("run-20261130T120000Z-0000beef");
        return {
          runId: w.runId,
          folder: w.folder,
          append: w.append.bind(w),
          putPayload: w.putPayload.bind(w),
          seal: w.seal.bind(w),
        };
      })(),
      { actor: "ada", mode: "strict" },
    );
    if (!batch) await recorder.record({ type: "run_created", component: "RunContext", data: {} });
    const seen: number[] = [];
    recorder.onEvent = (e) => seen.push(e.seq);
    const events = await recorder.recordMany(
      [1, 2, 3].map((n) => ({ type: "note_added", component: "test", data: { n } })),
    );
    assert.deepEqual(events.map((e) => e?.seq), [1, 2, 3]);
    assert.deepEqual(seen, [1, 2, 3]);
    await recorder.record({ type: "note_added", component: "test", data: { n: 4 } });
    assert.equal(recorder.count, 5);
    await recorder.seal();
    const check = await verifyRun(await findRun(recorder.folder));
    assert.ok(check.ok, JSON.stringify(check.problems));
    if (!batch) await removeWritable(recorder.folder);
  }
});

Deno.test("recordMany() in strict mode fails the run when the batch cannot be written, and writes none of it", async () => {
  await using run = await openRun();
  const events = `${run.folder}/evidence/events.jsonl`;
  const before = await Deno.readTextFile(events);
  const writer = {
    runId: "run-20261130T120000Z-0000abcd",
    folder: run.folder,
    append: () => Promise.reject(new Error("disk full")),
    appendMany: () => Promise.reject(new Error("disk full")),
    putPayload: () => Promise.reject(new Error("disk full")),
    seal: () => Promise.reject(new Error("disk full")),
  };
  const strict = new EvidenceRecorder(writer, { actor: "ada", mode: "strict" });
  await assert.rejects(
    strict.recordMany([{ type: "note_added", component: "test" }]),
    /cannot be written: disk full/,
  );
  assert.ok(strict.broken);
  assert.equal(strict.count, 0);
  const lenient = new EvidenceRecorder(writer, { actor: "ada", mode: "lenient" });
  assert.deepEqual(await lenient.recordMany([{ type: "a", component: "t" }, { type: "b", component: "t" }]), [
    null,
    null,
  ]);
  assert.deepEqual(lenient.lost.map((l) => l.type), ["a", "b"]);
  assert.equal(lenient.count, 0);
  assert.equal(await Deno.readTextFile(events), before);
});

Deno.test("receiver() refuses a JSON span holding a lone surrogate with 400, and the strict run goes on and verifies", async () => {
  await using run = await openRun();
  await using spans = receiver(run.store, run.recorder);
  const span = (name: string, attributes: unknown[] = []) =>
    JSON.stringify({
      resourceSpans: [{
        resource: { attributes: [] },
        scopeSpans: [{
          scope: { name: "claude_code" },
          spans: [{
            traceId: "0af7651916cd43dd8448eb211c80319c",
            spanId: "b7ad6b7169203331",
            name,
            startTimeUnixNano: "1764500000000000000",
            endTimeUnixNano: "1764500000100000000",
            attributes,
          }],
        }],
      }],
    });
  const bad = [
    span("x\ud800y"), // half of an emoji, as a JSON exporter would escape it
    span("ok", [{ key: "gen_ai.operation.name", value: { stringValue: "a\udc00" } }]),
  ];
  for (const body of bad) {
    assert.match(body, /\\ud[8c]00/);
    const r = await fetch(spans.tracesUrl, {
      method: "POST",
      headers: { ...spans.headers, "content-type": "application/json" },
      body,
    });
    assert.equal(r.status, 400);
    assert.match((await r.json()).message, /lone UTF-16 surrogate/);
  }
  const good = await fetch(spans.tracesUrl, {
    method: "POST",
    headers: { ...spans.headers, "content-type": "application/json" },
    body: span("claude_code.tool"),
  });
  assert.equal(good.status, 200);
  await good.body?.cancel();
  await run.recorder.record({
    type: "run_completed",
    component: "RunContext",
    data: { status: "completed" },
  });
  await run.recorder.seal();
  const events = await run.events();
  assert.equal(events.filter((e) => e.type === "telemetry_problem").length, 2);
  assert.equal(events.filter((e) => e.type === "spans_received").length, 1);
  const check = await verifyRun(await findRun(run.folder));
  assert.ok(check.ok, JSON.stringify(check.problems));
});

Deno.test("an event no evidence line can hold is the caller's error: a strict run's recorder throws it and goes on", async () => {
  await using run = await openRun();
  await assert.rejects(
    () => run.recorder.record({ type: "note_added", component: "RunContext", data: { text: "a\ud800" } }),
    /surrogate/i,
  );
  await assert.rejects(
    () =>
      run.recorder.recordMany([
        { type: "note_added", component: "RunContext", data: { text: "fine" } },
        { type: "note_added", component: "RunContext", data: { text: "b\udfff" } },
      ]),
    /surrogate/i,
  );
  assert.equal(run.recorder.broken, null);
  await run.recorder.record({
    type: "run_completed",
    component: "RunContext",
    data: { status: "completed" },
  });
  await run.recorder.seal();
  const events = await run.events();
  assert.deepEqual(events.map((e) => e.type), ["run_created", "run_completed"]);
  const check = await verifyRun(await findRun(run.folder));
  assert.ok(check.ok, JSON.stringify(check.problems));
});

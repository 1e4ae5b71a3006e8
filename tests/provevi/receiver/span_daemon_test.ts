import assert from "node:assert/strict";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import {
  appendSealedSpans,
  FileStore,
  findRun,
  readEventsText,
  readSpansFile,
  type SealedSpans,
  SpanDaemon,
  verifyRun,
} from "../../../lib/provevi/mod.ts";
import { EvidenceRecorder } from "../../../lib/provrun/mod.ts";
import { removeWritable } from "../../_files.ts";

async function sendSpans(url: string, names: string[]): Promise<void> {
  const provider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url }))],
  });
  const tracer = provider.getTracer("claude_code");
  for (const name of names) tracer.startSpan(name).end();
  await provider.shutdown();
}

Deno.test("SpanDaemon takes spans for two open runs at once, each at its own address, and hands them back at the seal", async () => {
  const runs = await Deno.makeTempDir({ prefix: "provevi-daemon-" });
  try {
    const store = new FileStore({ runs });
    await using daemon = SpanDaemon.start(store);
    const opened = [];
    for (const id of ["run-20261130T120000Z-0000000a", "run-20261130T120000Z-0000000b"]) {
      const writer = await store.openRun(id);
      const recorder = new EvidenceRecorder(writer, { actor: "ada", mode: "strict" });
      await recorder.record({ type: "run_created", component: "RunContext", data: {} });
      const r = await fetch(`${daemon.url}/runs`, { method: "POST", body: JSON.stringify({ run_id: id }) });
      assert.equal(r.status, 201);
      opened.push({ id, writer, recorder, ...(await r.json()) as { traces_url: string; seal_url: string } });
    }
    assert.deepEqual(daemon.open, opened.map((o) => o.id));
    const [a, b] = opened as [typeof opened[0], typeof opened[0]];
    assert.notEqual(a.traces_url, b.traces_url);
    await Promise.all([sendSpans(a.traces_url, ["a.one", "a.two"]), sendSpans(b.traces_url, ["b.one"])]);
    // span rows go to each run's folder at once
    assert.deepEqual((await readSpansFile(a.writer.folder)).map((s) => s.name).sort(), ["a.one", "a.two"]);
    assert.deepEqual((await readSpansFile(b.writer.folder)).map((s) => s.name), ["b.one"]);
    // a run seals with the daemon, and appends what it took to its own chain
    const sealed = await (await fetch(a.seal_url, { method: "POST" })).json() as SealedSpans;
    assert.equal(sealed.run_id, a.id);
    assert.equal(sealed.spans, 2);
    assert.equal(await appendSealedSpans(a.recorder, sealed), 2);
    await a.recorder.seal();
    const events = readEventsText(await Deno.readTextFile(`${a.writer.folder}/evidence/events.jsonl`)).events;
    assert.deepEqual(events.map((e) => [e.type, e.data.name ?? null]).slice(1).sort(), [
      ["span_recorded", "a.one"],
      ["span_recorded", "a.two"],
    ]);
    const check = await verifyRun(await findRun(a.writer.folder));
    assert.ok(check.ok, JSON.stringify(check.problems));
    // after its seal, the daemon refuses the run's spans; the other run is still open
    const late = await fetch(a.traces_url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    assert.equal(late.status, 409);
    assert.match((await late.json()).message, /is sealed/);
    assert.deepEqual(daemon.open, [b.id]);
    await sendSpans(b.traces_url, ["b.two"]);
    const sealedB = await (await fetch(b.seal_url, { method: "POST" })).json() as SealedSpans;
    assert.equal(sealedB.spans, 2);
    const again = await fetch(b.seal_url, { method: "POST" });
    assert.equal(again.status, 409);
    await again.body?.cancel();
  } finally {
    await removeWritable(runs);
  }
});

Deno.test("SpanDaemon refuses spans for a run that is not open, a run the store lacks, and a run opened twice", async () => {
  const runs = await Deno.makeTempDir({ prefix: "provevi-daemon-" });
  const store = new FileStore({ runs });
  await store.openRun("run-x");
  await using daemon = SpanDaemon.start(store);
  const r = await fetch(`${daemon.url}/r/${"0".repeat(32)}/v1/traces`, {
    method: "POST",
    headers: { "content-type": "application/x-protobuf" },
    body: new Uint8Array(),
  });
  assert.equal(r.status, 409);
  await r.body?.cancel();
  const first = await fetch(`${daemon.url}/runs`, {
    method: "POST",
    body: JSON.stringify({ run_id: "run-x" }),
  });
  assert.equal(first.status, 201);
  await first.body?.cancel();
  const twice = await fetch(`${daemon.url}/runs`, {
    method: "POST",
    body: JSON.stringify({ run_id: "run-x" }),
  });
  assert.equal(twice.status, 409);
  assert.match((await twice.json()).error, /opened with this daemon already/);
  const bad = await fetch(`${daemon.url}/runs`, { method: "POST", body: "run-x" });
  assert.equal(bad.status, 400);
  await bad.body?.cancel();
  const absent = await fetch(`${daemon.url}/runs`, {
    method: "POST",
    body: JSON.stringify({ run_id: "run-y" }),
  });
  assert.equal(absent.status, 404);
  assert.match((await absent.json()).error, /has no run run-y.*open the run first/);
  await removeWritable(runs);
});

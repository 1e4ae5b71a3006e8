import assert from "node:assert/strict";
import { indexedSpans } from "../../../lib/provevi/store/trace.ts";
import { findRun } from "../../../lib/provevi/runs/find_run.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { appendSealedSpans, openWithDaemon } from "../../../lib/provevi/receiver/daemon_client.ts";
import { readDaemonFile, writeDaemonFile } from "../../../lib/provevi/receiver/daemon_file.ts";
import { decodeTraceRequest } from "../../../lib/provevi/receiver/otlp_receiver.ts";
import { SpanDaemon } from "../../../lib/provevi/receiver/span_daemon.ts";
import { sha256Hex } from "../../../lib/provevi/evidence/hash.ts";
import { readEventsText } from "../../../lib/provevi/evidence/read_events.ts";
import { readSpansFile } from "../../../lib/provevi/evidence/spans_file.ts";
import { packRecord } from "../../../lib/provevi/evidence/payload_pack.ts";
import {
  jsonSpans,
  openInStore,
  openRequest,
  openWith,
  postSpans,
  sealRequest,
  sealWith,
  sendSpans,
  tempStore,
  writerProcess,
} from "./_daemon.ts";

Deno.test("SpanDaemon takes spans for two open runs at once, each at its own address with its own key, and hands them back at the seal", async () => {
  await using t = await tempStore();
  await using daemon = SpanDaemon.start(t.store);
  const ids = ["run-20261130T120000Z-0000000a", "run-20261130T120000Z-0000000b"];
  const runs = [];
  for (const id of ids) {
    runs.push({ id, ...await openInStore(t.store, id), opened: await openWith(daemon, id) });
  }
  assert.deepEqual(daemon.open, ids);
  const [a, b] = runs as [typeof runs[0], typeof runs[0]];
  assert.notEqual(a.opened.traces_url, b.opened.traces_url);
  assert.notEqual(a.opened.ingest_key, b.opened.ingest_key);
  // the keys are in no URL
  for (const url of [a.opened.traces_url, a.opened.seal_url, a.opened.endpoint]) {
    assert.ok(!url.includes(a.opened.ingest_key) && !url.includes(a.opened.writer_key), url);
  }
  await Promise.all([sendSpans(a.opened, ["a.one", "a.two"]), sendSpans(b.opened, ["b.one"])]);
  // one run's key does not reach the other run
  const crossed = await postSpans(b.opened, jsonSpans(1), a.opened.ingest_key);
  assert.equal(crossed.status, 401);
  await crossed.body?.cancel();
  // the bodies are on disk in the run's folder as they arrive, outside its evidence
  assert.ok((await Deno.stat(`${a.writer.folder}/received.spans`)).size > 0);
  // a run seals with the daemon, and appends what it took to its own chain: one batch a request
  const sealed = await sealWith(a.opened);
  assert.equal(sealed.run_id, a.id);
  assert.equal(sealed.spans, 2);
  assert.equal(await appendSealedSpans(a.recorder, sealed, { folder: a.writer.folder }), 2);
  // the writer makes no rows of the protobuf bodies it takes: a reader makes them from the payloads
  assert.deepEqual(await readSpansFile(a.writer.folder), []);
  assert.deepEqual(await readSpansFile(b.writer.folder), []);
  await a.recorder.seal();
  const events = readEventsText(await Deno.readTextFile(`${a.writer.folder}/evidence/events.jsonl`)).events;
  const rows = await indexedSpans(await findRun(a.writer.folder), events);
  assert.deepEqual(rows.map((s) => s.name).sort(), ["a.one", "a.two"]);
  assert.deepEqual(events.map((e) => [e.type, e.data.spans ?? null]).slice(1), [
    ["spans_received", 1],
    ["spans_received", 1],
  ]);
  const record = await findRun(a.writer.folder);
  const names = [];
  for (const e of events.slice(1)) {
    names.push(...decodeTraceRequest(await record.payload(e.payload!)).map((s) => s.name));
  }
  assert.deepEqual(names.sort(), ["a.one", "a.two"]);
  await assert.rejects(Deno.stat(`${a.writer.folder}/received.spans`), Deno.errors.NotFound);
  const check = await verifyRun(await findRun(a.writer.folder));
  assert.ok(check.ok, JSON.stringify(check.problems));
  // after its seal, the daemon refuses the run's spans; the other run is still open
  const late = await postSpans(a.opened, "{}");
  assert.equal(late.status, 409);
  assert.match((await late.json()).message, /takes no more spans: its writer sealed it/);
  assert.deepEqual(daemon.open, [b.id]);
  await sendSpans(b.opened, ["b.two"]);
  assert.equal((await sealWith(b.opened)).spans, 2);
  const again = await sealRequest(b.opened);
  assert.equal(again.status, 409);
  await again.body?.cancel();
});

Deno.test("SpanDaemon opens only a run the store has live: absent, sealed and cut runs are refused, and a run opens once", async () => {
  await using t = await tempStore();
  await using daemon = SpanDaemon.start(t.store);
  const answer = async (r: Response) => [r.status, (await r.json()).error] as [number, string];
  // absent
  const [absent, absentSays] = await answer(await openRequest(daemon, "run-20261130T120000Z-00000abc"));
  assert.equal(absent, 404);
  assert.match(absentSays, /store has no run run-20261130T120000Z-00000abc; open the run in the store first/);
  // sealed in the store
  const sealed = await openInStore(t.store, "run-20261130T120000Z-0000005e");
  await sealed.recorder.seal();
  const [sealedStatus, sealedSays] = await answer(await openRequest(daemon, sealed.writer.runId));
  assert.equal(sealedStatus, 409);
  assert.match(sealedSays, /is sealed; it takes no spans/);
  // cut: its writer was killed
  const cutId = "run-20261130T120000Z-000000c7";
  const writer = await writerProcess(t.runs, cutId);
  await writer.kill();
  const [cutStatus, cutSays] = await answer(await openRequest(daemon, cutId));
  assert.equal(cutStatus, 409);
  assert.match(cutSays, /was cut \(its writer is gone\)/);
  // live: opens once; a second opener (whoever it is) gets no keys
  const live = await openInStore(t.store, "run-20261130T120000Z-0000011e");
  const [first, second] = await Promise.all([
    openRequest(daemon, live.writer.runId),
    openRequest(daemon, live.writer.runId),
  ]);
  assert.deepEqual([first.status, second.status].sort(), [201, 409]);
  const loser = first.status === 409 ? first : second;
  assert.match((await loser.json()).error, /opened with this daemon already; only the writer that opened it/);
  await (first.status === 201 ? first : second).body?.cancel();
  // not a run ID, or not JSON
  for (
    const [type, body, status] of [
      ["application/json", '{"run_id": "../etc"}', 400],
      ["application/json", "run-x", 400],
      ["text/plain", '{"run_id": "run-x"}', 415],
      ["application/json", JSON.stringify({ run_id: "x".repeat(5000) }), 413],
    ] as const
  ) {
    const r = await fetch(`${daemon.url}/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${daemon.secret}`, "content-type": type },
      body,
    });
    assert.equal(r.status, status, body.slice(0, 40));
    await r.body?.cancel();
  }
  assert.deepEqual(daemon.open, [live.writer.runId]);
});

Deno.test("a run sealed or cut in the store after it opened with the daemon takes no more spans, and the daemon lets go of what it held", async () => {
  await using t = await tempStore();
  await using daemon = SpanDaemon.start(t.store);
  // sealed by its writer in the store, without the daemon
  const run = await openInStore(t.store, "run-20261130T120000Z-000005ea");
  const opened = await openWith(daemon, run.writer.runId);
  await postSpans(opened, jsonSpans(1, "before")).then((r) => r.body?.cancel());
  await run.recorder.seal();
  const late = await postSpans(opened, jsonSpans(1, "after"));
  assert.equal(late.status, 409);
  assert.match((await late.json()).message, /takes no more spans: it is sealed in the store/);
  assert.deepEqual((await readSpansFile(run.writer.folder)).map((s) => s.name), ["before"]); // JSON: its rows are the daemon's
  assert.deepEqual(daemon.open, []);
  // its writer killed: the sweep lets the run go, and its spans are refused from then on
  const cutId = "run-20261130T120000Z-00000c07";
  const writer = await writerProcess(t.runs, cutId);
  const cut = await openWith(daemon, cutId);
  await sendSpans(cut, ["held"]);
  await writer.kill();
  assert.deepEqual(await daemon.sweep(), [cutId]);
  assert.deepEqual(daemon.open, []);
  const refused = await postSpans(cut, jsonSpans(1));
  assert.equal(refused.status, 409);
  assert.match((await refused.json()).message, /it is cut in the store/);
  const seal = await sealRequest(cut);
  assert.equal(seal.status, 409);
  await seal.body?.cancel();
});

Deno.test("a run whose writer is killed between two of its requests has the second refused as cut, without a sweep", async () => {
  await using t = await tempStore();
  await using daemon = SpanDaemon.start(t.store, { sweepSeconds: 3600 });
  const id = "run-20261130T120000Z-00000c08";
  const writer = await writerProcess(t.runs, id);
  const opened = await openWith(daemon, id);
  await sendSpans(opened, ["one"]);
  await sendSpans(opened, ["two"]); // the daemon keeps the writer's lock file open between requests
  await writer.kill();
  const refused = await postSpans(opened, jsonSpans(1, "three"));
  assert.equal(refused.status, 409);
  assert.match((await refused.json()).message, /it is cut in the store/);
  assert.deepEqual(daemon.open, []);
});

Deno.test("a run past its limits at the daemon is refused with 413, keeps the spans taken before, and its writer learns it at the seal", async () => {
  await using t = await tempStore();
  await using daemon = SpanDaemon.start(t.store, { limits: { maxSpans: 5 } });
  const run = await openInStore(t.store, "run-20261130T120000Z-0000b0b0");
  const opened = await openWith(daemon, run.writer.runId);
  const ok = await postSpans(opened, jsonSpans(3));
  assert.equal(ok.status, 200);
  await ok.body?.cancel();
  const over = await postSpans(opened, jsonSpans(3));
  assert.equal(over.status, 413);
  assert.match((await over.json()).message, /passed its limit of 5 spans; no more of its spans are taken/);
  const still = await postSpans(opened, jsonSpans(1));
  assert.equal(still.status, 413);
  await still.body?.cancel();
  const sealed = await sealWith(opened);
  assert.equal(sealed.spans, 3);
  assert.deepEqual(sealed.events.map((e) => e.type), [
    "spans_received",
    "telemetry_problem",
    "telemetry_problem",
    "telemetry_problem",
  ]);
  assert.equal(sealed.events[0]!.data!.spans, 3);
  assert.match(
    String(sealed.events[1]!.data!.problem),
    /takes no more spans for run .* after 3, because it passed its limits .* the spans taken before are kept/,
  );
  assert.match(String(sealed.events[2]!.data!.problem), /passed its limit of 5 spans/);
  assert.equal(await appendSealedSpans(run.recorder, sealed, { folder: run.writer.folder }), 4);
  await run.recorder.seal();
  const check = await verifyRun(await findRun(run.writer.folder));
  assert.ok(check.ok, JSON.stringify(check.problems));
});

Deno.test("openWithDaemon() opens a run as its writer from the connection file, and its close() seals it with the daemon and appends the spans to the chain", async () => {
  await using t = await tempStore();
  await using daemon = SpanDaemon.start(t.store);
  const file = `${t.runs}/serve.json`;
  await writeDaemonFile(file, { url: daemon.url, secret: daemon.secret, pid: Deno.pid });
  assert.equal((await Deno.stat(file)).mode! & 0o777, 0o600);
  const run = await openInStore(t.store, "run-20261130T120000Z-0000c11e");
  const spans = await openWithDaemon(await readDaemonFile(file), run.recorder);
  assert.match(spans.tracesUrl, new RegExp(`^${daemon.url}/runs/[0-9a-f]{32}/v1/traces$`));
  await sendSpans(
    { traces_url: spans.tracesUrl } as Parameters<typeof sendSpans>[0],
    ["program.span"],
    spans.headers.authorization!.slice("Bearer ".length),
  );
  await spans.close();
  assert.equal(spans.spans, 1);
  await run.recorder.seal();
  const events = readEventsText(await Deno.readTextFile(`${run.writer.folder}/evidence/events.jsonl`)).events;
  assert.deepEqual(events.map((e) => e.type), ["run_created", "spans_received"]);
  assert.ok((await verifyRun(await findRun(run.writer.folder))).ok);
  // a second writer for the same run gets nothing from the daemon
  const other = await openInStore(t.store, "run-20261130T120000Z-0000c12e");
  await openWith(daemon, other.writer.runId);
  await assert.rejects(
    async () => openWithDaemon(await readDaemonFile(file), other.recorder),
    /did not open run run-20261130T120000Z-0000c12e: prove serve: run .* was opened with this daemon already/,
  );
});

Deno.test("appendSealedSpans() takes only batches and problems of the receiver, with bodies in the run folder that match their hashes, and writes nothing else", async () => {
  await using t = await tempStore();
  const run = await openInStore(t.store, "run-20261130T120000Z-0000f0f0");
  const folder = run.writer.folder;
  const body = new TextEncoder().encode(jsonSpans(1));
  const sha = sha256Hex(body);
  const other = new TextEncoder().encode("not these bytes");
  // a record whose bytes are not its hash's, beside a good one
  await Deno.writeFile(
    `${folder}/received-json.spans`,
    new Uint8Array([...packRecord(sha, body), ...packRecord("0".repeat(64), other)]),
  );
  const base = { run_id: run.writer.runId, spans: 1, refused: 0 };
  const time = "2026-11-30T12:00:00.000000Z";
  const batch = { type: "spans_received", component: "SpanReceiver", time, payload: sha };
  const data = { encoding: "json", services: [], spans: 1 };
  const forged: Record<string, unknown>[] = [
    { type: "run_completed", component: "SpanReceiver", data: {} },
    { type: "span_recorded", component: "SpanReceiver", data: {} },
    { type: "telemetry_problem", component: "RunContext", data: { problem: "x" } },
    { ...batch, component: "RunContext", data },
    { ...batch, payload: "0".repeat(64), data },
    { ...batch, payload: "a".repeat(64), data },
    { ...batch, data: { ...data, encoding: "yaml" } },
    { ...batch, data: { ...data, spans: -1 } },
    { ...batch, data: { ...data, services: ["two words"] } },
    { ...batch, time: "yesterday", data },
  ];
  for (const f of forged) {
    await assert.rejects(
      () => appendSealedSpans(run.recorder, { ...base, events: [f] } as never, { folder }),
      /the daemon's answer/,
      JSON.stringify(f),
    );
  }
  assert.equal(run.recorder.count, 1);
  // what the answer may hold, made again from its checked fields (an extra field is not taken)
  const taken = { ...batch, data: { ...data, extra: "x" }, refs: ["run://forged"] };
  assert.equal(await appendSealedSpans(run.recorder, { ...base, events: [taken] } as never, { folder }), 1);
  await run.recorder.seal();
  const events = readEventsText(await Deno.readTextFile(`${folder}/evidence/events.jsonl`)).events;
  assert.deepEqual(events[1]!.data, data);
  assert.deepEqual(events[1]!.refs, []);
  assert.equal(events[1]!.time, time);
  assert.ok((await verifyRun(await findRun(folder))).ok);
});

Deno.test("SpanDaemon holds at most maxHeldBytes of spans for all its open runs: past it a run's spans get 503, taken again once runs seal", async () => {
  await using t = await tempStore();
  await using daemon = SpanDaemon.start(t.store, { maxHeldBytes: 3000 });
  const runs = [];
  for (const id of ["run-20261130T120000Z-0000a001", "run-20261130T120000Z-0000a002"]) {
    await openInStore(t.store, id);
    runs.push(await openWith(daemon, id));
  }
  const first = await postSpans(runs[0]!, jsonSpans(20)); // about 3,800 bytes
  assert.equal(first.status, 200);
  await first.body?.cancel();
  const full = await postSpans(runs[1]!, jsonSpans(1));
  assert.equal(full.status, 503);
  assert.match((await full.json()).message, /holds its limit of 3000 bytes of spans for its open runs/);
  await sealWith(runs[0]!);
  const again = await postSpans(runs[1]!, jsonSpans(1));
  assert.equal(again.status, 200);
  await again.body?.cancel();
  assert.equal((await sealWith(runs[1]!)).refused, 1);
});

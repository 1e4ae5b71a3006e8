/**
 * A run page is bounded whatever the run's size: its events and spans come a page at a time, long content is
 * cut with what was cut named, and the whole of each part is at its own address.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { TelemetryPolicy } from "../../../lib/provevi/telemetry/policy.ts";
import type { RunView } from "../../../lib/provevi/viewer/run_view.ts";
import { viewerHandler } from "../../../lib/provevi/viewer/viewer_server.ts";
import { writeRun } from "./_runs.ts";

const PORT = 5127;
const TOKEN = "f".repeat(64);
const FIXTURES = new URL("../../../fixtures/", import.meta.url).pathname;
const policy = (level: string) =>
  TelemetryPolicy.parse(`version: 1\ndestinations:\n  browser:\n    kind: live\n    receives: ${level}\n`);

function client(store: FileStore, level = "bodies") {
  const handle = viewerHandler(store, { policy: policy(level), port: PORT, token: TOKEN });
  return async (path: string) => {
    const r = await handle(
      new Request(`http://127.0.0.1:${PORT}/t/${TOKEN}/${path}`, { headers: { host: `127.0.0.1:${PORT}` } }),
    );
    return { status: r.status, text: await r.text() };
  };
}

async function withRuns(fn: (runs: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "viewer-pages-" });
  try {
    await fn(join(dir, "runs"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("a run of 450 steps comes a page at a time: 200 events and 300 spans, the rest on demand", async () => {
  await withRuns(async (runs) => {
    const runId = await writeRun(runs, { tools: 450 });
    const get = client(new FileStore({ runs }));
    const view: RunView = JSON.parse((await get(`api/runs/${runId}`)).text);
    assert.equal(view.summary.events, 452);
    assert.equal(view.summary.by_type.tool_called, 450);
    assert.equal(view.summary.spans, 451);
    assert.deepEqual(view.events.map((e) => e.seq), [...Array(200).keys()]);
    assert.equal(view.events_next, 199);
    assert.equal(view.spans.length, 300);
    assert.equal(view.spans_next, 300);
    const next = JSON.parse((await get(`api/runs/${runId}/events?after=199`)).text);
    assert.deepEqual(Object.keys(next).sort(), ["events", "events_next", "summary"]);
    assert.equal(next.events[0].seq, 200);
    assert.equal(next.events_next, 399);
    const last = JSON.parse((await get(`api/runs/${runId}/events?after=399`)).text);
    assert.deepEqual([last.events.length, last.events_next], [52, null]);
    const spans = JSON.parse((await get(`api/runs/${runId}/spans?offset=300`)).text);
    assert.deepEqual([spans.spans.length, spans.spans_next], [151, null]);
    const all: RunView = JSON.parse((await get(`api/runs/${runId}?limit=1000`)).text);
    assert.deepEqual([all.events.length, all.events_next], [452, null]);
    assert.ok(all.spans.every((s) => s.seqs.length <= 20 && s.event_count >= s.seqs.length));
  });
});

Deno.test("a page of long answers stops before 1 MiB of events, and each answer is cut with its size named", async () => {
  await withRuns(async (runs) => {
    // Each call's answer is cut to 16 K characters, and its request (the answers before it) to four of them.
    const runId = await writeRun(runs, { answers: Array(60).fill(17_000) });
    const get = client(new FileStore({ runs }));
    const page = (await get(`api/runs/${runId}`)).text;
    const view: RunView = JSON.parse(page);
    assert.ok(JSON.stringify(view.events).length <= 1024 * 1024 + 200_000, String(page.length));
    assert.ok(view.events.length < 50 && view.events_next !== null, String(view.events.length));
    const call = view.events.find((e) => e.type === "model_called")!;
    assert.equal(call.answer!.length, 16 * 1024);
    assert.ok(call.cut!.answer!.size > 17_000);
    // The request of a later call holds the answers before it: its payload is shown cut, its size named.
    const later = view.events.filter((e) => e.type === "model_called").at(-1)!;
    assert.ok(later.cut?.payload && later.cut.payload.size > 200_000, JSON.stringify(later.cut));
    const whole = await get(`api/runs/${runId}/events/${call.seq}/answer`);
    assert.equal(whole.status, 200);
    assert.equal(whole.text.length, 17_000 + "Answer 1: ".length);
    const content = JSON.parse((await get(`api/runs/${runId}/events/${call.seq}`)).text);
    assert.equal(content.shown.data.output_tokens, 17_000);
  });
});

Deno.test("the whole of a part shows only what the run page shows: not below bodies, not unverified unless asked", async () => {
  const run = "run-20261129T120000Z-0badc0de";
  const names = client(new FileStore({ runs: `${FIXTURES}runs` }), "names");
  const view: RunView = JSON.parse((await names(`api/runs/${run}`)).text);
  const call = view.events.find((e) => e.type === "model_called")!;
  assert.equal((await names(`api/runs/${run}/events/${call.seq}/answer`)).status, 403);
  assert.equal((await names(`api/runs/${run}/payloads/${call.payload_sha256}`)).status, 403);
  assert.equal((await names(`api/runs/${run}/events/${call.seq}`)).status, 200);
  const tampered = client(new FileStore({ runs: `${FIXTURES}runs-tampered` }));
  const refused = await tampered(`api/runs/${run}/payloads/${call.payload_sha256}`);
  assert.equal(refused.status, 403);
  assert.match(JSON.parse(refused.text).error, /does not verify; ask with \?untrusted=1/);
  const asked = await tampered(`api/runs/${run}/payloads/${call.payload_sha256}?untrusted=1`);
  assert.equal(asked.status, 200);
  assert.match(asked.text, /"prompt"/);
});

Deno.test("requests for pages of the same run at once read and check it once", async () => {
  await withRuns(async (runs) => {
    const runId = await writeRun(runs, { tools: 50 });
    const store = new FileStore({ runs });
    let reads = 0;
    const counting = Object.assign(Object.create(store), {
      readRun: (id: string) => (reads++, store.readRun(id)),
    }) as FileStore;
    const get = client(counting);
    const pages = await Promise.all(
      Array.from({ length: 8 }, (_, i) => get(`api/runs/${runId}${i % 2 ? `/events?after=${i}` : ""}`)),
    );
    assert.ok(pages.every((p) => p.status === 200));
    assert.equal(reads, 1);
    await get(`api/runs/${runId}`);
    assert.equal(reads, 2, "nothing is kept once the requests are answered");
  });
});

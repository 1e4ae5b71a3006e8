import assert from "node:assert/strict";
import { join } from "node:path";
import { findRun } from "../../../lib/provevi/runs/find_run.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { ReceivedRows } from "../../../lib/provevi/receiver/received_rows.ts";
import { decodeTraceRows } from "../../../lib/provevi/receiver/otlp_rows.ts";
import { SpanDaemon } from "../../../lib/provevi/receiver/span_daemon.ts";
import { readEventsText } from "../../../lib/provevi/evidence/read_events.ts";
import { sha256Hex } from "../../../lib/provevi/evidence/hash.ts";
import { OTLP_TRACE_REQUEST } from "../../../lib/provevi/telemetry/otlp_proto.ts";
import { spanBodies } from "../../bench/_spans.ts";
import { generalRows } from "./_rows_reference.ts";
import { jsonSpans, tempStore, writerWithDaemon } from "./_daemon.ts";

const text = new TextDecoder();

Deno.test("with prove serve, the run's writer makes the rows of the protobuf bodies it takes: the lines of one pass, in the order sent", async () => {
  await using t = await tempStore();
  await using daemon = SpanDaemon.start(t.store);
  const { run, spans, post } = await writerWithDaemon(t, daemon, "run-20261202T120000Z-0000a0a1");
  const bodies = spanBodies(3);
  // a scope after its spans: the one pass hands it back, and the general way takes it, in the daemon and the writer
  const name = new TextEncoder().encode("late.scope");
  const span = [
    0x0a,
    16,
    ...new Array(16).fill(7),
    0x12,
    8,
    ...new Array(8).fill(8),
    0x2a,
    name.length,
    ...name,
  ];
  const scopeSpans = [0x12, span.length, ...span, 0x0a, 3, 0x0a, 1, 0x73]; // its scope after its span
  const resourceSpans = [0x12, scopeSpans.length, ...scopeSpans];
  const late = new Uint8Array([0x0a, resourceSpans.length, ...resourceSpans]);
  assert.equal(decodeTraceRows(late), null);
  for (const body of [...bodies, late]) assert.equal(await post(body), 200);
  assert.equal(await post(jsonSpans(2, "json.span"), "application/json"), 200);
  await spans.close();
  await run.recorder.seal();
  const want = [...bodies.map((b) => text.decode(decodeTraceRows(b)!.lines)), generalRows(late)!.lines].join(
    "",
  );
  const lines = await Deno.readTextFile(join(run.writer.folder, "spans.jsonl"));
  // the JSON body's rows are the daemon's, written as it took it; the protobuf ones', the writer's, in order
  assert.deepEqual(
    lines.split("\n").filter((l) => l !== "" && !l.includes('"json.span"')),
    want.split("\n").filter((l) => l !== ""),
  );
  assert.equal(lines.split("\n").filter((l) => l.includes('"json.span"')).length, 2);
  const events =
    readEventsText(await Deno.readTextFile(join(run.writer.folder, "evidence", "events.jsonl"))).events;
  assert.deepEqual(events.filter((e) => e.type === "spans_received").map((e) => e.data.encoding), [
    "protobuf",
    "protobuf",
    "protobuf",
    "protobuf",
    "json",
  ]);
  for (const name of ["received.spans", "received-json.spans"]) {
    await assert.rejects(Deno.lstat(join(run.writer.folder, name)), Deno.errors.NotFound);
  }
  assert.ok((await verifyRun(await findRun(run.writer.folder))).ok);
});

Deno.test("a body whose rows the writer cannot write is in the evidence all the same, and the seal says the index lacks it", async () => {
  await using t = await tempStore();
  await using daemon = SpanDaemon.start(t.store);
  const { run, spans, post } = await writerWithDaemon(t, daemon, "run-20261202T120000Z-0000a0a2");
  await Deno.mkdir(join(run.writer.folder, "spans.jsonl")); // the index cannot be written
  const [body] = spanBodies(1);
  assert.equal(await post(body!), 200);
  await spans.close();
  await run.recorder.seal();
  const events =
    readEventsText(await Deno.readTextFile(join(run.writer.folder, "evidence", "events.jsonl"))).events;
  assert.ok(events.some((e) => e.type === "spans_received" && e.payload === sha256Hex(body!)));
  const problem = events.find((e) => e.type === "telemetry_problem");
  assert.match(
    String(problem?.data.problem),
    /the rows of 1 bodies of received.spans are not in spans.jsonl/,
  );
  assert.ok((await verifyRun(await findRun(run.writer.folder))).ok);
});

Deno.test("ReceivedRows makes no rows of a body prove serve would not take: not a request, too large, or rows that repeat a long scope name", async () => {
  const folder = await Deno.makeTempDir();
  try {
    const rows = new ReceivedRows(folder);
    const junk = new TextEncoder().encode("bytes nobody sent");
    rows.add(junk, sha256Hex(junk));
    const huge = new Uint8Array(17 * 1024 * 1024);
    rows.add(huge, "h".repeat(64));
    const scoped = OTLP_TRACE_REQUEST.encode(OTLP_TRACE_REQUEST.fromObject({
      resource_spans: [{
        scope_spans: [{
          scope: { name: "s".repeat(300_000) },
          spans: Array.from(
            { length: 100 },
            () => ({ trace_id: new Uint8Array(16).fill(1), span_id: new Uint8Array(8).fill(2), name: "x" }),
          ),
        }],
      }],
    })).finish();
    rows.add(scoped, sha256Hex(scoped));
    rows.close();
    assert.equal(rows.failed.size, 3);
    assert.match(rows.failed.get("h".repeat(64))!, /over 16777216 bytes/);
    assert.match(rows.failed.get(sha256Hex(scoped))!, /repeat their scope's name and version/);
    await assert.rejects(Deno.lstat(join(folder, "spans.jsonl")), Deno.errors.NotFound);
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
});

Deno.test("a link planted at received.spans loses no JSON body's spans: the seal says it could not read the file", async () => {
  await using t = await tempStore();
  await using daemon = SpanDaemon.start(t.store);
  const { run, spans, post } = await writerWithDaemon(t, daemon, "run-20261202T120000Z-0000a0a3");
  const victim = join(t.runs, "victim.txt");
  await Deno.writeTextFile(victim, "the user's own\n");
  await Deno.symlink(victim, join(run.writer.folder, "received.spans"));
  assert.equal(await post(jsonSpans(1, "kept"), "application/json"), 200);
  await spans.close();
  await run.recorder.seal();
  const events =
    readEventsText(await Deno.readTextFile(join(run.writer.folder, "evidence", "events.jsonl"))).events;
  assert.equal(events.filter((e) => e.type === "spans_received").length, 1);
  assert.ok(
    events.some((e) => e.type === "telemetry_problem" && /received.spans/.test(String(e.data.problem))),
  );
  assert.equal(await Deno.readTextFile(victim), "the user's own\n");
  assert.ok((await verifyRun(await findRun(run.writer.folder))).ok);
});

import assert from "node:assert/strict";
import { join } from "node:path";
import { findRun } from "../../../lib/provevi/runs/find_run.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { takeBodyRows, takeReceivedRows } from "../../../lib/provevi/receiver/received_rows.ts";
import { Texts } from "../../../lib/provevi/receiver/row_texts.ts";
import { SpanTake } from "../../../lib/provevi/evidence/spans_file.ts";
import { indexedSpans } from "../../../lib/provevi/store/trace.ts";
import { prove } from "../../../cli/prove.ts";
import { bufferIo } from "../../../cli/_io.ts";
import { decodeTraceRows } from "../../../lib/provevi/receiver/otlp_rows.ts";
import { SpanDaemon } from "../../../lib/provevi/receiver/span_daemon.ts";
import { readEventsText } from "../../../lib/provevi/evidence/read_events.ts";
import { sha256Hex } from "../../../lib/provevi/evidence/hash.ts";
import { packRecord } from "../../../lib/provevi/evidence/payload_pack.ts";
import { OTLP_TRACE_REQUEST } from "../../../lib/provevi/telemetry/otlp_proto.ts";
import { spanBodies } from "../../bench/_spans.ts";
import { generalRows } from "./_rows_reference.ts";
import { jsonSpans, tempStore, writerWithDaemon } from "./_daemon.ts";

const text = new TextDecoder();

Deno.test("with prove serve, the rows of the protobuf bodies are made from the run's payloads when read: the lines of one pass, in the order sent", async () => {
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
  // the index holds the JSON body's rows, the daemon's, written as it took it, and no protobuf body's
  const lines = (await Deno.readTextFile(join(run.writer.folder, "spans.jsonl"))).split("\n").filter(Boolean);
  assert.equal(lines.length, 2);
  assert.ok(lines.every((l) => l.includes('"json.span"')));
  const events =
    readEventsText(await Deno.readTextFile(join(run.writer.folder, "evidence", "events.jsonl"))).events;
  // a reader takes the index's rows, then the protobuf bodies', made from the payloads in the order they came
  const rows = await indexedSpans(await findRun(run.writer.folder), events);
  assert.deepEqual(rows.slice(0, 2).map((r) => r.name), ["json.span", "json.span"]);
  assert.deepEqual(rows.slice(2), want.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l)));
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

Deno.test("a reader makes no rows of a payload that is missing or changed, nor of a body named twice twice", async () => {
  const [body, other] = spanBodies(2);
  const sha = sha256Hex(body!);
  const event = (seq: number, payload: string, encoding = "protobuf") => ({
    seq,
    type: "spans_received",
    component: "SpanReceiver",
    data: { encoding, services: [], spans: 512 },
    payload,
  });
  const record = {
    folder: null,
    payload: (sha256: string) =>
      sha256 === sha ? Promise.resolve(body!) : Promise.reject(new Error(`no payload ${sha256}`)),
  };
  const events = [event(1, sha), event(2, sha256Hex(other!)), event(3, sha), event(4, sha, "json")];
  // deno-lint-ignore no-explicit-any
  const rows = await takeReceivedRows(record, events as any);
  assert.equal(rows.length, 512);
  assert.equal(new Set(rows.map((r) => r.span_id)).size, 512);
});

Deno.test("a reader makes no rows of a body prove serve would not take: not a request, too large, or rows that repeat a long scope name", () => {
  const take = new SpanTake();
  const texts = new Texts();
  takeBodyRows(new TextEncoder().encode("bytes nobody sent"), texts, take);
  takeBodyRows(new Uint8Array(17 * 1024 * 1024), texts, take);
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
  takeBodyRows(scoped, texts, take);
  assert.deepEqual(take.spans, []);
  assert.equal(take.full, false);
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

Deno.test("prove trace and prove show of a run sealed with prove serve show its program's spans, made from the payloads", async () => {
  await using t = await tempStore();
  await using daemon = SpanDaemon.start(t.store);
  const runId = "run-20261203T120000Z-0000a0a4";
  const { run, spans, post } = await writerWithDaemon(t, daemon, runId);
  const [body] = spanBodies(1);
  assert.equal(await post(body!), 200);
  await spans.close();
  await run.recorder.seal();
  await assert.rejects(Deno.lstat(join(run.writer.folder, "spans.jsonl")), Deno.errors.NotFound);
  const shown = bufferIo();
  assert.equal(await prove(["--runs", t.runs, "show", runId, "--json"], shown), 0, shown.stderr.join("\n"));
  const { spans: all } = JSON.parse(shown.stdout.join("\n")) as {
    spans: { name: string; trace_id: string }[];
  };
  assert.equal(all.length, 512);
  assert.deepEqual(new Set(all.map((s) => s.name)), new Set(["claude_code.tool", "claude_code.llm_request"]));
  const traceId = all[0]!.trace_id;
  const traced = bufferIo();
  assert.equal(await prove(["--runs", t.runs, "trace", traceId], traced), 0, traced.stderr.join("\n"));
  assert.match(traced.stdout[0]!, new RegExp(`^trace ${traceId}: 1 span in run ${runId}$`));
  assert.match(traced.stdout.join("\n"), /claude_code\.(tool|llm_request)/);
});

Deno.test("before the seal, and for a run whose writer ended before it, a reader makes the rows of the bodies prove serve wrote", async () => {
  await using t = await tempStore();
  await using daemon = SpanDaemon.start(t.store);
  const { run, spans, post } = await writerWithDaemon(t, daemon, "run-20261203T120000Z-0000a0a5");
  const bodies = spanBodies(2);
  for (const body of bodies) assert.equal(await post(body), 200);
  // no event names them yet: their rows come from received.spans, each once
  const before = await indexedSpans(await findRun(run.writer.folder), []);
  assert.equal(before.length, 1024);
  assert.equal(new Set(before.map((r) => r.span_id)).size, 1024);
  // a record whose bytes do not hash to its name gives no rows
  const forged = spanBodies(1)[0]!;
  await Deno.writeFile(
    join(run.writer.folder, "received.spans"),
    packRecord("0".repeat(64), forged),
    { append: true },
  );
  assert.equal((await indexedSpans(await findRun(run.writer.folder), [])).length, 1024);
  await spans.close();
  await run.recorder.seal();
  const events =
    readEventsText(await Deno.readTextFile(join(run.writer.folder, "evidence", "events.jsonl"))).events;
  const after = await indexedSpans(await findRun(run.writer.folder), events);
  assert.deepEqual(after.map((r) => r.span_id).sort(), before.map((r) => r.span_id).sort());
});

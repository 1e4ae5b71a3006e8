/**
 * With `prove serve`, the run's writer takes the protobuf bodies from `received.spans`, and a reader makes their
 * rows from the payloads (`received_rows.ts`): the run's program writes its run folder, so it may append records
 * there that hash right but that the daemon would never have taken, and a folder changed after may name such a
 * payload in an event. A reader must make no more of them than the daemon would have made of a request: a body of
 * more spans than a request may hold (16,384) made its rows all the same when the writer made them (a body of 16
 * MiB of bare spans is 559,000 rows, 176 MB of `spans.jsonl`; in the general way, a scope after its spans, 1.2 GB
 * of the writer's memory and 12 s of its thread, on a loaded machine), where the daemon answers 413.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { findRun } from "../../lib/provevi/runs/find_run.ts";
import { verifyRun } from "../../lib/provevi/runs/verify_run.ts";
import { takeBodyRows } from "../../lib/provevi/receiver/received_rows.ts";
import { Texts } from "../../lib/provevi/receiver/row_texts.ts";
import { SpanTake } from "../../lib/provevi/evidence/spans_file.ts";
import { indexedSpans } from "../../lib/provevi/store/trace.ts";
import { SpanDaemon } from "../../lib/provevi/receiver/span_daemon.ts";
import { DEFAULT_MAX_REQUEST_SPANS } from "../../lib/provevi/receiver/span_intake.ts";
import { packRecord } from "../../lib/provevi/evidence/payload_pack.ts";
import { sha256Hex } from "../../lib/provevi/evidence/hash.ts";
import { readEventsText } from "../../lib/provevi/evidence/read_events.ts";
import { spanBodies } from "../bench/_spans.ts";
import { jsonSpans, tempStore, writerWithDaemon } from "../provevi/receiver/_daemon.ts";
import { removeWritable } from "../_files.ts";
import { measuredInChild } from "./_setup.ts";

/** A varint's bytes. */
function varint(n: number): number[] {
  const out: number[] = [];
  for (; n >= 128; n = Math.floor(n / 128)) out.push((n & 127) | 128);
  out.push(n);
  return out;
}

/**
 * A request of `count` bare spans (two IDs each) in one `ScopeSpans`, its scope after them when `late` (the
 * rows' pass hands such a body back, and the general way reads it).
 */
function bareSpans(count: number, late: boolean): Uint8Array<ArrayBuffer> {
  const span = [0x0a, 16, ...new Array(16).fill(1), 0x12, 8, ...new Array(8).fill(2)];
  const scope = late ? [0x0a, 3, 0x0a, 1, 0x61] : [];
  const inner = new Uint8Array(count * (span.length + 2) + scope.length);
  for (let i = 0; i < count; i++) inner.set([0x12, span.length, ...span], i * (span.length + 2));
  inner.set(scope, count * (span.length + 2));
  const scopeHead = [0x12, ...varint(inner.length)];
  const head = [0x0a, ...varint(scopeHead.length + inner.length), ...scopeHead];
  const out = new Uint8Array(head.length + inner.length);
  out.set(head);
  out.set(inner, head.length);
  return out;
}

Deno.test("a reader makes no rows of a planted body of more spans than prove serve takes in a request", async () => {
  await using t = await tempStore();
  await using daemon = SpanDaemon.start(t.store);
  const { run, spans, post } = await writerWithDaemon(t, daemon, "run-20261202T120000Z-0000b0b1");
  const over = DEFAULT_MAX_REQUEST_SPANS + 1;
  const planted = [bareSpans(over, false), bareSpans(over, true)];
  // the daemon refuses each as a request
  for (const body of planted) assert.equal(await post(body), 413);
  const [good] = spanBodies(1);
  assert.equal(await post(good!), 200);
  // the program appends them to received.spans itself, each hashing right
  const received = join(run.writer.folder, "received.spans");
  for (const body of planted) {
    await Deno.writeFile(received, packRecord(sha256Hex(body), body), { append: true });
  }
  // the writer takes them while the run goes on (the seal stores only the bodies its events name)
  // (stored in the pack, or, as these are, each in a file of its own)
  const evidence = join(run.writer.folder, "evidence");
  const taken = async () => {
    const pack = await Deno.readFile(join(evidence, "payloads.pack")).catch(() => new Uint8Array());
    const stored = new TextDecoder("latin1").decode(pack) +
      (await Array.fromAsync(Deno.readDir(join(evidence, "payloads")))).map((e) => e.name).join(" ");
    return planted.every((b) => stored.includes(sha256Hex(b)));
  };
  for (let i = 0; i < 600 && !await taken(); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(await taken());
  await spans.close();
  await run.recorder.seal();
  const events =
    readEventsText(await Deno.readTextFile(join(run.writer.folder, "evidence", "events.jsonl"))).events;
  const rows = await indexedSpans(await findRun(run.writer.folder), events);
  assert.equal(rows.filter((r) => r.trace_id.startsWith("0101010101")).length, 0);
  assert.equal(rows.length, 512); // the good body's rows, and those only
  assert.equal(events.filter((e) => e.type === "spans_received").length, 1);
  const unnamed = events.find((e) =>
    e.type === "telemetry_problem" && /no spans_received/.test(String(e.data.problem))
  );
  for (const body of planted) {
    assert.match(String(unnamed?.data.problem), new RegExp(sha256Hex(body).slice(0, 12)));
  }
  assert.ok((await verifyRun(await findRun(run.writer.folder))).ok);
});

Deno.test("a reader makes no rows of a body of more spans than a request may hold, either way it is read", () => {
  const take = new SpanTake();
  const texts = new Texts();
  for (const count of [DEFAULT_MAX_REQUEST_SPANS, DEFAULT_MAX_REQUEST_SPANS + 1]) {
    for (const late of [false, true]) takeBodyRows(bareSpans(count, late), texts, take);
  }
  // the bodies a request may hold, each way; of the others, nothing
  assert.equal(take.spans.length, 2 * DEFAULT_MAX_REQUEST_SPANS);
});

Deno.test("bytes the program appends to received-json.spans lose no event: the bodies after them are named without a payload, the others kept", async () => {
  await using t = await tempStore();
  await using daemon = SpanDaemon.start(t.store);
  const { run, spans, post } = await writerWithDaemon(t, daemon, "run-20261202T120000Z-0000b0b2");
  const [first, second] = spanBodies(2);
  assert.equal(await post(first!, "application/x-protobuf"), 200);
  assert.equal(await post(jsonSpans(2, "json.before"), "application/json"), 200);
  // the program appends bytes that are no record: the daemon's next record lands after them
  await Deno.writeFile(
    join(run.writer.folder, "received-json.spans"),
    new TextEncoder().encode("no record\n"),
    {
      append: true,
    },
  );
  const after = jsonSpans(3, "json.after");
  assert.equal(await post(after, "application/json"), 200);
  assert.equal(await post(second!, "application/x-protobuf"), 200);
  await spans.close();
  await run.recorder.seal();
  const events =
    readEventsText(await Deno.readTextFile(join(run.writer.folder, "evidence", "events.jsonl"))).events;
  const received = events.filter((e) => e.type === "spans_received");
  assert.deepEqual(received.map((e) => [e.data.encoding, e.data.spans, e.payload ?? null]), [
    ["protobuf", 512, sha256Hex(first!)],
    ["json", 2, sha256Hex(new TextEncoder().encode(jsonSpans(2, "json.before")))],
    ["json", 3, null],
    ["protobuf", 512, sha256Hex(second!)],
  ]);
  const problems = events.filter((e) => e.type === "telemetry_problem").map((e) => String(e.data.problem));
  assert.ok(
    problems.some((p) =>
      /1 bodies .* are in neither/.test(p) && p.includes(sha256Hex(new TextEncoder().encode(after)))
    ),
    problems.join("\n"),
  );
  // the protobuf bodies' rows are all there, made from their payloads, and the JSON ones' (the daemon's)
  const rows = await indexedSpans(await findRun(run.writer.folder), events);
  assert.equal(rows.length, 512 * 2 + 2 + 3);
  assert.ok((await verifyRun(await findRun(run.writer.folder))).ok);
});

Deno.test("sparse files the program makes of the daemon's files cost the seal a window of them, not their size", async () => {
  const runs = await Deno.makeTempDir({ prefix: "provevi-daemon-" });
  try {
    // the run, its daemon and its writer, and the seal measured, in a process of their own: this one's RSS
    // counts what the files running beside it hold
    const { grew, got: run } = await measuredInChild<{ folder: string; first: string; before: string }>(
      "./_received_rows_work.ts",
      "sealOverSparse",
      runs,
      "run-20261202T120000Z-0000b0b3",
    );
    console.log(`the seal: ${Math.round(grew / 1024 / 1024)} MiB more memory`);
    assert.ok(grew < 300 * 1024 * 1024, `the seal took ${Math.round(grew / 1024 / 1024)} MiB more`);
    const events =
      readEventsText(await Deno.readTextFile(join(run.folder, "evidence", "events.jsonl"))).events;
    assert.deepEqual(events.filter((e) => e.type === "spans_received").map((e) => e.payload ?? null), [
      run.first,
      run.before,
      null,
      null,
    ]);
    assert.ok((await verifyRun(await findRun(run.folder))).ok);
  } finally {
    await removeWritable(runs);
  }
});

Deno.test("a daemon's file the program removes after the writer read it loses no event: the bodies it held after are named without a payload", async () => {
  await using t = await tempStore();
  await using daemon = SpanDaemon.start(t.store);
  const { run, spans, post } = await writerWithDaemon(t, daemon, "run-20261202T120000Z-0000b0b4");
  const [first, second] = spanBodies(2);
  const before = new TextEncoder().encode(jsonSpans(2, "json.before"));
  assert.equal(await post(first!, "application/x-protobuf"), 200);
  assert.equal(await post(before, "application/json"), 200);
  // the writer takes the JSON body while the run goes on; then the program removes the file
  const pack = join(run.writer.folder, "evidence", "payloads.pack");
  const taken = async () =>
    new TextDecoder("latin1").decode(await Deno.readFile(pack).catch(() => new Uint8Array())).includes(
      sha256Hex(before),
    );
  for (let i = 0; i < 600 && !await taken(); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(await taken());
  await Deno.remove(join(run.writer.folder, "received-json.spans"));
  // the daemon appends to the file it holds open, which no name reaches now
  const after = jsonSpans(3, "json.after");
  assert.equal(await post(after, "application/json"), 200);
  assert.equal(await post(second!, "application/x-protobuf"), 200);
  await spans.close();
  await run.recorder.seal();
  const events =
    readEventsText(await Deno.readTextFile(join(run.writer.folder, "evidence", "events.jsonl"))).events;
  assert.deepEqual(events.filter((e) => e.type === "spans_received").map((e) => e.payload ?? null), [
    sha256Hex(first!),
    sha256Hex(before),
    null,
    sha256Hex(second!),
  ]);
  const problems = events.filter((e) => e.type === "telemetry_problem").map((e) => String(e.data.problem));
  assert.ok(
    problems.some((p) => /received-json.spans at byte \d+: the file is gone/.test(p)),
    problems.join("\n"),
  );
  assert.ok((await verifyRun(await findRun(run.writer.folder))).ok);
});

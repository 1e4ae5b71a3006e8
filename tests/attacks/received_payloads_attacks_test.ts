/**
 * A reader of a run's spans (`prove show`, `prove trace`, every store's `trace`) makes the rows of the protobuf
 * bodies the run received from the payloads its `spans_received` events name (`received_rows.ts`). The reader
 * reads runs that are not verified, so a folder changed after its seal may name any payload there: one of 1 GiB,
 * or thousands of 16 MiB each, or fill the span index (no check covers it) so that no row of a payload is taken.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { findRun } from "../../lib/provevi/runs/find_run.ts";
import { verifyRun } from "../../lib/provevi/runs/verify_run.ts";
import { indexedSpans } from "../../lib/provevi/store/trace.ts";
import { SpanDaemon } from "../../lib/provevi/receiver/span_daemon.ts";
import { SPANS_READ_MAX } from "../../lib/provevi/evidence/spans_file.ts";
import { readEventsText } from "../../lib/provevi/evidence/read_events.ts";
import { spanBodies } from "../bench/_spans.ts";
import { tempStore, writerWithDaemon } from "../provevi/receiver/_daemon.ts";
import { forgedSpan } from "./_forged_spans.ts";
import { removeWritable } from "../_files.ts";
import { measuredInChild, sampleRun } from "./_setup.ts";
import { ProveviError } from "../../lib/provevi/evidence/errors.ts";

const MiB = 1024 * 1024;

/** Appends to a run's events.jsonl one `spans_received` event of the receiver for each payload name. */
async function nameReceived(folder: string, names: readonly string[]): Promise<void> {
  const path = join(folder, "evidence", "events.jsonl");
  const lines = (await Deno.readTextFile(path)).split("\n").filter(Boolean);
  const last = JSON.parse(lines.at(-1)!);
  const added = names.map((payload, i) =>
    JSON.stringify({
      ...last,
      seq: last.seq + 1 + i,
      type: "spans_received",
      component: "SpanReceiver",
      data: { encoding: "protobuf", services: [], spans: 1 },
      payload,
    }) + "\n"
  );
  await Deno.writeTextFile(path, added.join(""), { append: true });
}

/** Appends to a run's events.jsonl `count` events whose data holds some 1 MiB of empty objects (a heavy parse). */
async function heavyEvents(folder: string, count: number): Promise<void> {
  const path = join(folder, "evidence", "events.jsonl");
  const last = JSON.parse((await Deno.readTextFile(path)).split("\n").filter(Boolean).at(-1)!);
  const empties = new Array(350_000).fill({});
  const added = Array.from(
    { length: count },
    (_, i) => JSON.stringify({ ...last, seq: last.seq + 1 + i, type: "note", data: { empties } }) + "\n",
  );
  await Deno.writeTextFile(path, added.join(""), { append: true });
}

/** A payload file of `size` zero bytes that take no disk, named `name` in a run's evidence/payloads/. */
async function sparsePayload(folder: string, name: string, size: number): Promise<void> {
  const dir = join(folder, "evidence", "payloads");
  await Deno.mkdir(dir, { recursive: true });
  using file = await Deno.open(join(dir, name), { write: true, create: true });
  await file.truncate(size);
}

const hex64 = (n: number) => n.toString(16).padStart(64, "0");

Deno.test("prove show of a run whose events name a payload of 1 GiB does not read it: no body prove serve takes is so big", async () => {
  const { dir, folder } = await sampleRun("provevi-received-1g-");
  try {
    await sparsePayload(folder, hex64(1), 1024 * MiB);
    await nameReceived(folder, [hex64(1)]);
    const { grew, ms, got } = await measuredInChild<{ code: number }>(
      "./_received_payloads_work.ts",
      "showRun",
      folder,
    );
    console.log(`prove show: ${Math.round(grew / MiB)} MiB more memory, ${ms} ms`);
    assert.equal(got.code, 0);
    assert.ok(grew < 200 * MiB, `prove show took ${Math.round(grew / MiB)} MiB more`);
  } finally {
    await removeWritable(dir);
  }
});

Deno.test("prove show of a run whose events name many payloads of 16 MiB reads no more of them than an index may hold", async () => {
  const { dir, folder } = await sampleRun("provevi-received-many-");
  try {
    const names = Array.from({ length: 80 }, (_, i) => hex64(i + 1));
    for (const name of names) await sparsePayload(folder, name, 16 * MiB);
    await nameReceived(folder, names);
    const { ms, got } = await measuredInChild<{ code: number; read: number }>(
      "./_received_payloads_work.ts",
      "showRun",
      folder,
    );
    console.log(`prove show: read ${Math.round(got.read / MiB)} MiB, ${ms} ms`);
    assert.equal(got.code, 0);
    // 1,280 MiB named; the reader reads at most the 512 MiB an index may hold, and the run's own files
    assert.ok(got.read < 600 * MiB, `prove show read ${Math.round(got.read / MiB)} MiB`);
  } finally {
    await removeWritable(dir);
  }
});

Deno.test("a span index filled with forged spans hides none of the spans made from the run's payloads, nor changes one", async () => {
  await using t = await tempStore();
  await using daemon = SpanDaemon.start(t.store);
  const { run, spans, post } = await writerWithDaemon(t, daemon, "run-20261203T120000Z-0000c0c1");
  const [body] = spanBodies(1);
  assert.equal(await post(body!), 200);
  await spans.close();
  await run.recorder.seal();
  const folder = run.writer.folder;
  const events = readEventsText(await Deno.readTextFile(join(folder, "evidence", "events.jsonl"))).events;
  const real = await indexedSpans(await findRun(folder), events);
  assert.equal(real.length, 512);
  // the program (or anyone after the seal) fills spans.jsonl: a forged twin of a real span, then junk
  const twin = JSON.stringify({ ...real[0]!, name: "forged.name" }) + "\n";
  const junk = forgedSpan(0);
  await Deno.writeTextFile(join(folder, "spans.jsonl"), twin + junk.repeat(SPANS_READ_MAX));
  const rows = await indexedSpans(await findRun(folder), events);
  const ids = new Set(rows.map((r) => r.span_id));
  assert.ok(real.every((s) => ids.has(s.span_id)), "a span of the run's payloads is missing");
  // where the index and a payload give the same span, the payload's row is the one a reader keeps (the last)
  const last = new Map(rows.map((r) => [r.span_id, r]));
  assert.equal(last.get(real[0]!.span_id)!.name, real[0]!.name);
  assert.ok((await verifyRun(await findRun(folder))).ok);
});

Deno.test("the trace of a store parses no events of a run that neither holds the trace nor received a body", async () => {
  const { dir, folder } = await sampleRun("provevi-received-scan-");
  try {
    await heavyEvents(folder, 24);
    const { grew, got } = await measuredInChild<number>(
      "./_spans_index_work.ts",
      "trace",
      join(dir, "runs"),
      "0123456789abcdef0123456789abcdef",
    );
    console.log(`the trace: ${Math.round(grew / MiB)} MiB more memory`);
    assert.equal(got, 0);
    // the events' text is 24 MiB; parsed, they would take some 500 MiB more
    assert.ok(grew < 200 * MiB, `the trace took ${Math.round(grew / MiB)} MiB more`);
  } finally {
    await removeWritable(dir);
  }
});

Deno.test("the viewer's trace of a run whose events name a payload of 1 GiB, or one of 16 MiB again and again, reads no more than a reader of its rows", async () => {
  const { dir, folder } = await sampleRun("provevi-received-viewer-");
  try {
    await sparsePayload(folder, hex64(1), 1024 * MiB);
    await sparsePayload(folder, hex64(2), 16 * MiB);
    await nameReceived(folder, [hex64(1), ...new Array(80).fill(hex64(2))]);
    const { grew, got } = await measuredInChild<{ spans: number; read: number }>(
      "./_received_payloads_work.ts",
      "viewerReceived",
      folder,
    );
    console.log(
      `the viewer: read ${Math.round(got.read / MiB)} MiB, ${Math.round(grew / MiB)} MiB more memory`,
    );
    assert.equal(got.spans, 0);
    assert.ok(grew < 200 * MiB, `the viewer took ${Math.round(grew / MiB)} MiB more`);
    assert.ok(got.read < 600 * MiB, `the viewer read ${Math.round(got.read / MiB)} MiB`);
  } finally {
    await removeWritable(dir);
  }
});

Deno.test("a record refuses a payload past the bound its reader gives, from its file or the pack, unread", async () => {
  const { dir, folder, manifest } = await sampleRun("provevi-received-most-");
  try {
    const record = await findRun(folder);
    // the sample run's payloads are packed; one more is a file of its own
    await sparsePayload(folder, hex64(1), 1024);
    for (const { sha256, size } of manifest.payloads) {
      assert.equal((await record.payload(sha256, size)).length, size);
      await assert.rejects(() => record.payload(sha256, size - 1), ProveviError);
    }
    await assert.rejects(() => record.payload(hex64(1), 1023), /more than the 1023 a reader takes/);
    await assert.rejects(() => record.payload(hex64(1)), /was changed/);
  } finally {
    await removeWritable(dir);
  }
});

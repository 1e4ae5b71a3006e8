/**
 * Attacks on the viewer's live tail (`prove ui` following a run) by a run's program, which writes its run folder:
 * a sparse `live.jsonl` or `events.jsonl` of 600 MiB and no newline was read, on the first look, into one string:
 * a gigabyte of the viewer's memory for each page that followed the run, then `RangeError: Invalid string
 * length` out of the tail. A tail now reads at most 8 MiB a look, and a line past 16 MiB (an event's line holds
 * its payloads' hashes, not their bytes) ends its reading of the file.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { FileRunRecord } from "../../lib/provevi/store/file_run_record.ts";
import { liveTail } from "../../lib/provevi/viewer/live_tail.ts";
import { SAMPLE_RUN_ID, writeSampleRun } from "../provevi/_sample_run.ts";
import { measuredInChild } from "./_setup.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("tail line attacks");
const SIZE = 600 * 1024 * 1024;

async function sparse(path: string, size: number, head = ""): Promise<void> {
  using f = await Deno.open(path, { write: true, create: true, truncate: true });
  await f.write(new TextEncoder().encode(head));
  await f.truncate(size);
}

Deno.test("a tail of a sparse file of 600 MiB with no newline gives no line, throws nothing and keeps its memory", async () => {
  const path = await Deno.makeTempFile();
  try {
    await sparse(path, SIZE, '{"seq":0}\n');
    // measured in a process of its own: this one's RSS counts what the files running beside it hold
    const { grew, got: { lines, error } } = await measuredInChild<{ lines: string[]; error: string | null }>(
      "./_tail_line_work.ts",
      "tail",
      path,
    );
    console.log(`the tail: ${Math.round(grew / 2 ** 20)} MiB more memory`);
    tally.add("a sparse file of 600 MiB read by the tail", {
      stopped: error === null,
      recorded: lines.length === 1,
    });
    assert.equal(error, null, String(error));
    assert.deepEqual(lines, ['{"seq":0}']);
    assert.ok(grew < 512 * 1024 * 1024, `the tail took ${Math.round(grew / 2 ** 20)} MiB`);
  } finally {
    await Deno.remove(path);
  }
});

Deno.test("the live tail of a run whose program left a sparse live.jsonl of 600 MiB gives the run's events and ends", async () => {
  const dir = await Deno.makeTempDir({ prefix: "attack-tail-" });
  try {
    const store = new FileStore({ runs: join(dir, "runs") });
    await writeSampleRun(await store.openRun(SAMPLE_RUN_ID));
    await store.close();
    const folder = join(dir, "runs", SAMPLE_RUN_ID);
    await sparse(join(folder, "live.jsonl"), SIZE);
    const items = [];
    let error: unknown = null;
    try {
      for await (
        const item of liveTail(new FileRunRecord(SAMPLE_RUN_ID, folder), { level: "bodies", pollMs: 10 })
      ) {
        items.push(item);
      }
    } catch (e) {
      error = e;
    }
    const ended = items.at(-1)?.kind === "end";
    tally.add("a sparse live.jsonl of 600 MiB under the live tail", {
      stopped: error === null,
      recorded: ended,
    });
    assert.equal(error, null, String(error));
    assert.ok(ended, JSON.stringify(items.map((i) => i.kind)));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("tail line attacks: the tally", () => {
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});

/**
 * An attack on the viewer's live tail by a run's program, which writes its run folder: lines of many small values
 * (`{"a":[{},{},…]}`, each under a line's 16 MiB) in the events.jsonl of a running run. The tail parsed each line
 * it read with JSON.parse and kept them all, unweighed, at some 30 times their text, for as long as the page
 * stayed open (a file at the cap: some 15 GiB of the viewer's heap, for each page that follows the run). It now
 * weighs them as the verifier does (EVENTS_READ_WEIGHT; scaled here by `weight`) and ends, cut, past the weight.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { FileRunRecord } from "../../lib/provevi/store/file_run_record.ts";
import { liveTail, type TailItem } from "../../lib/provevi/viewer/live_tail.ts";
import { jsonLineWeight } from "../../lib/provevi/evidence/json_depth.ts";
import { SAMPLE_RUN_ID } from "../provevi/_sample_run.ts";
import { beforeTimeout, sampleRun } from "./_setup.ts";

const DENSE = `{"a":[${"{},".repeat(20_000)}{}]}`;

Deno.test("the live tail of a running run whose events.jsonl holds lines of many small values ends, cut, past the weight", async () => {
  const run = await sampleRun("attack-live-weight-");
  const stop = new AbortController();
  try {
    const path = join(run.folder, "evidence", "events.jsonl");
    const first = (await Deno.readTextFile(path)).split("\n")[0]!;
    await Deno.remove(join(run.folder, "evidence", "manifest.json")); // running
    await Deno.writeTextFile(path, `${first}\n${DENSE}\n${DENSE}\n${DENSE}\n`);
    const items: TailItem[] = [];
    const tail = (async () => {
      for await (
        const item of liveTail(new FileRunRecord(SAMPLE_RUN_ID, run.folder), {
          level: null,
          signal: stop.signal,
          pollMs: 20,
          weight: jsonLineWeight(first) + jsonLineWeight(DENSE),
        })
      ) items.push(item);
    })();
    const ended = await beforeTimeout(tail, 10_000);
    assert.notEqual(ended, "timeout", `the tail gave ${items.length} items and no end in 10 s`);
    assert.deepEqual(items.at(-1), { kind: "end", status: "cut" });
    assert.ok(items.filter((i) => i.kind === "event").length <= 2);
  } finally {
    stop.abort();
    await Deno.remove(run.dir, { recursive: true });
  }
});

/**
 * An attack on the viewer's live tail by a run's program, which writes its run folder: `live.jsonl` (the feed,
 * never evidence) with an item that names an event far ahead (`seq` 999,999,999). The tail waited for that event
 * before it gave any other, for as long as the page stayed open: the run's events never came, nor its end, and
 * the page showed a sealed run as running. The tail now gives the events as they come while it waits, and ends
 * with the run (stopped), giving every event (recorded).
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { FileRunRecord } from "../../lib/provevi/store/file_run_record.ts";
import { liveTail, type TailItem } from "../../lib/provevi/viewer/live_tail.ts";
import { SAMPLE_RUN_ID } from "../provevi/_sample_run.ts";
import { beforeTimeout, sampleRun } from "./_setup.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("live seq attacks");

for (const sealed of [false, true]) {
  Deno.test(`the live tail of a ${sealed ? "" : "running "}run whose live.jsonl names an event far ahead gives its events and its end`, async () => {
    const run = await sampleRun("attack-live-seq-");
    const stop = new AbortController();
    try {
      const events = (await Deno.readTextFile(join(run.folder, "evidence", "events.jsonl"))).trimEnd().split(
        "\n",
      );
      const manifest = join(run.folder, "evidence", "manifest.json");
      const kept = await Deno.readFile(manifest);
      if (!sealed) await Deno.remove(manifest);
      await Deno.writeTextFile(
        join(run.folder, "live.jsonl"),
        JSON.stringify({ type: "event", seq: 999_999_999 }) + "\n" +
          JSON.stringify({ type: "text", text: "x" }) + "\n",
      );
      const items: TailItem[] = [];
      const tail = (async () => {
        for await (
          const item of liveTail(new FileRunRecord(SAMPLE_RUN_ID, run.folder), {
            level: "bodies",
            signal: stop.signal,
            pollMs: 20,
          })
        ) items.push(item);
      })();
      // the run's program seals the run a little later
      if (!sealed) setTimeout(() => Deno.writeFile(manifest, kept), 300);
      const ended = await beforeTimeout(tail, 10_000);
      const given = items.filter((i) => i.kind === "event").length;
      const end = items.at(-1)?.kind === "end";
      tally.add(`${sealed ? "a sealed" : "a running"} run`, {
        stopped: ended !== "timeout" && end,
        recorded: given === events.length,
      });
      assert.notEqual(ended, "timeout", `the tail gave ${given} events and no end in 10 s`);
      assert.ok(end, "the tail ends with the run's end");
      assert.equal(given, events.length);
    } finally {
      stop.abort();
      await Deno.remove(run.dir, { recursive: true });
    }
  });
}

Deno.test("live seq attacks: the tally", () => {
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});

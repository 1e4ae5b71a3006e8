/**
 * Attacks on the viewer's live feed by a run's program, which writes its run folder: `live.jsonl` (the pieces of
 * the model's answer as they stream, beside the evidence and never part of it) replaced by one whose text items
 * are forged. The viewer's tail gave the forged pieces, and, once text had streamed, sent the model call's event
 * without its recorded answer ("the answers came as text"): the page kept the forged answer, marked
 * `Answer · streamed`, beside the events that verify. The event of a model call now always brings the answer
 * its evidence records, which the page shows in place of what streamed; what streamed and no event backs is
 * marked as not checked.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { FileRunRecord } from "../../lib/provevi/store/file_run_record.ts";
import { liveTail, type TailItem } from "../../lib/provevi/viewer/live_tail.ts";
import { SAMPLE_ANSWER, SAMPLE_RUN_ID, writeSampleRun } from "../provevi/_sample_run.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("live feed attacks");
const FORGED = "Revenue fell 40% in Q3; the board resigned.";

Deno.test("the live tail of a run whose live.jsonl streams a forged answer gives the model call's recorded answer with its event", async () => {
  const dir = await Deno.makeTempDir({ prefix: "attack-live-feed-" });
  try {
    const store = new FileStore({ runs: join(dir, "runs") });
    const manifest = await writeSampleRun(await store.openRun(SAMPLE_RUN_ID));
    await store.close();
    const folder = join(dir, "runs", SAMPLE_RUN_ID);
    // the forged feed: the answer's pieces before the model call's event, then every event, as provr writes it
    const items: unknown[] = [
      { type: "event", n: 1, seq: 0 },
      ...FORGED.split(" ").map((word, i) => ({ type: "text", n: 2 + i, text: (i ? " " : "") + word })),
      ...Array.from({ length: manifest.events - 1 }, (_, i) => ({ type: "event", n: 100 + i, seq: i + 1 })),
    ];
    await Deno.writeTextFile(join(folder, "live.jsonl"), items.map((i) => JSON.stringify(i) + "\n").join(""));
    const given: TailItem[] = [];
    for await (
      const item of liveTail(new FileRunRecord(SAMPLE_RUN_ID, folder), { level: "bodies", pollMs: 10 })
    ) {
      given.push(item);
    }
    const call = given.find((i) => i.kind === "event" && i.event.type === "model_called");
    const recorded = call?.kind === "event" ? call.event.answer : undefined;
    tally.add("a forged answer streamed in live.jsonl", {
      stopped: recorded === SAMPLE_ANSWER,
      recorded: given.at(-1)?.kind === "end",
    });
    assert.equal(recorded, SAMPLE_ANSWER, "the model call's event came without its recorded answer");
    assert.equal(given.at(-1)?.kind, "end");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("live feed attacks: the tally", () => {
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});

/**
 * An attack on the trace of a store that has no index of spans (the file store's `trace`, and `trace(store, id)`
 * for any store without one): it reads every run's span index, each bounded (`SPANS_READ_MAX`,
 * `SPANS_READ_WEIGHT`), and gathers the spans of the trace from all of them. Five runs whose `spans.jsonl` each
 * held 200,000 forged spans of one trace took the trace 1,155 MiB (the bound of one run, five times; more runs,
 * more). The trace keeps no more than one run's index may give.
 * @module
 */
import { FORGED_TRACE, forgedSpan } from "./_forged_spans.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import { SPANS_READ_MAX } from "../../lib/provevi/evidence/spans_file.ts";
import { measuredInChild, sampleRun } from "./_setup.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("trace of runs attacks");
const MiB = 1024 * 1024;
const RUNS = 5;

Deno.test(`the trace of a store of ${RUNS} runs, each with 200,000 forged spans of it, is read in bounded memory`, async () => {
  const run = await sampleRun("attack-trace-runs-");
  try {
    for (let r = 0; r < RUNS; r++) {
      const folder = r === 0
        ? run.folder
        : join(run.dir, "runs", `run-20261129T120000Z-0badc0${r.toString(16).padStart(2, "0")}`);
      if (r > 0) {
        await Deno.mkdir(folder);
        await Deno.mkdir(join(folder, "evidence"));
        await Deno.copyFile(
          join(run.folder, "evidence", "events.jsonl"),
          join(folder, "evidence", "events.jsonl"),
        );
      }
      using file = await Deno.open(join(folder, "spans.jsonl"), { create: true, append: true });
      for (let b = 0; b < 20; b++) {
        const lines = Array.from({ length: 10_000 }, (_, i) => forgedSpan(r * 1e7 + b * 10_000 + i));
        const block = new TextEncoder().encode(lines.join(""));
        for (let done = 0; done < block.length;) done += await file.write(block.subarray(done));
      }
    }
    const traced = await measuredInChild<number>(
      "./_spans_index_work.ts",
      "trace",
      join(run.dir, "runs"),
      FORGED_TRACE,
    );
    console.log(`the trace gave ${traced.got} spans in ${Math.round(traced.grew / MiB)} MiB more memory`);
    const most = 768; // one run's index at its bounds, and the trace's spans at theirs
    tally.add(`${RUNS} runs of forged spans of one trace`, {
      stopped: traced.grew < most * MiB,
      recorded: traced.got >= 200_000 && traced.got <= SPANS_READ_MAX,
    });
    assert.ok(traced.grew < most * MiB, `the trace took ${Math.round(traced.grew / MiB)} MiB`);
    assert.ok(traced.got >= 200_000 && traced.got <= SPANS_READ_MAX, `${traced.got} spans`);
  } finally {
    await Deno.remove(run.dir, { recursive: true });
  }
});

Deno.test("trace of runs attacks: the tally", () => {
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});

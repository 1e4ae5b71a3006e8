/**
 * Attacks on the readers of a run's span index, `spans.jsonl`: the file lies beside the evidence, where the
 * run's program can write, and no check covers it (it is an index). It was read whole, up to 512 MiB, into one
 * string, then split and parsed: a sparse file of one line of zeros took a gigabyte of `prove show`, and a file
 * of small forged spans as many objects as it held lines. A reader now takes it a bounded piece at a time
 * (`LineReader`), ends at a line past 16 MiB, and keeps at most `SPANS_READ_MAX` spans; `prove show` and the
 * store's `trace` show what the evidence holds.
 * @module
 */
import { FORGED_TRACE, forgedSpan } from "./_forged_spans.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import { SPANS_READ_MAX } from "../../lib/provevi/evidence/spans_file.ts";
import { DEFAULT_RUN_LIMITS } from "../../lib/provevi/receiver/run_budget.ts";
import { measuredInChild, sampleRun } from "./_setup.ts";
import { Tally } from "./_tally.ts";
import { bufferIo } from "../../cli/_io.ts";
import { prove } from "../../cli/prove.ts";

const tally = new Tally("spans index attacks");
const MiB = 1024 * 1024;

const SHAPES: Record<
  string,
  { make: (path: string) => Promise<void>; spans: (n: number) => boolean; most: number }
> = {
  "a sparse file just under 512 MiB, one line of zeros": {
    make: (path) => Deno.truncate(path, 512 * MiB - 4096),
    spans: (n) => n === 1, // the span before the zeros
    most: 128, // a tail's reads: 8 MiB at a time, up to a line of 16 MiB, as the live tail's
  },
  [`${(SPANS_READ_MAX * 1.5).toLocaleString("en-US")} small forged spans`]: {
    make: async (path) => {
      using file = await Deno.open(path, { append: true });
      const block = new TextEncoder().encode(
        Array.from({ length: 10_000 }, (_, i) => forgedSpan(i)).join(""),
      );
      for (let i = 0; i < SPANS_READ_MAX * 1.5 / 10_000; i++) {
        for (let done = 0; done < block.length;) done += await file.write(block.subarray(done));
      }
    },
    // all a run may send by default, then the weight the readers parse (SPANS_READ_WEIGHT) ends it
    spans: (n) => n >= DEFAULT_RUN_LIMITS.maxSpans && n <= SPANS_READ_MAX,
    most: 512, // as many spans as a run at its limits holds: about 1 KiB each
  },
};

for (const [shape, { make, spans, most }] of Object.entries(SHAPES)) {
  Deno.test(`the readers of a run's span index that is ${shape} read it in bounded memory`, async () => {
    const run = await sampleRun("attack-spans-index-");
    try {
      const path = join(run.folder, "spans.jsonl");
      await Deno.writeTextFile(path, forgedSpan(1 << 30), { append: true });
      await make(path);
      const read = await measuredInChild<number>("./_spans_index_work.ts", "index", run.folder);
      const traced = await measuredInChild<number>(
        "./_spans_index_work.ts",
        "trace",
        join(run.dir, "runs"),
        FORGED_TRACE,
      );
      console.log(
        `${shape}: the index gave ${read.got} spans in ${Math.round(read.grew / MiB)} MiB more memory; ` +
          `trace ${traced.got} spans in ${Math.round(traced.grew / MiB)} MiB`,
      );
      // prove show: the run and its events, no stack
      const io = bufferIo();
      const code = await prove(["--runs", join(run.dir, "runs"), "show", run.folder], io);
      tally.add(shape, {
        stopped: read.grew < most * MiB && traced.grew < most * MiB,
        recorded: spans(read.got) && code === 0,
      });
      assert.ok(read.grew < most * MiB, `the index took ${Math.round(read.grew / MiB)} MiB`);
      assert.ok(traced.grew < most * MiB, `the trace took ${Math.round(traced.grew / MiB)} MiB`);
      assert.ok(spans(read.got), `${read.got} spans`);
      assert.equal(code, 0, io.stderr.join("\n"));
    } finally {
      await Deno.remove(run.dir, { recursive: true });
    }
  });
}

Deno.test("spans index attacks: the tally", () => {
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});

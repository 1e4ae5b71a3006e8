/**
 * Attacks on the readers of a run's span index, `spans.jsonl`, with spans that are few but weigh much: a line
 * takes far more memory parsed than as text when it holds many small JSON values (an empty object is 3 bytes
 * of text and about 90 bytes of the heap). Two forged spans of 15 MiB whose `events` were empty objects took
 * 923 MiB of `prove show` and the store's `trace`; the half GiB a file may hold would take some 15 GiB. The
 * readers now weigh each line before they parse it (`SPANS_READ_WEIGHT`), and read no further past the weight.
 * @module
 */
import { FORGED_TRACE, forgedSpan } from "./_forged_spans.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import { measuredInChild, sampleRun } from "./_setup.ts";
import { Tally } from "./_tally.ts";
import { bufferIo } from "../../cli/_io.ts";
import { prove } from "../../cli/prove.ts";

const tally = new Tally("spans index weight attacks");
const MiB = 1024 * 1024;

/** A span line the readers take as a span, its `events` filled with `fill` to about `bytes`. */
function heavySpan(i: number, fill: string, bytes: number): string {
  return forgedSpan(i, `[${fill.repeat(Math.floor(bytes / fill.length))}{}]`);
}

const SHAPES: Record<string, { fill: string; lines: number }> = {
  "2 spans of 15 MiB whose events are empty objects": { fill: "{},", lines: 2 },
  "4 spans of 15 MiB whose events are empty arrays": { fill: "[],", lines: 4 },
  "10 spans of 15 MiB whose events are short texts": { fill: '"ab",', lines: 10 },
};

for (const [shape, { fill, lines }] of Object.entries(SHAPES)) {
  Deno.test(`the readers of a run's span index of ${shape} read it in bounded memory`, async () => {
    const run = await sampleRun("attack-spans-weight-");
    try {
      const path = join(run.folder, "spans.jsonl");
      {
        using file = await Deno.open(path, { create: true, write: true });
        for (let i = 0; i < lines; i++) {
          const bytes = new TextEncoder().encode(heavySpan(i + 1, fill, 15 * MiB));
          for (let done = 0; done < bytes.length;) done += await file.write(bytes.subarray(done));
        }
      }
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
      const io = bufferIo();
      const code = await prove(["--runs", join(run.dir, "runs"), "show", run.folder], io);
      const most = 512; // the weight the readers parse at most (SPANS_READ_WEIGHT), in MiB
      tally.add(shape, {
        stopped: read.grew < most * MiB && traced.grew < most * MiB,
        recorded: code === 0,
      });
      assert.ok(read.grew < most * MiB, `the index took ${Math.round(read.grew / MiB)} MiB`);
      assert.ok(traced.grew < most * MiB, `the trace took ${Math.round(traced.grew / MiB)} MiB`);
      assert.equal(code, 0, io.stderr.join("\n"));
    } finally {
      await Deno.remove(run.dir, { recursive: true });
    }
  });
}

Deno.test("spans index weight attacks: the tally", () => {
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});

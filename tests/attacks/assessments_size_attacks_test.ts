/**
 * Attacks on the reading of a run's `assessments.jsonl` (judgments of its events and spans, beside the evidence)
 * by its shape: a sparse file just under the 512 MiB cap, one line of zeros, was read whole into a string; a file
 * of four million empty lines was a problem object each, as `events.jsonl`'s were before they were bounded. The
 * file is now read with the lines' bounds of `events.jsonl` (a line past 16 MiB is refused as it comes), and its
 * check stops after 1,000 problems, or 400,000 assessments, saying so in one line.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { measuredInChild, sampleRun } from "./_setup.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("assessments size attacks");
const MiB = 1024 * 1024;

const SHAPES: Record<string, { make: (path: string) => Promise<void>; answer: RegExp }> = {
  "a sparse file just under the 512 MiB cap": {
    make: async (path) => {
      await Deno.writeFile(path, new Uint8Array());
      await Deno.truncate(path, 512 * MiB - 4096);
    },
    answer:
      /^assessments\.unreadable assessments\.jsonl cannot be read: .*line 1 holds more than 16777216 bytes/,
  },
  "four million empty lines": {
    make: (path) => Deno.writeFile(path, new Uint8Array(4_000_000).fill(0x0a)),
    answer:
      /^assessments\.unreadable assessments\.jsonl has 1000 problems by line 1000: the rest of it is not read$/,
  },
};

for (const [shape, { make, answer }] of Object.entries(SHAPES)) {
  Deno.test(`prove verify of a run whose assessments.jsonl is ${shape} answers in one line, in bounded memory`, async () => {
    const run = await sampleRun("attack-assessments-size-");
    try {
      await make(join(run.folder, "assessments.jsonl"));
      const { grew, got: check } = await measuredInChild<{
        ok: boolean;
        problems: { code: string; message: string }[];
      }>("./_events_size_work.ts", "verify", run.folder);
      const found = check.problems.filter((p) => p.code.startsWith("assessments.")).map((p) =>
        `${p.code} ${p.message}`
      );
      console.log(
        `${shape}: ${Math.round(grew / MiB)} MiB more memory, ${found.length} problems: ${found.at(-1)}`,
      );
      tally.add(shape, {
        stopped: grew < 128 * MiB && found.length <= 1001,
        recorded: !check.ok && found.some((f) => answer.test(f)),
      });
      assert.ok(grew < 128 * MiB, `the check took ${Math.round(grew / MiB)} MiB`);
      assert.ok(found.length <= 1001, `${found.length} problems`);
      assert.equal(check.ok, false);
      assert.ok(found.some((f) => answer.test(f)), JSON.stringify(found.slice(-2)));
      assert.ok(found.every((f) => !f.includes("\n")));
    } finally {
      await Deno.remove(run.dir, { recursive: true });
    }
  });
}

Deno.test("assessments size attacks: the tally", () => {
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});

/**
 * An attack on the adding of an assessment to the file store (`assessments.jsonl`, beside the evidence, where the
 * run's program can write): the store looks at the file's size, then locks it and reads it whole to chain the
 * new line from the last. A program that holds the file locked (flock) while the store looks, and makes it a
 * sparse file of more than the 512 MiB a reader takes before it lets go, had the store read all of it: a GiB of
 * memory for a file a gigabyte long, more for a longer one. The store must refuse in one line, in bounded
 * memory, and write nothing (stopped); the file keeps what it held (recorded). And a file made sparse just under
 * the cap, read whole by the check of the run (twice over: its bytes, then its text), took \`prove verify\` and
 * each run the viewer checked 1,031 MiB; its line past any an assessment makes now ends the read, and the check
 * names the file.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { EVIDENCE_TEXT_MAX_BYTES } from "../../lib/provevi/evidence/payload_pack.ts";
import { SAMPLE_RUN_ID } from "../provevi/_sample_run.ts";
import { measuredInChild, sampleRun } from "./_setup.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("assessments grow attacks");
const MiB = 1024 * 1024;

Deno.test("an assessments.jsonl made sparse past the cap while the store waits for its lock is refused, in bounded memory", async () => {
  const run = await sampleRun("attack-assess-grow-");
  try {
    const bytes = EVIDENCE_TEXT_MAX_BYTES + 8 * MiB;
    const added = await measuredInChild<{ said: string; size: number }>(
      "./_assess_grow_work.ts",
      "assess",
      join(run.dir, "runs"),
      SAMPLE_RUN_ID,
      bytes,
    );
    console.log(`the store said "${added.got.said}" in ${Math.round(added.grew / MiB)} MiB more memory`);
    const stopped = added.grew < 64 * MiB && added.got.said.startsWith("refused:") &&
      !added.got.said.includes("\n");
    tally.add("a sparse file past the cap, made while the store waited for the lock", {
      stopped,
      recorded: added.got.size === bytes,
    });
    assert.ok(added.grew < 64 * MiB, `the store took ${Math.round(added.grew / MiB)} MiB`);
    assert.match(added.got.said, /^refused: [^\n]*more than/);
    assert.equal(added.got.size, bytes, "nothing written");
  } finally {
    await Deno.remove(run.dir, { recursive: true });
  }
});

Deno.test("a sparse assessments.jsonl just under the cap is checked, and its assessments read, in bounded memory", async () => {
  const run = await sampleRun("attack-assess-sparse-");
  try {
    const path = join(run.folder, "assessments.jsonl");
    await Deno.writeTextFile(path, "");
    await Deno.truncate(path, EVIDENCE_TEXT_MAX_BYTES - 4096);
    const checked = await measuredInChild<{ problems: string[]; given: number | string }>(
      "./_assess_grow_work.ts",
      "verify",
      join(run.dir, "runs"),
      SAMPLE_RUN_ID,
    );
    console.log(
      `the check found ${checked.got.problems.join(", ")} in ${
        Math.round(checked.grew / MiB)
      } MiB more memory; ` +
        `the store gave ${checked.got.given}`,
    );
    tally.add("a sparse file just under the cap, checked", {
      stopped: checked.grew < 128 * MiB,
      recorded: checked.got.problems.includes("assessments.unreadable"),
    });
    assert.ok(checked.grew < 128 * MiB, `the check took ${Math.round(checked.grew / MiB)} MiB`);
    assert.deepEqual(checked.got.problems, ["assessments.unreadable"]);
  } finally {
    await Deno.remove(run.dir, { recursive: true });
  }
});

Deno.test("assessments grow attacks: the tally", () => {
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});

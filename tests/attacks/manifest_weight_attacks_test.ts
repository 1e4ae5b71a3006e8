/**
 * An attack on the check of a run's manifest (`evidence/manifest.json`, which the run's program can replace after
 * the seal): a manifest of many small values (`{"lost":[{},{},…]}`), 110 MiB, well under the 512 MiB of an
 * evidence text. The verifier parsed it whole with JSON.parse, unweighed, at some 30 times its text, before any
 * check of its fields (a manifest at the cap: some 15 GiB). It is now weighed as the lines of events.jsonl are
 * (EVENTS_READ_WEIGHT) and, past it, named unreadable without being parsed (stopped), as a problem of the manifest
 * (recorded).
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { SAMPLE_RUN_ID } from "../provevi/_sample_run.ts";
import { measuredInChild, sampleRun } from "./_setup.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("manifest weight attacks");
const MiB = 1024 * 1024;

/** Replaces the run's manifest with one of 110 MiB of empty objects: `{"lost":[{},{},…]}`. */
async function denseManifest(folder: string): Promise<void> {
  const piece = new TextEncoder().encode("{},".repeat(MiB / 3 | 0));
  using file = await Deno.open(join(folder, "evidence", "manifest.json"), { write: true, truncate: true });
  await file.write(new TextEncoder().encode('{"lost":['));
  for (let i = 0; i < 110; i++) await file.write(piece);
  await file.write(new TextEncoder().encode("{}]}\n"));
}

Deno.test("a manifest of many small values is named unreadable by the check, not parsed", async () => {
  const run = await sampleRun("attack-manifest-weight-");
  try {
    await denseManifest(run.folder);
    const checked = await measuredInChild<string[]>(
      "./_verify_work.ts",
      "verify",
      join(run.dir, "runs"),
      SAMPLE_RUN_ID,
    );
    console.log(
      `the check found ${checked.got.join("; ")} in ${Math.round(checked.grew / MiB)} MiB more memory`,
    );
    const unreadable = checked.got.filter((p) => p.startsWith("manifest.unreadable:"));
    tally.add("a manifest of 110 MiB of empty objects", {
      stopped: checked.grew < 1024 * MiB,
      recorded: unreadable.length === 1,
    });
    assert.ok(checked.grew < 1024 * MiB, `the check took ${Math.round(checked.grew / MiB)} MiB`);
    assert.equal(unreadable.length, 1, checked.got.join("\n"));
    assert.match(unreadable[0]!, /would take more than \d+ bytes of memory read: it is not read$/);
  } finally {
    await Deno.remove(run.dir, { recursive: true });
  }
});

Deno.test("the readers of a manifest's last hash and seal weigh it first: the seal's columns and the log's leaf of a manifest of many small values", async () => {
  const run = await sampleRun("attack-manifest-weight-");
  try {
    await denseManifest(run.folder);
    const read = await measuredInChild<{ row: string | null; leaf: string }>(
      "./_verify_work.ts",
      "sealReaders",
      run.folder,
    );
    console.log(
      `the seal's readers: ${JSON.stringify(read.got)} in ${Math.round(read.grew / MiB)} MiB more memory`,
    );
    tally.add("the seal's readers of a manifest of 110 MiB of empty objects", {
      stopped: read.grew < 1024 * MiB,
      recorded: read.got.row === null && /manifest\.json is not JSON/.test(read.got.leaf),
    });
    assert.ok(read.grew < 1024 * MiB, `the readers took ${Math.round(read.grew / MiB)} MiB`);
    assert.equal(read.got.row, null);
    assert.match(read.got.leaf, /manifest\.json is not JSON/);
  } finally {
    await Deno.remove(run.dir, { recursive: true });
  }
});

Deno.test("manifest weight attacks: the tally", () => {
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});

/**
 * An attack on the check of a run's attestation (`evidence/attestation.dsse.json`, which the run's program can
 * put in place, or replace after the seal): a sparse file just under the 512 MiB cap of an evidence file was read
 * whole, bytes then text, taking `prove verify` (and the viewer, for each run it checks) 1,029 MiB. An envelope
 * holds the run's statement, which holds no more than its evidence gives (a subject for each payload the manifest
 * lists and each output an event records, the inputs and names of the events), so a file far larger than the
 * evidence cannot be its attestation: the check names it without reading it (stopped), as a problem of the
 * attestation (recorded).
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { EVIDENCE_TEXT_MAX_BYTES } from "../../lib/provevi/evidence/payload_pack.ts";
import { SAMPLE_RUN_ID } from "../provevi/_sample_run.ts";
import { measuredInChild, sampleRun } from "./_setup.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("attestation size attacks");
const MiB = 1024 * 1024;

Deno.test("a sparse attestation.dsse.json just under the cap is named by the check, not read", async () => {
  const run = await sampleRun("attack-attestation-size-");
  try {
    const path = join(run.folder, "evidence", "attestation.dsse.json");
    await Deno.writeTextFile(path, "");
    await Deno.truncate(path, EVIDENCE_TEXT_MAX_BYTES - 4096);
    const checked = await measuredInChild<string[]>(
      "./_verify_work.ts",
      "verify",
      join(run.dir, "runs"),
      SAMPLE_RUN_ID,
    );
    console.log(
      `the check found ${checked.got.join("; ")} in ${Math.round(checked.grew / MiB)} MiB more memory`,
    );
    tally.add("a sparse attestation just under the cap", {
      stopped: checked.grew < 128 * MiB,
      recorded: checked.got.length === 1 && checked.got[0]!.startsWith("attestation.unreadable:"),
    });
    assert.ok(checked.grew < 128 * MiB, `the check took ${Math.round(checked.grew / MiB)} MiB`);
    assert.equal(checked.got.length, 1, checked.got.join("\n"));
    assert.match(
      checked.got[0]!,
      /^attestation\.unreadable: evidence\/attestation\.dsse\.json cannot be read: /,
    );
  } finally {
    await Deno.remove(run.dir, { recursive: true });
  }
});

Deno.test("attestation size attacks: the tally", () => {
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});

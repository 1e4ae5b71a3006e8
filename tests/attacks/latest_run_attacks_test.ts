/**
 * `latest` orders the runs begun in one second by the time of their first events: it read each one's whole
 * events.jsonl to find its first line, so a run folder's file made a hole of hundreds of MiB took every
 * `prove show latest` as much memory, twice over.
 * @module
 */
import assert from "node:assert/strict";
import { removeWritable } from "../_files.ts";
import { measuredInChild } from "./_setup.ts";
import { twoRuns } from "./_latest_work.ts";

const MiB = 1024 * 1024;

Deno.test("latest reads the first line of each run begun in its second, not an events.jsonl of 200 MiB", async () => {
  const runs = await Deno.makeTempDir({ prefix: "latest-" });
  try {
    const ids = await twoRuns(runs, 200 * 1024 * 1024);
    const { grew, got } = await measuredInChild<string>("./_latest_work.ts", "latest", runs);
    // the second run began last; the rest of the first's file is past its first line, which is all it takes
    assert.equal(got, ids[1]);
    assert.ok(grew < 64 * MiB, `latest took ${Math.round(grew / MiB)} MiB`);
  } finally {
    await removeWritable(runs);
  }
});

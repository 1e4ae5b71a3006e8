import assert from "node:assert/strict";
import { join } from "node:path";
import { findRun, verifyRun } from "../../../lib/provevi/mod.ts";
import { writeRun } from "../_run.ts";

const ID = "run-20261129T120000Z-00000001";

Deno.test("findRun() names a folder's run by its first event, even when the event's data holds a run_id", async () => {
  const dir = await Deno.makeTempDir({ prefix: "provevi-find-" });
  try {
    const folder = await writeRun(join(dir, ID), ID, { created: { spec: { run_id: "run-elsewhere" } } });
    const record = await findRun(folder);
    assert.equal(record.runId, ID);
    assert.ok((await verifyRun(record)).ok);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("findRun() names a copied folder's run by a first event longer than one read", async () => {
  const dir = await Deno.makeTempDir({ prefix: "provevi-find-" });
  try {
    // The folder's name is not the run's, and the first line is longer than 64 KiB.
    const folder = await writeRun(join(dir, "a-copy"), ID, {
      created: { spec: { prompt: "x".repeat(70_000) } },
    });
    const record = await findRun(folder);
    assert.equal(record.runId, ID);
    assert.ok((await verifyRun(record)).ok);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

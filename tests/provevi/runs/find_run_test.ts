import assert from "node:assert/strict";
import { join } from "node:path";
import { findRun } from "../../../lib/provevi/runs/find_run.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
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

Deno.test("verifyRun() refuses a run folder whose name is not the run_id of its events, by path as by ID", async () => {
  const dir = await Deno.makeTempDir({ prefix: "provevi-find-" });
  try {
    const folder = await writeRun(join(dir, "a-copy"), ID);
    const byPath = await findRun(folder);
    assert.equal(byPath.runId, "a-copy");
    const problems = (await verifyRun(byPath)).problems.map((p) => p.message);
    assert.ok(
      problems.includes(
        `events.jsonl line 1 (seq 0) names run "${ID}", but the run is "a-copy" (the name of its folder)`,
      ),
      problems.join("\n"),
    );
    assert.ok(problems.includes(`manifest.json names run "${ID}", but the run is "a-copy"`));
    const byId = await verifyRun(await findRun("a-copy", { runs: dir }));
    assert.deepEqual(byId.problems.map((p) => p.message), problems);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

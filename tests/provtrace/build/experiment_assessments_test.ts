import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { SqliteStore } from "../../../lib/provevi/sqlite/sqlite_store.ts";
import { buildTrace } from "../../../lib/provtrace/build/build.ts";
import { checkTrace } from "../../../lib/provtrace/build/check.ts";
import { writeRichRun } from "../../provevi/_rich_run.ts";

const EXP = "experiment://acme/risk/dev/credit/q";
const PIN1 = `${EXP}?at=commit:${"1".repeat(40)}`;
const PIN2 = `${EXP}?at=commit:${"2".repeat(40)}`;

Deno.test("provtrace: a run's rows hold its experiment's assessments (of the whole, and of the version it pinned), and check names one added since", async () => {
  const dir = await Deno.makeTempDir({ prefix: "provtrace-exp-" });
  try {
    const path = join(dir, "evidence.db");
    const uri = `sqlite:///${path}`;
    {
      await using store = new SqliteStore(path, { runs: dir });
      await writeRichRun(await store.openRun("run-1"), { experiment: EXP, experimentPin: PIN1 });
      await writeRichRun(await store.openRun("run-2"), { experiment: EXP, experimentPin: PIN2 });
      await store.assess("run-1", "correct", true);
      await store.assess({ experiment: EXP }, "approved", true, { source: "ada" });
      await store.assess(PIN1, "score", 0.7);
      await store.assess(PIN2, "score", 0.4);
    }
    const db = join(dir, "trace.db");
    // The runs name an experiment, and no catalog is at hand to read it: they are built unverified.
    const built = await buildTrace({ store: uri, runs: dir, db, allowUnverified: true });
    assert.deepEqual(built.added.map((r) => r.run_id), ["run-1", "run-2"]);
    const rows = (runId: string) => {
      const file = new DatabaseSync(db, { readOnly: true });
      try {
        return file.prepare(
          "SELECT n, name, value, experiment FROM trace_assessments WHERE run_id = ? ORDER BY n",
        ).all(runId).map((r) => [r.n, r.name, r.value, r.experiment]);
      } finally {
        file.close();
      }
    };
    assert.deepEqual(rows("run-1"), [
      [0, "correct", "true", null],
      [1, "approved", "true", EXP],
      [2, "score", "0.7", PIN1],
    ]);
    assert.deepEqual(rows("run-2"), [[0, "approved", "true", EXP], [1, "score", "0.4", PIN2]]);
    const first = await checkTrace(db, { stores: [uri], runs: dir });
    assert.deepEqual(first.runs.map((r) => r.state), ["same", "same"], JSON.stringify(first.runs));
    {
      await using store = new SqliteStore(path, { runs: dir });
      await store.assess({ experiment: EXP }, "reviewed", true);
    }
    // The experiment's new assessment judges both runs: their rows differ from what the store now gives.
    const check = await checkTrace(db, { stores: [uri], runs: dir });
    assert.deepEqual(check.runs.map((r) => r.state), ["rows", "rows"], JSON.stringify(check.runs));
    await buildTrace({ store: uri, runs: dir, db, runId: "run-2", allowUnverified: true });
    assert.deepEqual(rows("run-2").map((r) => r[1]), ["approved", "score", "reviewed"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import {
  applyStep,
  SCHEMA_STEPS,
  SCHEMA_VERSION,
  schemaVersion,
} from "../../../lib/provevi/sqlite/sqlite_schema.ts";
import { SqliteStore } from "../../../lib/provevi/sqlite/sqlite_store.ts";
import { writeRichRun } from "../_rich_run.ts";

Deno.test("the schema steps are numbered from 1 without a gap, and a new file is at the last one", async () => {
  assert.deepEqual(SCHEMA_STEPS.map((s) => s.version), SCHEMA_STEPS.map((_, i) => i + 1));
  const dir = await Deno.makeTempDir();
  try {
    await using store = new SqliteStore(join(dir, "e.db"), { runs: dir });
    assert.equal(schemaVersion(store.db), SCHEMA_VERSION);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a file at version 1 (agent classes as experiments) is upgraded to the last version when opened to write", async () => {
  const dir = await Deno.makeTempDir({ prefix: "provevi-upgrade-" });
  try {
    // Runs written today give real lines and folders; a version 1 file is then built from their rows.
    const today = join(dir, "today.db");
    const versions = new Map<string, string>();
    {
      await using store = new SqliteStore(today, { runs: dir });
      await writeRichRun(await store.openRun("run-1"), {
        inputs: ["data+table://acme/demo/dev/evals/revenue"],
      });
      await writeRichRun(await store.openRun("run-2"), { instructions: "Other." });
      await writeRichRun(await store.openRun("run-3"), { agent: "summariser" });
      for (const id of ["run-1", "run-2", "run-3"]) versions.set(id, (await store.run(id))!.agent_version!);
    }
    const old = join(dir, "old.db");
    const db = new DatabaseSync(old);
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("BEGIN");
    applyStep(db, SCHEMA_STEPS[0]!);
    // ATTACH is not allowed without --allow-all, so the rows are copied through JavaScript.
    const t = new DatabaseSync(today, { readOnly: true });
    const copy = (sql: string, into: string) => {
      const rows = t.prepare(sql).all() as Record<string, string | number | null>[];
      if (!rows.length) return;
      const stmt = db.prepare(
        `INSERT INTO ${into} VALUES (${Object.keys(rows[0]!).map(() => "?").join(", ")})`,
      );
      for (const r of rows) stmt.run(...Object.values(r));
    };
    copy("SELECT * FROM provevi_events", "provevi_events");
    copy("SELECT * FROM provevi_event_refs", "provevi_event_refs");
    copy("SELECT * FROM provevi_payloads", "provevi_payloads");
    copy("SELECT * FROM provevi_run_params", "provevi_run_params");
    copy(
      `SELECT run_id, folder, org, domain, env, actor, mode, agent, parent_run, status, started_at, ended_at,
         last_hash, manifest_sha256, sealed_at, bundle_uri, bundle_pinned FROM provevi_runs`,
      "provevi_runs",
    );
    copy("SELECT agent, org, domain, env, name, first_run FROM provevi_agents", "provevi_experiments");
    t.close();
    db.exec("COMMIT");
    assert.equal(schemaVersion(db), 1);
    db.close();

    assert.throws(
      () => new SqliteStore(old, { runs: dir, create: false }),
      new RegExp(
        `schema version 1, and this provevi reads ${SCHEMA_VERSION}; open it once to write to upgrade it`,
      ),
    );
    {
      await using store = new SqliteStore(old, { runs: dir });
      assert.equal(schemaVersion(store.db), SCHEMA_VERSION);
    }
    await using store = new SqliteStore(old, { runs: dir, create: false });
    assert.deepEqual((await store.agents()).map((a) => [a.agent, a.first_run, a.versions, a.runs]), [
      ["acme/demo/dev/revenue-question", "run-1", 2, 2],
      ["acme/demo/dev/summariser", "run-3", 1, 1],
    ]);
    assert.deepEqual(await store.experiments(), []);
    for (const [id, version] of versions) {
      const run = (await store.run(id))!;
      assert.equal(run.agent_version, version);
      assert.equal(run.experiment, null);
      assert.deepEqual(await store.checkRun(id), []);
    }
    assert.deepEqual((await store.runsOfAgent("revenue-question")).map((r) => r.run_id), ["run-1", "run-2"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

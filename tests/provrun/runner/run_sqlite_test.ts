import assert from "node:assert/strict";
import { join } from "node:path";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { SqliteStore } from "../../../lib/provevi/sqlite/sqlite_store.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";
import { gitCatalog } from "../_catalog.ts";

Deno.test("a run into a sqlite store fills the rows that answer questions across runs, and the store check passes", async () => {
  await using t = await gitCatalog({ "finance/revenue.csv": "q,r\nQ3,48.2\n" });
  const file = RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada, mode: strict, bundle: true }
agent:
  name: revenue-question
  backend: call
  model: "test:"
  script: { turns: [{ text: "12%" }, { text: "12%" }] }
  settings: { temperature: 0 }
prompt: What was the growth?
inputs:
  - { uri: "data://acme/demo/dev/finance/revenue.csv", as: revenue.csv }
`);
  const store = new SqliteStore(join(t.root, "evidence.db"), { runs: t.runs });
  const first = await runFile(file, { catalog: t.catalog, store });
  const second = await runFile(file, { catalog: t.catalog, store });
  assert.equal(first.status, "completed", JSON.stringify(first.error));
  assert.equal(second.status, "completed");
  const reading = await store.runsReading("data://acme/demo/dev/finance/revenue.csv");
  assert.deepEqual(reading.map((r) => r.run_id).sort(), [first.runId, second.runId].sort());
  const agents = await store.agents();
  assert.equal(agents.length, 1);
  assert.equal(agents[0]!.runs, 2);
  assert.equal(agents[0]!.versions, 1);
  for (const outcome of [first, second]) {
    const check = await verifyRun(await store.readRun(outcome.runId), { store, catalog: t.catalog });
    assert.deepEqual(check.problems, []);
    assert.equal(check.bundle, outcome.bundle?.pinned);
  }
  const access = await store.access(first.runId);
  assert.deepEqual(access.map((a) => a.decision), ["granted"]);
  await store.close();
});

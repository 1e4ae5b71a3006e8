import assert from "node:assert/strict";
import { join } from "node:path";
import { agentVersion } from "../../../lib/provevi/experiments/agent_class.ts";
import { SqliteStore } from "../../../lib/provevi/sqlite/sqlite_store.ts";
import { writeRichRun } from "../_rich_run.ts";

const EXP = "experiment://acme/risk/dev/credit/q";
const PIN1 = `${EXP}?at=commit:${"1".repeat(40)}`;
const PIN2 = `${EXP}?at=commit:${"2".repeat(40)}`;
const REVENUE = "data+table://acme/demo/dev/evals/revenue";
const COSTS = "data+table://acme/demo/dev/evals/costs";

async function withStore(fn: (store: SqliteStore) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "provevi-q-" });
  const store = new SqliteStore(join(dir, "evidence.db"), { runs: dir });
  try {
    await writeRichRun(await store.openRun("run-1"), {
      experiment: EXP,
      experimentPin: PIN1,
      experimentSha256: "e".repeat(64),
      inputs: [REVENUE],
      denied: [COSTS],
    });
    await writeRichRun(await store.openRun("run-2"), {
      experiment: `${EXP}?at=branch:main`,
      experimentPin: PIN2,
      experimentSha256: "f".repeat(64),
      inputs: [REVENUE, COSTS],
      prompt: "another question", // the same agent version
    });
    await writeRichRun(await store.openRun("run-3"), {
      instructions: "Answer in two lines.", // a new agent version
      parentRun: "run-1",
      settings: { api_key: "sk-other" },
    });
    await writeRichRun(await store.openRun("run-4"), { agent: "summariser", inputs: [COSTS] });
    await fn(store);
  } finally {
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("runsReading() finds runs by a URI or by a pinned version of it", () =>
  withStore(async (store) => {
    assert.deepEqual((await store.runsReading(REVENUE)).map((r) => r.run_id), ["run-1", "run-2"]);
    assert.deepEqual((await store.runsReading(COSTS)).map((r) => r.run_id), ["run-2", "run-4"]);
    const pinned = `${REVENUE}?at=commit:${"c".repeat(40)}`;
    assert.deepEqual((await store.runsReading(pinned)).map((r) => r.run_id), ["run-1", "run-2"]);
    assert.deepEqual(await store.runsReading("data+table://acme/demo/dev/evals/rev"), []);
  }));

Deno.test("runsOfExperiment(), experiments() and experiment() keep each reported version", () =>
  withStore(async (store) => {
    assert.deepEqual((await store.runsOfExperiment(EXP)).map((r) => r.run_id), ["run-1", "run-2"]);
    assert.deepEqual((await store.runsOfExperiment("credit/q")).map((r) => r.run_id), ["run-1", "run-2"]);
    assert.deepEqual((await store.runsOfExperiment(PIN2)).map((r) => r.run_id), ["run-2"]);
    assert.deepEqual(await store.experiments(), [{
      experiment: EXP,
      first_run: "run-1",
      versions: 2,
      runs: 2,
    }]);
    const detail = await store.experiment(EXP);
    assert.deepEqual(detail?.versions.map((v) => [v.pin, v.sha256, v.runs]), [
      [PIN1, "e".repeat(64), ["run-1"]],
      [PIN2, "f".repeat(64), ["run-2"]],
    ]);
    assert.equal(await store.experiment("experiment://acme/risk/dev/other"), null);
  }));

Deno.test("runsOfAgent(), agents() and agent(): a version leaves out prompt and inputs, and settings hold no secrets", () =>
  withStore(async (store) => {
    assert.deepEqual((await store.runsOfAgent("revenue-question")).map((r) => r.run_id), [
      "run-1",
      "run-2",
      "run-3",
    ]);
    assert.deepEqual((await store.runsOfAgent("acme/demo/dev/summariser")).map((r) => r.run_id), ["run-4"]);
    const agents = await store.agents();
    assert.deepEqual(agents.map((a) => [a.agent, a.versions, a.runs]), [
      ["acme/demo/dev/revenue-question", 2, 3],
      ["acme/demo/dev/summariser", 1, 1],
    ]);
    const detail = (await store.agent("revenue-question"))!;
    const first = detail.versions.find((v) => v.runs.includes("run-1"))!;
    assert.deepEqual(first.runs, ["run-1", "run-2"]);
    assert.deepEqual(first.limits, { max_steps: 5, max_tokens: 1000 });
    assert.deepEqual(first.tools, ["read_file"]);
    const byVersion = await store.runsOfAgent("revenue-question", { version: first.version.slice(0, 8) });
    assert.deepEqual(byVersion.map((r) => r.run_id), ["run-1", "run-2"]);
    // The secret changes the version (the hash covers the settings) but is in no table.
    const dump = JSON.stringify(store.db.prepare("SELECT * FROM provevi_agent_versions").all()) +
      JSON.stringify(store.db.prepare("SELECT * FROM provevi_run_params").all());
    assert.doesNotMatch(dump, /sk-secret|sk-other|api_key/);
    const run1 = (await store.run("run-1"))!;
    assert.equal(run1.agent_version, first.version);
    assert.notEqual(run1.agent_version, agentVersion({ name: "x" }));
    assert.equal((await store.run("run-3"))!.parent_run, "run-1");
    assert.equal(await store.run("run-none"), null);
  }));

Deno.test("access() and inputs() give a run's grants, refusals and staged inputs in order", () =>
  withStore(async (store) => {
    const access = await store.access("run-1");
    assert.deepEqual(access.map((a) => [a.seq, a.decision, a.uri, a.reason]), [
      [1, "granted", REVENUE, null],
      [3, "denied", COSTS, "not granted"],
    ]);
    const inputs = await store.inputs("run-2");
    assert.deepEqual(inputs.map((i) => [i.name, i.uri]), [
      ["revenue", `${REVENUE}?at=commit:${"c".repeat(40)}`],
      ["costs", `${COSTS}?at=commit:${"c".repeat(40)}`],
    ]);
    for (const id of ["run-1", "run-2", "run-3", "run-4"]) assert.deepEqual(await store.checkRun(id), []);
  }));

Deno.test("assess() writes a judgement on a run, an event or a span, and assessments() reads them back", () =>
  withStore(async (store) => {
    await store.assess("run-1", "correct", true, {
      rationale: "matches the table",
      source: "ada@example.com",
    });
    await store.assess("run-1#2", "score", 0.8);
    await assert.rejects(() => store.assess("run-1#99", "score", 1), /no event 99/);
    await assert.rejects(() => store.assess({ run: "run-1", span: "ffffffffffffffff" }, "x", 1), /no span/);
    await assert.rejects(() => store.assess("run-none", "x", 1), /no run "run-none"/);
    const list = await store.assessments("run-1");
    assert.deepEqual(list.map((a) => [a.seq, a.span_id, a.name, a.value, a.rationale, a.source]), [
      [null, null, "correct", true, "matches the table", "ada@example.com"],
      [2, null, "score", 0.8, null, null],
    ]);
  }));

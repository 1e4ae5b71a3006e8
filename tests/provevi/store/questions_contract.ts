/**
 * The contract of the questions across runs ({@linkcode StoreQuestions}) that every store passes: the sqlite
 * and postgres stores give the same answers over the same runs; the file store, which has no index, refuses
 * each question with `NeedsIndexedStore`. A store's test calls {@linkcode questionsContract}.
 * @module
 */
import assert from "node:assert/strict";
import { agentVersion } from "../../../lib/provevi/experiments/agent_class.ts";
import type { EvidenceStore } from "../../../lib/provevi/store/store.ts";
import type { StoreQuestions } from "../../../lib/provevi/store/store_questions.ts";
import { NeedsIndexedStore } from "../../../lib/provevi/evidence/errors.ts";
import { writeRichRun } from "../_rich_run.ts";
import type { StoreUnderTest } from "./store_contract.ts";
import { type PeerName, peerTest } from "../../_peers.ts";

const EXP = "experiment://acme/risk/dev/credit/q";
const PIN1 = `${EXP}?at=commit:${"1".repeat(40)}`;
const PIN2 = `${EXP}?at=commit:${"2".repeat(40)}`;
const REVENUE = "data+table://acme/demo/dev/evals/revenue";
const COSTS = "data+table://acme/demo/dev/evals/costs";

type Store = EvidenceStore & StoreQuestions;

/** The problems of a run's rows, as the store's own check gives them (`verifyRun` calls it). */
async function rowProblems(store: Store, runId: string): Promise<string[]> {
  return await (store as unknown as { checkRun(id: string): Promise<string[]> }).checkRun(runId);
}

/** Four runs: two versions of an experiment, two agent versions, another agent, a parent run, inputs. */
async function writeRuns(store: EvidenceStore): Promise<void> {
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
}

/**
 * Registers the questions' tests for one store.
 *
 * @param name The store's name in the test names.
 * @param open Opens a fresh, empty store under a new runs root.
 * @param options `indexed`: false for a store that answers no question (the file store); `peer`: the peer its tests need.
 */
export function questionsContract(
  name: string,
  open: () => Promise<StoreUnderTest>,
  options: { indexed: boolean; peer?: PeerName },
): void {
  const test = (what: string, fn: (store: Store) => Promise<void>) =>
    peerTest(options.peer ?? null, {
      name: `${name}: ${what}`,
      fn: async () => {
        const t = await open();
        try {
          await writeRuns(t.store);
          await fn(t.store as Store);
        } finally {
          await t.store.close();
          await t.cleanup?.();
          await Deno.remove(t.runs, { recursive: true }).catch(() => {});
        }
      },
    });

  if (!options.indexed) {
    test("every question across runs, and an experiment's assessment, is refused with NeedsIndexedStore", async (store) => {
      const asked: [string, () => Promise<unknown>][] = [
        ["runsReading", () => store.runsReading(REVENUE)],
        ["runsOfExperiment", () => store.runsOfExperiment(EXP)],
        ["experiments", () => store.experiments()],
        ["experiment", () => store.experiment(EXP)],
        ["runsOfAgent", () => store.runsOfAgent("revenue-question")],
        ["agents", () => store.agents()],
        ["agent", () => store.agent("revenue-question")],
        ["run", () => store.run("run-1")],
        ["access", () => store.access("run-1")],
        ["inputs", () => store.inputs("run-1")],
        // An assessment of a run is kept in its folder (file_assessments_test.ts); an experiment's needs the index.
        ["assess an experiment", () => store.assess({ experiment: EXP }, "approved", true)],
        ["experimentAssessments", () => store.experimentAssessments(EXP)],
      ];
      for (const [what, ask] of asked) await assert.rejects(ask, NeedsIndexedStore, what);
    });
    return;
  }

  test("runsReading() finds runs by a URI or by a pinned version of it", async (store) => {
    assert.deepEqual((await store.runsReading(REVENUE)).map((r) => r.run_id), ["run-1", "run-2"]);
    assert.deepEqual((await store.runsReading(COSTS)).map((r) => r.run_id), ["run-2", "run-4"]);
    const pinned = `${REVENUE}?at=commit:${"c".repeat(40)}`;
    assert.deepEqual((await store.runsReading(pinned)).map((r) => r.run_id), ["run-1", "run-2"]);
    assert.deepEqual(await store.runsReading("data+table://acme/demo/dev/evals/rev"), []);
    const [first] = await store.runsReading(REVENUE);
    assert.deepEqual(Object.keys(first!).sort(), [
      "agent",
      "agent_version",
      "ended_at",
      "experiment",
      "experiment_pin",
      "run_id",
      "started_at",
      "status",
      "uri",
    ]);
    assert.equal(first!.status, "completed");
  });

  test("runsOfExperiment(), experiments() and experiment() keep each reported version", async (store) => {
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
    assert.deepEqual(detail?.versions.map((v) => [v.pin, v.sha256, v.first_run, v.runs]), [
      [PIN1, "e".repeat(64), "run-1", ["run-1"]],
      [PIN2, "f".repeat(64), "run-2", ["run-2"]],
    ]);
    assert.deepEqual(detail?.unpinned_runs, []);
    assert.equal(await store.experiment("experiment://acme/risk/dev/other"), null);
  });

  test("runsOfAgent(), agents() and agent(): a version leaves out prompt and inputs, and settings hold no secrets", async (store) => {
    assert.deepEqual((await store.runsOfAgent("revenue-question")).map((r) => r.run_id), [
      "run-1",
      "run-2",
      "run-3",
    ]);
    assert.deepEqual((await store.runsOfAgent("acme/demo/dev/summariser")).map((r) => r.run_id), ["run-4"]);
    assert.deepEqual(
      (await store.agents()).map((a) => [a.agent, a.org, a.name, a.first_run, a.versions, a.runs]),
      [
        ["acme/demo/dev/revenue-question", "acme", "revenue-question", "run-1", 2, 3],
        ["acme/demo/dev/summariser", "acme", "summariser", "run-4", 1, 1],
      ],
    );
    const detail = (await store.agent("revenue-question"))!;
    const first = detail.versions.find((v) => v.runs.includes("run-1"))!;
    assert.deepEqual(first.runs, ["run-1", "run-2"]);
    assert.deepEqual(first.limits, { max_steps: 5, max_tokens: 1000 });
    assert.deepEqual(first.tools, ["read_file"]);
    const byVersion = await store.runsOfAgent("revenue-question", { version: first.version.slice(0, 8) });
    assert.deepEqual(byVersion.map((r) => r.run_id), ["run-1", "run-2"]);
    await assert.rejects(
      async () => await store.runsOfAgent("revenue-question", { version: "xyz" }),
      /not an agent version/,
    );
    // The secret changes the version (the hash covers the settings) but is in no row.
    const dump = JSON.stringify(detail) + JSON.stringify(await store.run("run-3"));
    assert.doesNotMatch(dump, /sk-secret|sk-other|api_key/);
    const run1 = (await store.run("run-1"))!;
    assert.equal(run1.agent_version, first.version);
    assert.notEqual(run1.agent_version, agentVersion({ name: "x" }));
    assert.equal(run1.org, "acme");
    assert.equal(run1.status, "completed");
    assert.equal(typeof run1.events, "number");
    assert.equal((await store.run("run-3"))!.parent_run, "run-1");
    assert.equal(await store.run("run-none"), null);
  });

  test("access() and inputs() give a run's grants, refusals and staged inputs in order", async (store) => {
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
    for (const id of ["run-1", "run-2", "run-3", "run-4"]) {
      assert.deepEqual(await rowProblems(store, id), []);
    }
  });

  test("assess() writes a judgement on a run, an event or a span, and assessments() reads them back", async (store) => {
    const made = await store.assess("run-1", "correct", true, {
      rationale: "matches the table",
      source: "ada@example.com",
    });
    assert.equal(typeof made.id, "number");
    await store.assess("run-1#2", "score", 0.8);
    await assert.rejects(() => store.assess("run-1#99", "score", 1), /no event 99/);
    await assert.rejects(() => store.assess({ run: "run-1", span: "ffffffffffffffff" }, "x", 1), /no span/);
    await assert.rejects(() => store.assess("run-none", "x", 1), /no run "run-none"/);
    const list = await store.assessments("run-1");
    assert.deepEqual(list.map((a) => [a.seq, a.span_id, a.name, a.value, a.rationale, a.source]), [
      [null, null, "correct", true, "matches the table", "ada@example.com"],
      [2, null, "score", 0.8, null, null],
    ]);
    assert.equal(list[0]!.id, made.id);
    assert.deepEqual(await rowProblems(store, "run-1"), []);
  });
}

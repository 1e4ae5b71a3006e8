/**
 * An experiment's assessments in the copy in MLflow: tags of the MLflow experiment the run is copied into, cut by
 * level, against the real `mlflow server` of `.ci/peers/mlflow.sh`.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { z } from "zod";
import { SqliteStore } from "../../../lib/provevi/sqlite/sqlite_store.ts";
import { EventChain } from "../../../lib/provevi/evidence/chain.ts";
import { formatMicros } from "../../../lib/provevi/evidence/event.ts";
import { copyRun } from "../../../lib/provevi/mlflow/copy_run.ts";
import { MlflowClient } from "../../../lib/provevi/mlflow/mlflow_client.ts";
import { experimentAssessmentTags } from "../../../lib/provevi/mlflow/experiment_tags.ts";
import { mlflowPolicy } from "./_mlflow.ts";
import { needMlflow } from "./_mlflow_peer.ts";
import { peerTest } from "../../_peers.ts";

/** A sealed run of an experiment (a name of its own, so that tests do not share an MLflow experiment). */
async function writeExperimentRun(store: SqliteStore, experiment: string, pin: string): Promise<string> {
  const runId = `run-20261130T120000Z-${crypto.randomUUID().slice(0, 8)}`;
  const writer = await store.openRun(runId);
  const chain = new EventChain(runId);
  let clock = Date.UTC(2026, 10, 30, 12, 0, 0) * 1000;
  const trace = crypto.randomUUID().replaceAll("-", ""), root = "1".repeat(16);
  for (
    const [type, data] of [
      ["run_created", {
        org: "acme",
        domain: "demo",
        env: "dev",
        agent: "judge",
        model: "test:x",
        experiment,
        experiment_pin: pin,
      }],
      ["run_completed", { status: "completed" }],
    ] as const
  ) {
    clock += 1000;
    const next = chain.next({
      type,
      component: "RunContext",
      actor: "ada",
      time: formatMicros(clock),
      trace_id: trace,
      span_id: root,
      data,
    });
    await writer.append(next.line, next.event);
    chain.accept(next);
  }
  await writer.seal();
  return runId;
}

peerTest("mlflow", {
  name: "copyRun() writes the run's experiment's assessments as tags of its MLflow experiment, cut by level",
  async fn() {
    const { uri } = needMlflow();
    const dir = await Deno.makeTempDir({ prefix: "mlflow-exp-tags-" });
    const experiment = `experiment://acme/risk/dev/credit/q${crypto.randomUUID().slice(0, 8)}`;
    const pin = `${experiment}?at=commit:${"1".repeat(40)}`;
    try {
      await using store = new SqliteStore(join(dir, "e.db"), { runs: dir });
      const runId = await writeExperimentRun(store, experiment, pin);
      const approved = await store.assess({ experiment }, "approved", true, {
        rationale: "the board said so",
        source: "ada",
      });
      const score = await store.assess({ experiment: pin }, "score", 0.7);
      const note = await store.assess({ experiment }, "what the reviewer thought", "fine");
      const tagsOf = async (level: "names" | "usage" | "bodies") => {
        const copied = await copyRun(store, runId, mlflowPolicy(level, uri), {
          environ: { MLFLOW_TRACKING_URI: uri },
        });
        const client = new MlflowClient(uri);
        const got = await client.call(
          "GET",
          "/api/2.0/mlflow/experiments/get",
          { experiment_id: copied.experimentId },
          "read the experiment",
          z.object({
            experiment: z.object({
              tags: z.array(z.object({ key: z.string(), value: z.string() })).optional(),
            }),
          }),
        );
        return Object.fromEntries(
          (got.experiment.tags ?? []).filter((t) => t.key.startsWith("provevi.assessment.")).map((
            t,
          ) => [t.key, JSON.parse(t.value)]),
        );
      };
      const names = await tagsOf("names");
      assert.deepEqual(names[`provevi.assessment.${approved.id}`], {
        name: "approved",
        value: true,
        version: null,
        source: "ada",
        rationale: null,
        created_at: approved.created_at,
      });
      assert.equal(names[`provevi.assessment.${score.id}`], undefined, "a number only from usage");
      assert.equal(
        names[`provevi.assessment.${note.id}`],
        undefined,
        "a name that is not plain only at bodies",
      );
      const usage = await tagsOf("usage");
      assert.deepEqual(usage[`provevi.assessment.${score.id}`]?.version, pin);
      assert.equal(usage[`provevi.assessment.${score.id}`]?.value, 0.7);
      // Copied again at bodies, the same tags are written again, with the rationale and every name.
      const bodies = await tagsOf("bodies");
      assert.equal(bodies[`provevi.assessment.${approved.id}`].rationale, "the board said so");
      assert.equal(bodies[`provevi.assessment.${note.id}`].value, "fine");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("experimentAssessmentTags() cuts a long rationale to fit MLflow's limit of a tag's value, and leaves run assessments out", () => {
  const base = {
    id: 1,
    run_id: null,
    seq: null,
    span_id: null,
    experiment: "experiment://a/b/c/q",
    source: null,
    created_at: "2026-11-30T12:00:00.000000Z",
  };
  const tags = experimentAssessmentTags([
    { ...base, name: "long", value: true, rationale: '"'.repeat(9000) },
    { ...base, id: 2, run_id: "run-1", experiment: null, name: "run", value: true, rationale: null },
  ], "bodies");
  assert.deepEqual(Object.keys(tags), ["provevi.assessment.1"]);
  assert.ok(tags["provevi.assessment.1"]!.length <= 5000);
  assert.ok(JSON.parse(tags["provevi.assessment.1"]!).rationale.endsWith("…"));
});

/**
 * The copy in MLflow at the seal, against the real `mlflow server` of `.ci/peers/mlflow.sh`.
 * @module
 */
import assert from "node:assert/strict";
import { readEventsText } from "../../../lib/provevi/evidence/read_events.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";
import { startMlflowCopy } from "../../../lib/provrun/telemetry/mlflow_copy.ts";
import { AGENT_RUN, mlflowPolicy, storeWithRun } from "../../provevi/mlflow/_mlflow.ts";
import { needMlflow } from "../../provevi/mlflow/_mlflow_peer.ts";
import { gitCatalog } from "../_catalog.ts";
import { peerTest } from "../../_peers.ts";

const CSV = "quarter,revenue\nQ2,43.0\nQ3,48.2\n";

function file(): RunFile {
  return RunFile.parse(
    AGENT_RUN.replace("AGENT", `sealed-${crypto.randomUUID().slice(0, 8)}`).replace("INPUT", "revenue.csv"),
  );
}

peerTest("mlflow", {
  name: "a run whose policy approves its MLflow place is copied at the seal, beside its result",
  async fn() {
    const { uri } = needMlflow();
    await using t = await gitCatalog({ "finance/revenue.csv": CSV });
    const outcome = await runFile(file(), {
      catalog: t.catalog,
      runs: t.runs,
      policy: mlflowPolicy("usage", uri),
      environ: { MLFLOW_TRACKING_URI: uri },
    });
    assert.equal(outcome.status, "completed");
    const copy = await outcome.mlflowCopy!;
    assert.equal(copy.status, "copied");
    if (copy.status === "copied") {
      assert.equal(copy.result.runId, outcome.runId);
      assert.equal(copy.result.level, "usage");
      assert.deepEqual(copy.result.deleted, []);
    }
  },
});

peerTest("mlflow", {
  name: "a copy at the seal that fails is a problem of the copy, never a failed run",
  async fn() {
    await using t = await gitCatalog({ "finance/revenue.csv": CSV });
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const url = `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`;
    listener.close();
    const outcome = await runFile(file(), {
      catalog: t.catalog,
      runs: t.runs,
      policy: mlflowPolicy("usage", url),
      environ: { MLFLOW_TRACKING_URI: url },
    });
    assert.equal(outcome.status, "completed");
    const copy = await outcome.mlflowCopy!;
    assert.equal(copy.status, "failed");
    if (copy.status === "failed") {
      assert.match(
        copy.problem,
        /^the copy in MLflow failed: cannot reach MLflow at .*; run prove mlflow run-/,
      );
    }
  },
});

peerTest("mlflow", {
  name:
    "an approved copy that a variable would refuse is a telemetry_problem of the run, written before its seal",
  async fn() {
    const { uri } = needMlflow();
    await using t = await gitCatalog({ "finance/revenue.csv": CSV });
    const outcome = await runFile(file(), {
      catalog: t.catalog,
      runs: t.runs,
      policy: mlflowPolicy("usage", uri),
      environ: { MLFLOW_TRACKING_URI: uri, REQUESTS_CA_BUNDLE: "/etc/ssl/other.pem" },
    });
    assert.equal(outcome.status, "completed");
    const events = readEventsText(await Deno.readTextFile(`${outcome.folder}/evidence/events.jsonl`)).events;
    const problems = events.filter((e) => e.type === "telemetry_problem").map((e) => e.data.problem);
    assert.deepEqual(problems, [
      "the copy in MLflow at the seal will be refused while REQUESTS_CA_BUNDLE is set; unset it and run prove mlflow",
    ]);
    const copy = await outcome.mlflowCopy!;
    assert.equal(copy.status, "failed");
  },
});

peerTest("mlflow", {
  name: "a copy at the seal that passes its time limit is stopped and reported; no place approved, no copy",
  async fn() {
    const { uri } = needMlflow();
    await using t = await storeWithRun({ agent: `slow-${crypto.randomUUID().slice(0, 8)}` });
    const copy = startMlflowCopy(t.runIds[0]!, t.store, {
      policy: mlflowPolicy("usage", uri),
      environ: { MLFLOW_TRACKING_URI: uri },
      timeout: 1,
    })!;
    const ended = await copy;
    assert.equal(ended.status, "failed");
    if (ended.status === "failed") assert.match(ended.problem, /passed its limit of 0.001 s and was stopped/);
    assert.equal(
      startMlflowCopy(t.runIds[0]!, t.store, { policy: mlflowPolicy("usage", uri), environ: {} }),
      null,
      "the store's own file is not approved by an endpoint destination",
    );
  },
});

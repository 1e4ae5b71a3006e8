/**
 * Helpers for the copy in MLflow's tests: a real run made by provrun into a sqlite store, its policy, and the
 * program that reads a copy back with MLflow's own client (`_mlflow_peer.ts` has the peer that runs it).
 * @module
 */
import { join } from "node:path";
import type { EvidenceStore } from "../../../lib/provevi/store/store.ts";
import { openStore } from "../../../lib/provevi/runs/open_store.ts";
import { SqliteStore } from "../../../lib/provevi/sqlite/sqlite_store.ts";
import { TelemetryPolicy } from "../../../lib/provevi/telemetry/policy.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";
import { gitCatalog } from "../../provrun/_catalog.ts";

const CSV = "quarter,revenue\nQ2,43.0\nQ3,48.2\n";

/** An agent run with three tool calls and four model calls, on one input. */
export const AGENT_RUN = `
run: { org: acme, domain: demo, env: dev, actor: ada, mode: strict }
agent:
  name: AGENT
  backend: agent
  model: "test:"
  script:
    model: answer-1
    turns:
      - tool_calls: [{ id: c1, name: read_file, args: { path: /input/revenue.csv } }]
        usage: { input: 30, output: 12 }
      - tool_calls: [{ id: c2, name: note, args: { text: "Q3 is 48.2, Q2 is 43.0" } }]
        usage: { input: 50, output: 10 }
      - tool_calls: [{ id: c3, name: write_file, args: { path: /output/answer.txt, content: "Revenue grew 12% in Q3." } }]
        usage: { input: 60, output: 20 }
      - text: "Revenue grew 12% in Q3."
        usage: { input: 70, output: 9, cache_read: 20 }
prompt: What was the revenue growth in Q3?
inputs:
  - { uri: "data://acme/demo/dev/finance/revenue.csv", as: INPUT }
outputs: [answer.txt]
`;

/** A sqlite store in a temporary folder holding one real agent run; removed when disposed. */
export async function storeWithRun(
  options: { agent?: string; input?: string; runs?: number } = {},
): Promise<{
  dir: string;
  storeUri: string;
  store: EvidenceStore;
  runIds: string[];
  [Symbol.asyncDispose](): Promise<void>;
}> {
  const catalog = await gitCatalog({ "finance/revenue.csv": CSV });
  const dir = catalog.root;
  const storeUri = `sqlite:///${join(dir, "evidence.db")}`;
  const runIds: string[] = [];
  {
    await using store = await openStore(storeUri, { runs: join(dir, "runs") });
    for (let i = 0; i < (options.runs ?? 1); i++) {
      const file = RunFile.parse(
        AGENT_RUN.replace("AGENT", options.agent ?? "analyst").replace(
          "INPUT",
          options.input ?? "revenue.csv",
        ),
      );
      const outcome = await runFile(file, {
        catalog: catalog.catalog,
        store,
        environ: {},
        policy: TelemetryPolicy.denyAll(),
      });
      if (outcome.status !== "completed") throw new Error(`the run failed: ${JSON.stringify(outcome.error)}`);
      runIds.push(outcome.runId);
    }
  }
  const store = new SqliteStore(join(dir, "evidence.db"), { runs: join(dir, "runs"), uri: storeUri });
  return {
    dir,
    storeUri,
    store,
    runIds,
    async [Symbol.asyncDispose]() {
      await store.close();
      await catalog[Symbol.asyncDispose]();
    },
  };
}

/** A policy with one mlflow destination at a level; `endpoint` null for the store's own file. */
export function mlflowPolicy(
  level: "names" | "usage" | "bodies",
  endpoint: string | null,
  extra: Record<string, unknown> = {},
): TelemetryPolicy {
  const host = endpoint === null ? null : new URL(endpoint.replace(/^sqlite:/, "file:")).hostname;
  return TelemetryPolicy.fromDict({
    version: 1,
    destinations: {
      tracking: { kind: "mlflow", receives: level, ...(endpoint === null ? {} : { endpoint }) },
    },
    hosts: host ? [host] : [],
    ...extra,
  });
}

/** A Python program that reads a run's copy back through MLflow's own client: runs, traces and spans. */
export function readBackProgram(experimentName: string, runId: string): string {
  return `
import json, mlflow
from mlflow import MlflowClient
client = MlflowClient()
exp = client.get_experiment_by_name(${JSON.stringify(experimentName)})
runs = client.search_runs([exp.experiment_id], filter_string="tags.\\"provrun.run_id\\" = '${runId}'")
out = {"experiment_id": exp.experiment_id, "runs": []}
for r in runs:
    traces = mlflow.search_traces(locations=[exp.experiment_id], run_id=r.info.run_id, return_type="list")
    entry = {"run_id": r.info.run_id, "status": r.info.status, "tags": r.data.tags, "params": r.data.params,
             "metrics": r.data.metrics, "inputs": [{"name": d.dataset.name, "digest": d.dataset.digest,
             "source": d.dataset.source} for d in r.inputs.dataset_inputs], "traces": []}
    for t in traces:
        full = mlflow.get_trace(t.info.trace_id)
        entry["traces"].append({"trace_id": t.info.trace_id, "source_run": t.info.trace_metadata.get("mlflow.sourceRun"),
            "spans": [{"span_id": s.span_id, "parent_id": s.parent_id, "name": s.name,
                       "start": s.start_time_ns, "end": s.end_time_ns,
                       "attributes": {k: v for k, v in s.attributes.items()}} for s in full.data.spans],
            "assessments": [{"name": a.name, "value": getattr(a, "value", None), "span_id": a.span_id,
                             "source_id": a.source.source_id, "rationale": a.rationale}
                            for a in full.info.assessments]})
    out["runs"].append(entry)
print(json.dumps(out, default=str))
`;
}

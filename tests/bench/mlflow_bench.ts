/**
 * The copy in MLflow of a run of 1,000 spans into the MLflow server of `.ci/peers/mlflow.sh`, in spans per
 * second, beside MLflow's own Python client logging the same 1,000 spans (a root and 999 children, with
 * `mlflow.start_span`, flushed) to the same server in the same run. Target: a ratio of at least 1.0.
 * @module
 */
import { join } from "node:path";
import { EventChain } from "../../lib/provevi/evidence/chain.ts";
import { formatMicros } from "../../lib/provevi/evidence/event.ts";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { TelemetryPolicy } from "../../lib/provevi/telemetry/policy.ts";
import { copyRun } from "../../lib/provevi/mlflow/copy_run.ts";
import { median, report } from "./_report.ts";

const SPANS = 1000;

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, "0");
}

/** Writes a sealed run whose trace has a root span and 999 tool steps. */
async function writeRun(store: FileStore, runId: string, agent: string): Promise<void> {
  const writer = await store.openRun(runId);
  const chain = new EventChain(runId);
  const trace = crypto.randomUUID().replaceAll("-", "");
  const root = hex(1, 16);
  let clock = Date.now() * 1000;
  const add = async (init: Parameters<EventChain["next"]>[0]) => {
    clock += 100;
    const next = chain.next({ time: formatMicros(clock), trace_id: trace, span_id: root, ...init });
    await writer.append(next.line, next.event);
    chain.accept(next);
  };
  await add({
    type: "run_created",
    component: "RunContext",
    actor: "bench",
    data: { org: "acme", domain: "bench", env: "dev", agent, model: "test:" },
  });
  for (let i = 0; i < SPANS - 1; i++) {
    await add({
      type: "tool_called",
      component: "AgentBackend",
      actor: "bench",
      span_id: hex(i + 2, 16),
      parent_span_id: root,
      started_at: formatMicros(clock + 10),
      data: { tool: "read_file", call_id: `c${i}`, error: null },
    });
  }
  await add({
    type: "run_completed",
    component: "RunContext",
    actor: "bench",
    data: { status: "completed" },
  });
  await writer.seal();
}

const PYTHON = `
import os, sys, time, uuid
os.environ["MLFLOW_DISABLE_AGENT_HINT"] = "1"
import mlflow
mlflow.set_experiment("acme/bench/dev/python-" + uuid.uuid4().hex[:8])
start = time.perf_counter()
with mlflow.start_span(name="invoke_agent bench") as root:
    for i in range(${SPANS - 1}):
        with mlflow.start_span(name="execute_tool read_file") as span:
            span.set_attribute("gen_ai.tool.name", "read_file")
mlflow.flush_trace_async_logging()
print(time.perf_counter() - start)
`;

/** Runs the benchmark and prints its line; says why and returns when the MLflow peer is not set. */
export async function main(): Promise<void> {
  const uri = Deno.env.get("PROVEVI_TEST_MLFLOW_URI");
  const python = Deno.env.get("PROVEVI_TEST_MLFLOW_PYTHON");
  if (!uri || !python) {
    console.log(
      "mlflow copy: skipped, PROVEVI_TEST_MLFLOW_URI and PROVEVI_TEST_MLFLOW_PYTHON are unset (.ci/peers/mlflow.sh)",
    );
    return;
  }
  const dir = await Deno.makeTempDir({ prefix: "bench-mlflow-" });
  const store = new FileStore({ runs: join(dir, "runs") });
  const policy = TelemetryPolicy.fromDict({
    version: 1,
    destinations: { tracking: { kind: "mlflow", receives: "usage", endpoint: uri } },
    hosts: [new URL(uri).hostname],
  });
  const ours: number[] = [];
  const theirs: number[] = [];
  for (let round = 0; round < 3; round++) {
    const runId = `run-bench-${round}-${crypto.randomUUID().slice(0, 8)}`;
    await writeRun(store, runId, `bench-${crypto.randomUUID().slice(0, 8)}`);
    let t = performance.now();
    const result = await copyRun(store, runId, policy, { environ: { MLFLOW_TRACKING_URI: uri } });
    if (result.spans !== SPANS) throw new Error(`copied ${result.spans} spans, not ${SPANS}`);
    ours.push(SPANS / ((performance.now() - t) / 1000));
    t = performance.now();
    const out = await new Deno.Command(python, {
      args: ["-c", PYTHON],
      env: { MLFLOW_TRACKING_URI: uri, MLFLOW_DISABLE_TELEMETRY: "true", NO_PROXY: "*" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!out.success) throw new Error(new TextDecoder().decode(out.stderr).slice(-2000));
    const seconds = Number(new TextDecoder().decode(out.stdout).trim().split("\n").pop());
    theirs.push(SPANS / seconds);
  }
  report("mlflow copy (1,000 spans)", median(ours), median(theirs), "spans/s", ">= 1.0");
  await Deno.remove(dir, { recursive: true });
}

if (import.meta.main) await main();

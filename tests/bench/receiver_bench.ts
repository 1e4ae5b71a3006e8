/**
 * The span receiver's ingest: spans per second for batches of 512 OTLP/HTTP protobuf spans posted to a run's
 * receiver (`receiver(store, run)`: each span a `span_recorded` event, a payload and a span row), as a ratio to
 * a bare `Deno.serve` that decodes and discards the same bodies, in the same run. Target: at least 0.5.
 *
 * With an MLflow tracking server at `PROVEVI_TEST_MLFLOW_URI` (.ci/peers/mlflow.sh starts one), also the same
 * batches posted to MLflow's OTLP endpoint (`/v1/traces`, into a new experiment named by the
 * `x-mlflow-experiment-id` header), and the run's receiver as a ratio to MLflow. Target: at least 10.
 * @module
 */
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { decodeTraceRequest, FileStore, receiver } from "../../lib/provevi/mod.ts";
import { EvidenceRecorder } from "../../lib/provrun/mod.ts";
import { median, report } from "./_report.ts";

const BATCH = 512;
const BATCHES = 16;

/** Bodies of 512 spans each, as Claude Code would send them: names, usage, a few attributes. */
function bodies(): Uint8Array<ArrayBuffer>[] {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });
  const tracer = provider.getTracer("claude_code", "2.1.332");
  const out: Uint8Array<ArrayBuffer>[] = [];
  for (let b = 0; b < BATCHES; b++) {
    memory.reset();
    for (let i = 0; i < BATCH; i++) {
      tracer.startSpan(i % 2 ? "claude_code.llm_request" : "claude_code.tool", {
        attributes: {
          "gen_ai.request.model": "claude-sonnet-4-5",
          "gen_ai.usage.input_tokens": 1000 + i,
          "gen_ai.usage.output_tokens": 50,
          "session.id": "c0ffee",
          "tool.name": "Read",
        },
      }).end();
    }
    out.push(new Uint8Array(ProtobufTraceSerializer.serializeRequest(memory.getFinishedSpans())!));
  }
  return out;
}

async function post(
  url: string,
  all: Uint8Array<ArrayBuffer>[],
  headers: Record<string, string> = {},
): Promise<number> {
  const t = performance.now();
  for (const body of all) {
    const r = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/x-protobuf", ...headers },
      body,
    });
    if (r.status !== 200) throw new Error(`${url}: ${r.status} ${await r.text()}`);
    await r.arrayBuffer();
  }
  return (BATCH * all.length) / ((performance.now() - t) / 1000);
}

/** Runs the benchmark and prints its line. */
export async function main(): Promise<void> {
  const all = bodies();
  const dir = await Deno.makeTempDir({ prefix: "bench-receiver-" });
  const store = new FileStore({ runs: dir });
  const bare = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
    decodeTraceRequest(new Uint8Array(await request.arrayBuffer()));
    return new Response(new Uint8Array(), { headers: { "content-type": "application/x-protobuf" } });
  });
  const bareUrl = `http://127.0.0.1:${bare.addr.port}/v1/traces`;
  const runRates: number[] = [];
  const bareRates: number[] = [];
  for (let round = 0; round < 3; round++) {
    const writer = await store.openRun(`run-bench-${round}`);
    const recorder = new EvidenceRecorder(writer, { actor: "bench", mode: "strict" });
    await recorder.record({ type: "run_created", component: "RunContext" });
    {
      await using spans = receiver(store, recorder);
      runRates.push(await post(spans.tracesUrl, all));
    }
    await recorder.seal();
    bareRates.push(await post(bareUrl, all));
  }
  await bare.shutdown();
  report(
    `receiver ingest (batches of ${BATCH} OTLP protobuf spans)`,
    median(runRates),
    median(bareRates),
    "spans/s",
    ">= 0.5",
  );
  await Deno.remove(dir, { recursive: true });
  const mlflow = Deno.env.get("PROVEVI_TEST_MLFLOW_URI");
  if (!mlflow) {
    console.log(
      "receiver ingest vs MLflow: not measured; set PROVEVI_TEST_MLFLOW_URI to an MLflow 3 tracking server " +
        "(source .ci/peers/mlflow.sh, or bash /work/tools/withpeers.sh mlflow deno task bench receiver)",
    );
    return;
  }
  report(
    `receiver ingest vs MLflow's /v1/traces (batches of ${BATCH} OTLP protobuf spans)`,
    median(runRates),
    await mlflowRate(mlflow, all.slice(0, MLFLOW_BATCHES)),
    "spans/s",
    ">= 10",
  );
}

/** MLflow is slow to take spans: a few batches are enough to measure it. */
const MLFLOW_BATCHES = 2;

/** Spans per second into MLflow's OTLP endpoint, in a new experiment. */
async function mlflowRate(base: string, all: Uint8Array<ArrayBuffer>[]): Promise<number> {
  const created = await fetch(`${base}/api/2.0/mlflow/experiments/create`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: `bench-receiver-${crypto.randomUUID()}` }),
  });
  if (!created.ok) throw new Error(`MLflow at ${base}: ${created.status} ${await created.text()}`);
  const { experiment_id } = await created.json() as { experiment_id: string };
  return await post(`${base}/v1/traces`, all, { "x-mlflow-experiment-id": experiment_id });
}

if (import.meta.main) await main();

/**
 * The span receiver's ingest: spans per second for batches of 512 OTLP/HTTP protobuf spans posted to a run's
 * receiver (`receiver(store, run)`: its guard, each span a `span_recorded` event, a payload and a span row), as a
 * ratio to a bare `Deno.serve` that decodes and discards the same bodies, in the same run; the same with the
 * bodies gzipped (the receiver's capped, streaming gunzip against a bare `DecompressionStream`). Target: at
 * least 0.5 each.
 *
 * The stream cap: the time the receiver takes to refuse a 1 GiB gzip bomb (413 at its 16 MiB cap), as a ratio to
 * a bare `DecompressionStream` unpacking the same bomb's first 16 MiB, in the same run. Target: at most 2.
 *
 * With an MLflow tracking server at `PROVEVI_TEST_MLFLOW_URI` (.ci/peers/mlflow.sh starts one), also the same
 * batches posted to MLflow's OTLP endpoint (`/v1/traces`, into a new experiment named by the
 * `x-mlflow-experiment-id` header), and the run's receiver as a ratio to MLflow. Target: at least 10.
 * @module
 */
import { gzipSync } from "node:zlib";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { decodeTraceRequest } from "../../lib/provevi/receiver/otlp_receiver.ts";
import { receiver } from "../../lib/provevi/receiver/run_receiver.ts";
import { EvidenceRecorder } from "../../lib/provrun/run/recorder.ts";
import { median, report } from "./_report.ts";
import { gzipBomb } from "../attacks/_gzip_bomb.ts";
import { BATCH, postOne, spanBodies } from "./_spans.ts";

const BATCHES = 16;

async function post(
  url: string,
  all: Uint8Array<ArrayBuffer>[],
  headers: Readonly<Record<string, string>> = {},
): Promise<number> {
  let ms = 0;
  for (const body of all) ms += await postOne(url, body, headers);
  return (BATCH * all.length) / (ms / 1000);
}

/** A bare server that decodes and discards each body, gzip or not. */
function bareServer(): Deno.HttpServer<Deno.NetAddr> {
  return Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
    const body = request.headers.get("content-encoding") === "gzip"
      ? await new Response(request.body!.pipeThrough(new DecompressionStream("gzip"))).arrayBuffer()
      : await request.arrayBuffer();
    decodeTraceRequest(new Uint8Array(body));
    return new Response(new Uint8Array(), { headers: { "content-type": "application/x-protobuf" } });
  });
}

/**
 * Spans per second into a run's receiver and into the bare server, over five rounds. Each body goes to one and
 * then the other, so that a machine busy with other work weighs on both alike.
 */
async function ingest(
  store: FileStore,
  { all, gzip }: { all: Uint8Array<ArrayBuffer>[]; gzip: boolean },
): Promise<{ run: number; bare: number }> {
  const bare = bareServer();
  const bareUrl = `http://127.0.0.1:${bare.addr.port}/v1/traces`;
  const encoding: Record<string, string> = gzip ? { "content-encoding": "gzip" } : {};
  const runRates: number[] = [];
  const bareRates: number[] = [];
  for (let round = 0; round < 5; round++) {
    const writer = await store.openRun(`run-bench-${gzip ? "gz" : "raw"}-${round}`);
    const recorder = new EvidenceRecorder(writer, { actor: "bench", mode: "strict" });
    await recorder.record({ type: "run_created", component: "RunContext" });
    let runMs = 0;
    let bareMs = 0;
    {
      await using spans = receiver(store, recorder);
      for (const body of all) {
        runMs += await postOne(spans.tracesUrl, body, { ...spans.headers, ...encoding });
        bareMs += await postOne(bareUrl, body, encoding);
      }
    }
    await recorder.seal();
    runRates.push((BATCH * all.length) / (runMs / 1000));
    bareRates.push((BATCH * all.length) / (bareMs / 1000));
  }
  await bare.shutdown();
  return { run: median(runRates), bare: median(bareRates) };
}

/**
 * Unpacks a gzip body in memory up to `cap` bytes, fed in 4 KiB pieces (one piece at once would come back as
 * one chunk of all it unpacks to): the least work a cap can cost.
 */
async function bareGunzip(body: Uint8Array<ArrayBuffer>, cap: number): Promise<void> {
  const gunzip = new DecompressionStream("gzip");
  const writer = gunzip.writable.getWriter();
  const reader = gunzip.readable.getReader();
  const feeding = (async () => {
    for (let at = 0; at < body.byteLength; at += 4096) await writer.write(body.subarray(at, at + 4096));
    await writer.close();
  })().catch(() => {});
  for (let n = 0; n <= cap;) n += (await reader.read()).value!.byteLength;
  await reader.cancel();
  await feeding;
}

/** Milliseconds to a 413 for a 1 GiB gzip bomb at a run's receiver, and for a bare unpacking of its cap. */
async function streamCap(store: FileStore): Promise<{ refused: number; bare: number }> {
  const bomb = gzipBomb(1024);
  const cap = 16 * 1024 * 1024;
  const writer = await store.openRun("run-bench-bomb");
  const recorder = new EvidenceRecorder(writer, { actor: "bench", mode: "strict" });
  await recorder.record({ type: "run_created", component: "RunContext" });
  const refused: number[] = [];
  const bare: number[] = [];
  await using spans = receiver(store, recorder, { maxBytes: cap, limits: { maxProblems: 1000 } });
  for (let round = 0; round < 5; round++) {
    let t = performance.now();
    const r = await fetch(spans.tracesUrl, {
      method: "POST",
      headers: { ...spans.headers, "content-type": "application/x-protobuf", "content-encoding": "gzip" },
      body: bomb,
    });
    await r.arrayBuffer();
    if (r.status !== 413) throw new Error(`the bomb got ${r.status}, not 413`);
    refused.push(performance.now() - t);
    t = performance.now();
    await bareGunzip(bomb, cap);
    bare.push(performance.now() - t);
  }
  return { refused: median(refused), bare: median(bare) };
}

/** Runs the benchmark and prints its lines. */
export async function main(): Promise<void> {
  const all = spanBodies(BATCHES);
  const dir = await Deno.makeTempDir({ prefix: "bench-receiver-" });
  const store = new FileStore({ runs: dir });
  const raw = await ingest(store, { all, gzip: false });
  report(
    `receiver ingest (batches of ${BATCH} OTLP protobuf spans)`,
    raw.run,
    raw.bare,
    "spans/s",
    ">= 0.5",
  );
  const zipped = all.map((b) => new Uint8Array(gzipSync(b)));
  const gz = await ingest(store, { all: zipped, gzip: true });
  report(`receiver ingest, gzip (batches of ${BATCH})`, gz.run, gz.bare, "spans/s", ">= 0.5");
  const cap = await streamCap(store);
  report(
    "receiver stream cap: a 1 GiB gzip bomb refused (413 at 16 MiB) vs a bare gunzip of its first 16 MiB",
    cap.refused,
    cap.bare,
    "ms",
    "<= 2",
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
    raw.run,
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

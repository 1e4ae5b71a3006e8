/**
 * Ingest through the seal: a run opened with `prove serve` (the daemon in its own process, as users run it),
 * 20,480 spans posted by one sender in requests of 512 OTLP/HTTP protobuf spans, the run sealed with the daemon
 * (its writer takes the bodies the daemon wrote, stores each as a payload, chains one event a request; a reader
 * makes their rows) and sealed in the store, then verified. The sender is a process of its own (`_sender.ts`), as the agent program whose spans a
 * run takes is, and the run's writer is this one, as provr is. The figure is spans per second from the first
 * request to the end of the seal, beside a bare Deno server in its own process that decodes and discards the
 * same bodies, sent by the same sender, in the same rounds. Targets: at least 20,000 spans/s, and a ratio of at
 * least 0.5.
 *
 * The burst: 199,680 spans (ten times as many, within a run's default limit of 200,000) sent as fast as one sender can, then sealed: every span must be
 * in the sealed run's evidence, and the daemon's memory (its resident set) is printed before and after.
 *
 * Disk per span: the bytes the run folder takes on disk (blocks, as `du` counts them) per span, beside MLflow's
 * (its SQLite database and artifacts after the same spans, on a server of its own) when `PROVEVI_TEST_MLFLOW_BIN`
 * names MLflow's folder. Target: at most MLflow's.
 * @module
 */
import { join } from "node:path";
import { findRun } from "../../lib/provevi/runs/find_run.ts";
import { verifyRun } from "../../lib/provevi/runs/verify_run.ts";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { openWithDaemon } from "../../lib/provevi/receiver/daemon_client.ts";
import { type DaemonConnection, readDaemonFile } from "../../lib/provevi/receiver/daemon_file.ts";
import { batchSpans } from "../../lib/provevi/receiver/received_batch.ts";
import { readEventsText } from "../../lib/provevi/evidence/read_events.ts";
import { startMlflowServer } from "../../lib/provevi/mlflow/mlflow_server.ts";
import { EvidenceRecorder } from "../../lib/provrun/run/recorder.ts";
import { median, report } from "./_report.ts";
import { BATCH, postOne, spanBodies } from "./_spans.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const BATCHES = 40; // 20,480 spans
const ROUNDS = 15;
/** Ten times the spans, within a run's default limit of 200,000: 199,680. */
const BURST = 390;

/** A child process that prints one line when it is ready, killed when disposed. */
async function child(
  args: string[],
  ready: RegExp,
): Promise<{ line: string; pid: number } & AsyncDisposable> {
  const process = new Deno.Command(Deno.execPath(), { args, cwd: ROOT, stdout: "piped", stderr: "inherit" })
    .spawn();
  const lines = process.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!ready.test(text)) {
    const { done, value } = await lines.read();
    if (done) throw new Error(`${args.join(" ")} ended before it was ready: ${text}`);
    text += value;
  }
  lines.releaseLock();
  process.stdout.cancel().catch(() => {});
  return {
    line: text.match(ready)![0],
    pid: process.pid,
    async [Symbol.asyncDispose]() {
      try {
        process.kill("SIGTERM");
      } catch { /* ended */ }
      await process.status;
    },
  };
}

/** `prove serve` on a runs root, in its own process, with its connection file. */
async function serve(runs: string): Promise<{ connection: DaemonConnection; pid: number } & AsyncDisposable> {
  const file = join(runs, "serve.json");
  const daemon = await child(
    ["run", "-q", "--no-prompt", "-P=prove", "cli/prove.ts", "--runs", runs, "serve", "--secret-file", file],
    /Ctrl-C stops it/,
  );
  return {
    connection: await readDaemonFile(file),
    pid: daemon.pid,
    [Symbol.asyncDispose]: () => daemon[Symbol.asyncDispose](),
  };
}

/** The sender in its own process: each `post` sends `count` bodies to a URL and gives the milliseconds taken. */
async function sender(): Promise<
  { post(url: string, headers: object, count: number): Promise<number> } & AsyncDisposable
> {
  const process = new Deno.Command(Deno.execPath(), {
    args: ["run", "-q", "--no-prompt", "-P=bench", "tests/bench/_sender.ts", String(BATCHES)],
    cwd: ROOT,
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = process.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const input = process.stdin.getWriter();
  let text = "";
  const line = async (): Promise<Record<string, number>> => {
    while (!text.includes("\n")) {
      const { done, value } = await lines.read();
      if (done) throw new Error(`the sender ended: ${text}`);
      text += value;
    }
    const end = text.indexOf("\n");
    const out = JSON.parse(text.slice(0, end));
    text = text.slice(end + 1);
    return out;
  };
  await line(); // ready, its bodies made
  return {
    async post(url, headers, count) {
      await input.write(new TextEncoder().encode(JSON.stringify({ url, headers, count }) + "\n"));
      return (await line()).ms!;
    },
    async [Symbol.asyncDispose]() {
      await input.close().catch(() => {});
      lines.releaseLock();
      await process.stdout.cancel().catch(() => {});
      await process.status;
    },
  };
}

type Sender = Awaited<ReturnType<typeof sender>>;

/** One run through the daemon: opened, the bodies posted, sealed with the daemon and in the store. */
async function throughTheSeal(
  daemon: { connection: DaemonConnection },
  { store, runId, send, count }: { store: FileStore; runId: string; send: Sender; count: number },
): Promise<{ ms: number; folder: string }> {
  const writer = await store.openRun(runId);
  const recorder = new EvidenceRecorder(writer, { actor: "bench", mode: "strict" });
  await recorder.record({ type: "run_created", component: "RunContext" });
  const spans = await openWithDaemon(daemon.connection, recorder);
  const t = performance.now();
  await send.post(spans.tracesUrl, spans.headers, count);
  await spans.close();
  await recorder.record({ type: "run_completed", component: "RunContext", data: { status: "completed" } });
  await recorder.seal();
  return { ms: performance.now() - t, folder: writer.folder };
}

/** The spans a sealed run's evidence holds, each read back from its batch, and whether the run verifies. */
async function spansIn(folder: string): Promise<{ spans: number; ok: boolean }> {
  const record = await findRun(folder);
  let spans = 0;
  for (const e of readEventsText((await record.eventsText())!).events) {
    if (e.type === "spans_received") spans += batchSpans(e, await record.payload(e.payload!)).length;
  }
  return { spans, ok: (await verifyRun(record)).ok };
}

/** The bytes a folder takes on disk, as `du` counts them (blocks of 512 bytes). */
async function diskBytes(path: string): Promise<number> {
  const info = await Deno.lstat(path);
  let bytes = (info.blocks ?? 0) * 512;
  if (info.isDirectory) {
    for await (const e of Deno.readDir(path)) bytes += await diskBytes(join(path, e.name));
  }
  return bytes;
}

/** The daemon's resident memory, in MiB, as `ps` tells it (Deno reads /proc only with every permission). */
async function residentMiB(pid: number): Promise<number> {
  const out = await new Deno.Command("ps", { args: ["-o", "rss=", "-p", String(pid)], stdout: "piped" })
    .output();
  return Number(new TextDecoder().decode(out.stdout).trim() || NaN) / 1024;
}

/** Runs the benchmark and prints its lines. */
export async function main(): Promise<void> {
  const bodies = spanBodies(BATCHES);
  const spans = BATCH * BATCHES;
  const runs = await Deno.makeTempDir({ prefix: "bench-ingest-" });
  const store = new FileStore({ runs });
  await using daemon = await serve(runs);
  await using bare = await child(["run", "-q", "--no-prompt", "-A", "tests/bench/_bare_decode.ts"], /^\d+/);
  await using send = await sender();
  const bareUrl = `http://127.0.0.1:${bare.line}/v1/traces`;
  const rates: number[] = [];
  const bareRates: number[] = [];
  let folder = "";
  for (let round = 0; round < ROUNDS; round++) {
    const run = await throughTheSeal(daemon, { store, runId: `run-ingest-${round}`, send, count: BATCHES });
    rates.push(spans / (run.ms / 1000));
    folder = run.folder;
    bareRates.push(spans / (await send.post(bareUrl, {}, BATCHES) / 1000));
  }
  const kept = await spansIn(folder);
  if (kept.spans !== spans || !kept.ok) {
    throw new Error(`the run holds ${kept.spans} spans, verified ${kept.ok}`);
  }
  const rate = median(rates);
  report(
    `ingest through the seal (prove serve, ${
      spans.toLocaleString("en-US")
    } spans in requests of ${BATCH}, sealed and verified) vs a bare decode`,
    rate,
    median(bareRates),
    "spans/s",
    `>= 0.5, and >= 20,000 spans/s: ${rate >= 20_000 ? "met" : "missed"}`,
  );
  await burst(daemon, { store, send });
  const perSpan = await diskBytes(folder) / spans;
  const mlflow = await mlflowDiskPerSpan(bodies.slice(0, 4));
  if (mlflow === null) {
    console.log(
      `disk per span: ${
        perSpan.toFixed(0)
      } bytes; MLflow not measured (set PROVEVI_TEST_MLFLOW_BIN to MLflow's folder)`,
    );
  } else report("disk per span vs MLflow's", perSpan, mlflow, "bytes", "<= 1");
  await Deno.remove(runs, { recursive: true });
}

/** Ten times the spans, sent as fast as one sender can: every one must be in the sealed run. */
async function burst(
  daemon: { connection: DaemonConnection; pid: number },
  { store, send }: { store: FileStore; send: Sender },
): Promise<void> {
  const before = await residentMiB(daemon.pid);
  const t = performance.now();
  const run = await throughTheSeal(daemon, { store, runId: "run-ingest-burst", send, count: BURST });
  const after = await residentMiB(daemon.pid);
  const kept = await spansIn(run.folder);
  const sent = BATCH * BURST;
  console.log(
    `ingest burst: ${sent.toLocaleString("en-US")} spans sent and sealed in ${
      ((performance.now() - t) / 1000).toFixed(1)
    } s; ${kept.spans.toLocaleString("en-US")} in the sealed run (${sent - kept.spans} lost; target 0), ` +
      `verified ${kept.ok}; the daemon's memory ${before.toFixed(0)} MiB before, ${
        after.toFixed(0)
      } MiB after`,
  );
}

/** MLflow's disk per span: the same spans into a server of its own, on a new SQLite file. */
async function mlflowDiskPerSpan(bodies: Uint8Array<ArrayBuffer>[]): Promise<number | null> {
  const bin = Deno.env.get("PROVEVI_TEST_MLFLOW_BIN");
  if (!bin) return null;
  const dir = await Deno.makeTempDir({ prefix: "bench-ingest-mlflow-" });
  try {
    const db = join(dir, "mlflow.db");
    const artifacts = join(dir, "artifacts");
    await using server = await startMlflowServer(`sqlite:///${db}`, {
      environ: { PATH: Deno.env.get("PATH") ?? "", HOME: Deno.env.get("HOME") },
      program: join(bin, "mlflow"),
      artifacts,
    });
    const created = await fetch(`${server.url}/api/2.0/mlflow/experiments/create`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "bench-ingest" }),
    });
    const { experiment_id } = await created.json() as { experiment_id: string };
    const before = await diskBytes(dir);
    for (const body of bodies) {
      await postOne(`${server.url}/v1/traces`, body, { "x-mlflow-experiment-id": experiment_id });
    }
    return (await diskBytes(dir) - before) / (BATCH * bodies.length);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) await main();

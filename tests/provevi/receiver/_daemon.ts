/**
 * What the daemon's tests share: a store with open runs and their recorders, opening a run with a daemon as
 * its writer, sending spans with the run's ingest key through the real OTLP exporter, sealing with its writer
 * key, and a writer in another process that a test can kill.
 * @module
 */
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import type { OpenedRun, SealedSpans, SpanDaemon } from "../../../lib/provevi/receiver/span_daemon.ts";
import { EvidenceRecorder } from "../../../lib/provrun/run/recorder.ts";
import { openWithDaemon } from "../../../lib/provevi/receiver/daemon_client.ts";
import { readDaemonFile, writeDaemonFile } from "../../../lib/provevi/receiver/daemon_file.ts";
import { join } from "node:path";
import { removeWritable } from "../../_files.ts";

/** A file store in a new folder, removed at the end of the scope. */
export async function tempStore(): Promise<{ store: FileStore; runs: string } & AsyncDisposable> {
  const runs = await Deno.makeTempDir({ prefix: "provevi-daemon-" });
  return {
    store: new FileStore({ runs }),
    runs,
    [Symbol.asyncDispose]: () => removeWritable(runs),
  };
}

/** Opens a run in the store, with its recorder and its first event. */
export async function openInStore(store: FileStore, runId: string) {
  const writer = await store.openRun(runId);
  const recorder = new EvidenceRecorder(writer, { actor: "ada", mode: "strict" });
  await recorder.record({ type: "run_created", component: "RunContext", data: {} });
  return { writer, recorder };
}

/** `POST /runs` with the daemon's secret (or the credential given). */
export function openRequest(daemon: SpanDaemon, runId: string, bearer = daemon.secret): Promise<Response> {
  return fetch(`${daemon.url}/runs`, {
    method: "POST",
    headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" },
    body: JSON.stringify({ run_id: runId }),
  });
}

/** Opens a run with the daemon, as its writer. */
export async function openWith(daemon: SpanDaemon, runId: string): Promise<OpenedRun> {
  const r = await openRequest(daemon, runId);
  if (r.status !== 201) throw new Error(`open ${runId}: ${r.status} ${await r.text()}`);
  return await r.json() as OpenedRun;
}

/** Sends spans of these names to a run at the daemon through the real OTLP/HTTP protobuf exporter. */
export async function sendSpans(opened: OpenedRun, names: string[], key = opened.ingest_key): Promise<void> {
  const provider = new BasicTracerProvider({
    spanProcessors: [
      new SimpleSpanProcessor(
        new OTLPTraceExporter({ url: opened.traces_url, headers: { authorization: `Bearer ${key}` } }),
      ),
    ],
  });
  const tracer = provider.getTracer("claude_code");
  for (const name of names) tracer.startSpan(name).end();
  await provider.shutdown();
}

/** A raw span request to a run at the daemon: JSON, with the key given. */
export function postSpans(opened: OpenedRun, body: BodyInit, key: string | null = opened.ingest_key) {
  return fetch(opened.traces_url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body,
  });
}

/** One JSON trace request of `n` small spans. */
export function jsonSpans(n: number, name = "claude_code.tool"): string {
  const spans = Array.from({ length: n }, (_, i) => ({
    traceId: "0af7651916cd43dd8448eb211c80319c",
    spanId: (i + 1).toString(16).padStart(16, "0"),
    name,
    startTimeUnixNano: "1764500000000000000",
    endTimeUnixNano: "1764500000100000000",
  }));
  return JSON.stringify({ resourceSpans: [{ scopeSpans: [{ scope: { name: "claude_code" }, spans }] }] });
}

/** `POST <seal_url>` with the writer key (or the credential given). */
export function sealRequest(opened: OpenedRun, key = opened.writer_key): Promise<Response> {
  return fetch(opened.seal_url, { method: "POST", headers: { authorization: `Bearer ${key}` } });
}

/** Seals a run with the daemon, as its writer. */
export async function sealWith(opened: OpenedRun): Promise<SealedSpans> {
  const r = await sealRequest(opened);
  if (r.status !== 200) throw new Error(`seal: ${r.status} ${await r.text()}`);
  return await r.json() as SealedSpans;
}

const WRITER = `
import { FileStore } from ${JSON.stringify(new URL("../../../lib/provevi/mod.ts", import.meta.url).href)};
const writer = await new FileStore({ runs: Deno.args[0] }).openRun(Deno.args[1]);
console.log("open");
setInterval(() => writer.runId, 60_000); // holds the run, and its writer's lock, until killed
`;

/** A run's writer in another process: it opens the run and holds it until `kill()`. */
export async function writerProcess(runs: string, runId: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", "--no-prompt", "--allow-read", "--allow-write", "--allow-env", WRITER, runs, runId],
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let said = "";
  while (!said.includes("open")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the writer ended before it opened ${runId}`);
    said += value;
  }
  reader.releaseLock();
  return {
    async kill(): Promise<void> {
      child.kill("SIGKILL");
      await child.status;
      await child.stdout.cancel().catch(() => {});
    },
  };
}

/** A writer opened with the daemon through its connection file, and a way to post bodies with its ingest key. */
export async function writerWithDaemon(
  t: { store: FileStore; runs: string },
  daemon: SpanDaemon,
  runId: string,
) {
  const file = join(t.runs, "serve.json");
  await writeDaemonFile(file, { url: daemon.url, secret: daemon.secret, pid: Deno.pid });
  const run = await openInStore(t.store, runId);
  const spans = await openWithDaemon(await readDaemonFile(file), run.recorder);
  const post = async (body: BodyInit, type = "application/x-protobuf") => {
    const r = await fetch(spans.tracesUrl, {
      method: "POST",
      headers: { ...spans.headers, "content-type": type },
      body,
    });
    await r.body?.cancel();
    return r.status;
  };
  return { run, spans, post };
}

/**
 * A span receiver in a process of its own, whose memory a test can watch: `prove serve`'s daemon (`daemon`) or a
 * run's own receiver (`receiver`), with one open run. It prints one JSON line (the traces URL, the headers to
 * send, the cap, its resident memory at rest), samples its resident memory every few milliseconds, and prints the
 * highest it saw when a line comes on stdin.
 * @module
 */
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { receiver } from "../../lib/provevi/receiver/run_receiver.ts";
import { SpanDaemon } from "../../lib/provevi/receiver/span_daemon.ts";
import { EvidenceRecorder } from "../../lib/provrun/run/recorder.ts";

const [kind, runs] = Deno.args as ["daemon" | "receiver", string];
const store = new FileStore({ runs });
const writer = await store.openRun("run-20261130T120000Z-00b0b0b0");
const recorder = new EvidenceRecorder(writer, { actor: "ada", mode: "strict" });
await recorder.record({ type: "run_created", component: "RunContext", data: {} });
const cap = 16 * 1024 * 1024;
let traces: string;
let headers: Record<string, string>;
if (kind === "daemon") {
  const daemon = SpanDaemon.start(store, { maxBytes: cap });
  const opened = await (await fetch(`${daemon.url}/runs`, {
    method: "POST",
    headers: { authorization: `Bearer ${daemon.secret}`, "content-type": "application/json" },
    body: JSON.stringify({ run_id: writer.runId }),
  })).json();
  traces = opened.traces_url;
  headers = { authorization: `Bearer ${opened.ingest_key}` };
} else {
  const spans = receiver(store, recorder, { maxBytes: cap });
  traces = spans.tracesUrl;
  headers = { ...spans.headers };
}
await new Promise((r) => setTimeout(r, 200));
const rest = Deno.memoryUsage().rss;
let peak = rest;
const sampler = setInterval(() => {
  peak = Math.max(peak, Deno.memoryUsage().rss);
}, 2);
console.log(JSON.stringify({ traces, headers, cap, rest }));
const lines = Deno.stdin.readable.pipeThrough(new TextDecoderStream()).getReader();
await lines.read();
clearInterval(sampler);
console.log(JSON.stringify({ peak: Math.max(peak, Deno.memoryUsage().rss), rest }));
Deno.exit(0);

/**
 * The senders of a run's spans beyond OTLP/HTTP: OTLP over gRPC (to a real Arize Phoenix, read back through its
 * own client; an unreachable gRPC endpoint), Logfire (its OTLP/HTTP endpoint with the write token, against a local
 * receiver that decodes the protobuf and checks the path and the header, since the SaaS cannot be reached here),
 * and the redaction hook (what leaves changes, what is recorded does not; a hook that fails stops the span).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { createServer } from "node:http2";
import type { EvidenceEvent } from "../../../lib/provevi/evidence/event.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { TelemetryPolicy } from "../../../lib/provevi/telemetry/policy.ts";
import { decodeTraceRequest, OtlpReceiver } from "../../../lib/provevi/receiver/otlp_receiver.ts";
import type { ReceivedSpan } from "../../../lib/provevi/receiver/otlp_wire.ts";
import { readEventsText } from "../../../lib/provevi/evidence/read_events.ts";
import { readSpansFile } from "../../../lib/provevi/evidence/spans_file.ts";
import type { RunOptions } from "../../../lib/provrun/runner/run.ts";
import type { SpanRedactor } from "../../../lib/provrun/telemetry/senders.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";
import { peerTest } from "../../_peers.ts";
import { ANSWER, answerRun } from "./_answer_run.ts";
import { phoenixSpans, type Shown } from "./_phoenix.ts";

const PHOENIX_GRPC_URL = Deno.env.get("PROVRUN_TEST_PHOENIX_GRPC_URL");

/** The run's answer: content, which no destination below bodies may receive. */
function policyOf(kind: "otlp" | "logfire", endpoint: string, receives = "names"): TelemetryPolicy {
  return TelemetryPolicy.fromDict({
    version: 1,
    libraries: {},
    destinations: { dest: { kind, receives, endpoint } },
    hosts: ["127.0.0.1"],
  });
}

async function run(options: RunOptions) {
  const runs = await Deno.makeTempDir();
  const store = new FileStore({ runs });
  const outcome = await runFile(answerRun(), { environ: {}, ...options, store });
  const events: EvidenceEvent[] =
    readEventsText((await (await store.readRun(outcome.runId)).eventsText())!).events;
  const check = await verifyRun(await store.readRun(outcome.runId));
  assert.ok(check.ok, JSON.stringify(check.problems));
  const spans = await readSpansFile(outcome.folder);
  return { runs, outcome, events, spans };
}

const problemsOf = (events: EvidenceEvent[]) =>
  events.filter((e) => e.type === "telemetry_problem").map((e) => String(e.data.problem));

/** Every file of a folder, by its path inside it, as text. */
async function filesOf(
  root: string,
  dir = root,
  out = new Map<string, string>(),
): Promise<Map<string, string>> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) await filesOf(root, path, out);
    else out.set(path.slice(root.length + 1), await Deno.readTextFile(path));
  }
  return out;
}

/** Phoenix's spans of a trace, once it has ingested `count` of them (it writes them after it answers). */
async function phoenixTrace(traceId: string, count: number): Promise<Shown[]> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const spans = await phoenixSpans(traceId);
    if (spans.length >= count || Date.now() > deadline) return spans;
    await new Promise((r) => setTimeout(r, 500));
  }
}

peerTest("phoenix", {
  name: "OTLP over gRPC: Phoenix receives every span of the run at names, and no content",
  fn: async () => {
    const url = PHOENIX_GRPC_URL!;
    const { outcome, events, spans, runs } = await run({
      policy: policyOf("otlp", url),
      environ: { OTEL_EXPORTER_OTLP_ENDPOINT: url, OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" },
    });
    assert.equal(outcome.status, "completed");
    assert.deepEqual(problemsOf(events), []);
    assert.deepEqual(events[0]!.data.telemetry_destinations, [
      {
        variable: "OTEL_EXPORTER_OTLP_ENDPOINT",
        kind: "otlp",
        url: `${url}/`,
        destination: "dest",
        receives: "names",
      },
    ]);
    const shown = await phoenixTrace(spans[0]!.trace_id, spans.length);
    // every span arrived; below bodies the chat span's model, which the run did not declare, is a label and hash
    const names = (list: string[]) => list.map((n) => n.startsWith("chat ") ? "chat" : n).sort();
    assert.deepEqual(names(shown.map((s) => s.name)), names(spans.map((s) => s.name)));
    const root = shown.find((s) => s.name === "invoke_agent q")!;
    assert.equal(root.type, "AGENT");
    // names: no token counts, no content
    assert.ok(!JSON.stringify(shown).includes(ANSWER));
    assert.ok(!JSON.stringify(shown).includes("gen_ai.usage.input_tokens"));
    await Deno.remove(runs, { recursive: true });
  },
});

Deno.test("an unreachable gRPC endpoint: telemetry_problem, the run completes, verifies and keeps every span", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const url = `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`;
  listener.close(); // nothing listens there now: the connection is refused
  const { outcome, events, spans, runs } = await run({
    policy: policyOf("otlp", url),
    environ: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: url, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "grpc" },
  });
  assert.equal(outcome.status, "completed");
  const problems = problemsOf(events);
  assert.equal(problems.length, 1, problems.join("\n"));
  assert.match(
    problems[0]!,
    /^the OTLP destination dest \(http:\/\/127\.0\.0\.1:\d+\/\) refused spans: no gRPC call: .*ECONNREFUSED/,
  );
  assert.equal(events.at(-1)!.type, "run_completed");
  assert.ok(spans.some((s) => s.name === "invoke_agent q"), "the root span is in the store");
  await Deno.remove(runs, { recursive: true });
});

/**
 * A gRPC OTLP receiver on node:http2 (h2c): it decodes each framed ExportTraceServiceRequest and answers OK when
 * the call's `authorization` metadata is the token, else status 16 UNAUTHENTICATED.
 */
async function grpcReceiver(token: string) {
  const seen = { spans: [] as ReceivedSpan[], paths: new Set<string>() };
  const server = createServer();
  server.on("stream", (stream, headers) => {
    const chunks: Uint8Array[] = [];
    stream.on("data", (c: Uint8Array) => chunks.push(c));
    stream.on("end", () => {
      seen.paths.add(String(headers[":path"]));
      const ok = headers.authorization === token && headers["content-type"] === "application/grpc";
      if (ok) {
        const body = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
        let at = 0;
        for (const c of chunks) {
          body.set(c, at);
          at += c.length;
        }
        seen.spans.push(...decodeTraceRequest(body.subarray(5)));
      }
      stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
      stream.on(
        "wantTrailers",
        () =>
          stream.sendTrailers(
            ok ? { "grpc-status": "0" } : { "grpc-status": "16", "grpc-message": "bad token" },
          ),
      );
      stream.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return { seen, url, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

Deno.test("OTLP over gRPC sends the run's headers as metadata; a status other than OK is a telemetry_problem", async () => {
  const receiver = await grpcReceiver("Bearer right");
  try {
    const environ = (token: string) => ({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
      OTEL_EXPORTER_OTLP_HEADERS: `authorization=${encodeURIComponent(token)}`,
    });
    const right = await run({
      policy: policyOf("otlp", receiver.url, "usage"),
      environ: environ("Bearer right"),
    });
    assert.deepEqual(problemsOf(right.events), []);
    assert.deepEqual([...receiver.seen.paths], [
      "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
    ]);
    assert.deepEqual(
      receiver.seen.spans.map((s) => s.spanId).sort(),
      right.spans.map((s) => s.span_id).sort(),
    );
    const root = receiver.seen.spans.find((s) => s.name === "invoke_agent q")!;
    assert.equal(root.attributes["gen_ai.usage.output_tokens"], 9);

    const wrong = await run({
      policy: policyOf("otlp", receiver.url, "usage"),
      environ: environ("Bearer wrong"),
    });
    assert.equal(wrong.outcome.status, "completed");
    const problems = problemsOf(wrong.events);
    assert.equal(problems.length, 1, problems.join("\n"));
    assert.match(problems[0]!, /refused spans: gRPC status 16 UNAUTHENTICATED: bad token/);
    assert.ok(!JSON.stringify(wrong.events).includes("Bearer wrong"), "the header is not recorded");
    await Deno.remove(right.runs, { recursive: true });
    await Deno.remove(wrong.runs, { recursive: true });
  } finally {
    await receiver.close();
  }
});

/** A stand-in for Logfire's OTLP/HTTP endpoint: it answers only POST /v1/traces with the token, in protobuf. */
function logfireStandIn(token: string) {
  const seen = { spans: [] as ReceivedSpan[], refused: [] as string[] };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
    const body = new Uint8Array(await request.arrayBuffer());
    const path = new URL(request.url).pathname;
    const why = request.method !== "POST" || path !== "/v1/traces"
      ? `${request.method} ${path}`
      : request.headers.get("authorization") !== token
      ? "authorization"
      : request.headers.get("content-type") !== "application/x-protobuf"
      ? "content-type"
      : null;
    if (why !== null) {
      seen.refused.push(why);
      return new Response("refused", { status: why === "authorization" ? 401 : 404 });
    }
    seen.spans.push(...decodeTraceRequest(body));
    return new Response(new Uint8Array(), { headers: { "content-type": "application/x-protobuf" } });
  });
  return { server, seen, url: `http://127.0.0.1:${server.addr.port}` };
}

Deno.test("Logfire: spans go to <endpoint>/v1/traces with the write token; the run records the variable's name only", async () => {
  const token = "pylf_v1_us_secretwritetoken";
  const logfire = logfireStandIn(token);
  try {
    const { outcome, events, spans, runs } = await run({
      policy: policyOf("logfire", logfire.url, "usage"),
      environ: { LOGFIRE_TOKEN: token },
    });
    assert.equal(outcome.status, "completed");
    assert.deepEqual(problemsOf(events), []);
    assert.deepEqual(logfire.seen.refused, []);
    assert.deepEqual(logfire.seen.spans.map((s) => s.spanId).sort(), spans.map((s) => s.span_id).sort());
    const root = logfire.seen.spans.find((s) => s.name === "invoke_agent q")!;
    assert.equal(root.attributes["gen_ai.usage.input_tokens"], 14);
    assert.ok(!JSON.stringify(logfire.seen.spans).includes(ANSWER), "usage: no content");
    assert.deepEqual(events[0]!.data.telemetry_variables, ["LOGFIRE_TOKEN"]);
    assert.deepEqual(events[0]!.data.telemetry_destinations, [
      {
        variable: "LOGFIRE_TOKEN",
        kind: "logfire",
        url: `${logfire.url}/v1/traces`,
        destination: "dest",
        receives: "usage",
      },
    ]);
    for (const [path, text] of await filesOf(runs)) {
      assert.ok(!text.includes(token), `${path} holds the token`);
    }
    await Deno.remove(runs, { recursive: true });
  } finally {
    await logfire.server.shutdown();
  }
});

Deno.test("Logfire: without LOGFIRE_TOKEN nothing is sent; a wrong token is a telemetry_problem and the run completes", async () => {
  const logfire = logfireStandIn("pylf_v1_us_right");
  try {
    const unset = await run({ policy: policyOf("logfire", logfire.url) });
    assert.equal(unset.outcome.status, "completed");
    assert.deepEqual(problemsOf(unset.events), []);
    assert.deepEqual(unset.events[0]!.data.telemetry_destinations, []);
    assert.equal(logfire.seen.spans.length + logfire.seen.refused.length, 0);

    const wrong = await run({
      policy: policyOf("logfire", logfire.url),
      environ: { LOGFIRE_TOKEN: "pylf_wrong" },
    });
    assert.equal(wrong.outcome.status, "completed");
    const problems = problemsOf(wrong.events);
    assert.equal(problems.length, 1, problems.join("\n"));
    assert.match(
      problems[0]!,
      /^the Logfire destination dest \(http:\/\/127\.0\.0\.1:\d+\/v1\/traces\) refused spans/,
    );
    assert.ok(logfire.seen.refused.includes("authorization"));
    assert.ok(!JSON.stringify(wrong.events).includes("pylf_wrong"));
    await Deno.remove(unset.runs, { recursive: true });
    await Deno.remove(wrong.runs, { recursive: true });
  } finally {
    await logfire.server.shutdown();
  }
});

/** A record with what differs between two runs of one file put in one form: IDs, hashes, times. */
function sameForm(text: string, runId: string): string {
  return text
    .replaceAll(runId, "RUN")
    .replace(/[A-Za-z0-9+/]{40,}={0,2}/g, "B64")
    .replace(/\b[0-9a-f]{64}\b/g, "H64")
    .replace(/\b[0-9a-f]{32}\b/g, "H32")
    .replace(/\b[0-9a-f]{16}\b/g, "H16")
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, "TIME")
    .replace(/"(duration_ms|elapsed_ms|latency_ms|ms)":\d+(\.\d+)?/g, '"$1":N');
}

Deno.test("the redaction hook changes what a destination receives, never what the run records", async () => {
  await using receiver = await OtlpReceiver.start();
  const seen: string[] = [];
  const redact: SpanRedactor = (span) => {
    seen.push(`${span.destination}:${span.receives}`);
    const { "gen_ai.agent.name": _, ...rest } = span.attributes;
    return { ...rest, "provrun.run_id": "redacted" };
  };
  const options = {
    policy: policyOf("otlp", receiver.tracesUrl, "names"),
    environ: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.tracesUrl },
  };
  const plain = await run(options);
  const plainSent = receiver.spans.splice(0);
  const hooked = await run({ ...options, redact });

  // what left: the hook saw each span (cut to names) and its changes arrived
  const sent = receiver.spans;
  assert.equal(seen.length, hooked.spans.length);
  assert.ok(seen.every((s) => s === "dest:names"));
  assert.equal(sent.length, hooked.spans.length);
  assert.ok(plainSent.some((s) => "gen_ai.agent.name" in s.attributes), "without the hook, the field leaves");
  for (const s of sent) {
    assert.ok(!("gen_ai.agent.name" in s.attributes), s.name);
    assert.equal(s.attributes["provrun.run_id"], "redacted", s.name);
  }

  // what was recorded: the same as without the hook, the run's own IDs and times aside
  assert.ok(hooked.spans.some((s) => s.attributes["gen_ai.agent.name"] === "q"), "the store keeps the field");
  const plainFiles = await filesOf(plain.outcome.folder);
  const hookedFiles = await filesOf(hooked.outcome.folder);
  assert.deepEqual(
    [...hookedFiles.keys()].map((k) => sameForm(k, hooked.outcome.runId)).sort(),
    [
      ...plainFiles.keys(),
    ].map((k) => sameForm(k, plain.outcome.runId)).sort(),
  );
  // spans.jsonl keeps the order in which spans ended, which two runs need not share when spans end together.
  const formOf = (files: Map<string, string>, runId: string) =>
    [...files].map(([name, t]) =>
      name.endsWith("spans.jsonl") ? sameForm(t, runId).split("\n").sort().join("\n") : sameForm(t, runId)
    ).sort();
  assert.deepEqual(formOf(hookedFiles, hooked.outcome.runId), formOf(plainFiles, plain.outcome.runId));
  await Deno.remove(plain.runs, { recursive: true });
  await Deno.remove(hooked.runs, { recursive: true });
});

for (
  const [how, hook] of [
    ["throws", () => {
      throw new Error(`cannot redact ${ANSWER}`);
    }],
    ["adds an attribute", (s) => ({ ...s.attributes, "leak.extra": ANSWER })],
    ["returns a text", () => ANSWER as never],
  ] as [string, SpanRedactor][]
) {
  Deno.test(`a redaction hook that ${how}: the span is not sent, telemetry_problem, the run goes on`, async () => {
    await using receiver = await OtlpReceiver.start();
    const failing: SpanRedactor = (span) => span.name.startsWith("chat") ? hook(span) : undefined;
    const { outcome, events, spans, runs } = await run({
      policy: policyOf("otlp", receiver.tracesUrl, "names"),
      environ: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.tracesUrl },
      redact: failing,
    });
    assert.equal(outcome.status, "completed");
    assert.ok(spans.some((s) => s.name.startsWith("chat")), "the store keeps the chat span");
    const sent = receiver.spans.map((s) => s.name);
    assert.ok(!sent.some((n) => n.startsWith("chat")), sent.join(", "));
    assert.equal(sent.length, spans.length - spans.filter((s) => s.name.startsWith("chat")).length);
    const problems = problemsOf(events);
    assert.equal(problems.length, 1, problems.join("\n"));
    assert.match(
      problems[0]!,
      /^the redaction hook .* on a span for the destination dest; those spans were not sent/,
    );
    assert.ok(!problems[0]!.includes(ANSWER), "the problem quotes no content");
    await Deno.remove(runs, { recursive: true });
  });
}

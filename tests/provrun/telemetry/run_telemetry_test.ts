import assert from "node:assert/strict";
import { join } from "node:path";
import type { EvidenceEvent } from "../../../lib/provevi/evidence/event.ts";
import type { Level } from "../../../lib/provevi/telemetry/attributes.ts";
import { TelemetryPolicyError } from "../../../lib/provevi/evidence/errors.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { SqliteStore } from "../../../lib/provevi/sqlite/sqlite_store.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { TelemetryPolicy } from "../../../lib/provevi/telemetry/policy.ts";
import { CONTENT_KEYS } from "../../../lib/provevi/telemetry/genai_conventions.ts";
import { OtlpReceiver } from "../../../lib/provevi/receiver/otlp_receiver.ts";
import { readEventsText } from "../../../lib/provevi/evidence/read_events.ts";
import { readSpansFile } from "../../../lib/provevi/evidence/spans_file.ts";
import type { BackendJob } from "../../../lib/provrun/backends/backend.ts";
import type { RunOptions } from "../../../lib/provrun/runner/run.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";
import { TelemetryRefused } from "../../../lib/provrun/telemetry/telemetry_env.ts";
import { CallBackend } from "../../../lib/provrun/backends/call_backend.ts";
import { declaredNames, hashedName } from "../../../lib/provrun/telemetry/declared_names.ts";
import { cutAttributes } from "../../../lib/provrun/telemetry/span_cut.ts";
import { DEFAULT_TOOLS } from "../../../lib/provrun/sandbox/tools.ts";
import { answerRun } from "./_answer_run.ts";

function collector(receiver: OtlpReceiver, level: Level, libraries: Record<string, unknown> = {}) {
  return TelemetryPolicy.fromDict({
    version: 1,
    libraries,
    destinations: { collector: { kind: "otlp", receives: level, endpoint: receiver.tracesUrl } },
    hosts: ["127.0.0.1"],
  });
}

/** The call backend, after it makes spans of other instrumentation scopes on the run's own tracer provider. */
class LibraryBackend extends CallBackend {
  constructor(
    readonly spans: {
      scope: string;
      name: string;
      attributes: Record<string, string | number>;
      error?: string;
    }[],
  ) {
    super();
  }
  override start(job: BackendJob): Promise<void> {
    for (const s of this.spans) {
      const span = job.ctx.tracerProvider!.getTracer(s.scope).startSpan(s.name, { attributes: s.attributes });
      span.addEvent("prompt", { text: "the whole prompt" });
      if (s.error !== undefined) span.setStatus({ code: 2, message: s.error });
      span.end();
    }
    return super.start(job);
  }
}

async function run(options: RunOptions & { telemetry?: string }) {
  const runs = await Deno.makeTempDir();
  const store = options.store ?? new FileStore({ runs });
  const outcome = await runFile(answerRun(options.telemetry), { environ: {}, ...options, store });
  const events: EvidenceEvent[] =
    readEventsText((await (await store.readRun(outcome.runId)).eventsText())!).events;
  const check = await verifyRun(await store.readRun(outcome.runId));
  assert.ok(check.ok, JSON.stringify(check.problems));
  return { runs, store, outcome, events, spans: await readSpansFile(outcome.folder) };
}

const of = (events: EvidenceEvent[], type: string) => events.filter((e) => e.type === type);

/** A span's content attributes apart from the rest. */
function splitContent(attributes: Record<string, unknown>) {
  const content: Record<string, unknown> = {};
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(attributes)) (CONTENT_KEYS.has(k) ? content : rest)[k] = v;
  return { content, rest };
}

for (const level of ["names", "usage", "bodies"] as const) {
  Deno.test(`an approved OTLP destination at ${level} receives exactly what ${level} allows`, async () => {
    await using receiver = await OtlpReceiver.start();
    const policy = collector(receiver, level);
    const { outcome, events, spans, runs } = await run({
      policy,
      environ: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
    });
    assert.equal(outcome.status, "completed");
    assert.deepEqual(of(events, "telemetry_blocked"), []);
    const created = events[0]!;
    assert.equal(created.data.policy_digest, policy.digest());
    assert.deepEqual(created.data.telemetry_destinations, [{
      variable: "OTEL_EXPORTER_OTLP_ENDPOINT",
      kind: "otlp",
      url: receiver.tracesUrl,
      destination: "collector",
      receives: level,
    }]);

    // every span of the run reached the store and the destination, with the IDs the events hold
    const received = receiver.spans;
    assert.ok(spans.length >= 5, `${spans.length} spans in the store`);
    assert.deepEqual(received.map((s) => s.spanId).sort(), spans.map((s) => s.span_id).sort());
    for (const e of events) if (e.span_id) assert.ok(spans.some((s) => s.span_id === e.span_id), e.type);
    for (const r of received) {
      const stored = spans.find((s) => s.span_id === r.spanId)!;
      assert.equal(r.traceId, stored.trace_id);
      assert.equal(r.parentSpanId, stored.parent_span_id);
      assert.equal(r.scope.name, "provrun");
      // the run's own resource: no host, process or OTEL_RESOURCE_ATTRIBUTES
      assert.deepEqual(r.resource, { "service.name": "provrun" });
      // Below bodies, a model or tool name the run did not declare goes as a label and a hash (harden).
      const declared = declaredNames(answerRun().data.agent, DEFAULT_TOOLS, { agentId: "acme/demo/dev/q" });
      // the content attributes reach a destination at bodies only, and the store's index never keeps them
      const { content, rest } = splitContent(r.attributes);
      assert.deepEqual(rest, cutAttributes(stored.attributes, level, declared), r.name);
      if (level !== "bodies") assert.deepEqual(content, {}, r.name);
      assert.deepEqual(splitContent(stored.attributes).content, {}, r.name);
      assert.equal(r.attributes["provrun.run_id"], outcome.runId);
      if (level !== "bodies") assert.deepEqual(r.events, []);
    }

    const chat = received.find((s) => s.attributes["gen_ai.operation.name"] === "chat")!;
    const called = of(events, "model_called")[0]!;
    assert.equal(chat.spanId, called.span_id);
    // "test:" declares no model by name, so below bodies the script's model names go as hashes.
    const shown = (value: string) => level === "bodies" ? value : hashedName("model", value);
    assert.equal(chat.name, `chat ${shown("inline")}`);
    assert.equal(chat.attributes["gen_ai.request.model"], shown("inline"));
    assert.equal(chat.attributes["gen_ai.response.model"], shown("answer-1"));
    assert.equal(chat.attributes["gen_ai.usage.input_tokens"], level === "names" ? undefined : 14);
    assert.equal(chat.attributes["gen_ai.usage.output_tokens"], level === "names" ? undefined : 9);
    // the payloads hold the whole content, named by provrun's own *_ref attributes, which only bodies receives
    assert.equal(
      chat.attributes["provrun.input.messages_ref"],
      level === "bodies" ? called.payload : undefined,
    );
    assert.equal(
      chat.attributes["provrun.output.messages_ref"],
      level === "bodies" ? called.data.response_payload : undefined,
    );
    // at bodies the content itself, in the GenAI conventions' shapes
    const json = (key: string) => {
      const value = chat.attributes[key];
      return typeof value === "string" ? JSON.parse(value) : value;
    };
    assert.deepEqual(
      json("gen_ai.input.messages"),
      level === "bodies"
        ? [{ role: "user", parts: [{ type: "text", content: "What was the revenue growth?" }] }]
        : undefined,
    );
    assert.deepEqual(
      json("gen_ai.output.messages"),
      level === "bodies"
        ? [{
          role: "assistant",
          parts: [{ type: "text", content: "Revenue grew 12% in Q3." }],
          finish_reason: "stop",
        }]
        : undefined,
    );
    const root = received.find((s) => s.parentSpanId === null)!;
    assert.equal(root.name, "invoke_agent q");
    await Deno.remove(runs, { recursive: true });
  });
}

Deno.test("a variable that names a host the policy does not list: nothing is sent, telemetry_blocked", async () => {
  await using receiver = await OtlpReceiver.start();
  // localhost reaches the receiver, but the policy names 127.0.0.1 only
  const url = `http://localhost:${receiver.port}/v1/traces`;
  const { outcome, events, runs } = await run({
    policy: collector(receiver, "bodies"),
    environ: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: url },
    guardNet: false,
  });
  assert.equal(outcome.status, "completed");
  assert.equal(receiver.requests.length, 0);
  const blocked = of(events, "telemetry_blocked");
  assert.deepEqual(blocked.map((e) => e.data), [{
    path: "destination",
    library: null,
    detail: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ${url}`,
  }]);
  assert.equal(events[0]!.type, "run_created");
  assert.equal((events[0]!.data.telemetry_destinations as { destination: null }[])[0]!.destination, null);
  await Deno.remove(runs, { recursive: true });
});

Deno.test("a process that may reach an unlisted destination host refuses the run, naming the host", async () => {
  await using receiver = await OtlpReceiver.start();
  const runs = await Deno.makeTempDir();
  await assert.rejects(
    runFile(answerRun(), {
      runs,
      policy: collector(receiver, "bodies"),
      environ: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://localhost:${receiver.port}` },
    }),
    (error: unknown) => {
      assert.ok(error instanceof TelemetryRefused);
      assert.equal(error.host, `localhost:${receiver.port}`);
      assert.match(error.message, /names localhost:\d+, which the telemetry policy's hosts do not list/);
      assert.ok(!error.message.includes("\n"));
      return true;
    },
  );
  assert.deepEqual([...Deno.readDirSync(runs)], []);
  assert.equal(receiver.requests.length, 0);
  await Deno.remove(runs, { recursive: true });
});

Deno.test("an endpoint that two URL parsers read as two places matches nothing: nothing sent, blocked", async () => {
  await using receiver = await OtlpReceiver.start();
  const p = receiver.port;
  const urls = [
    `http://127.0.0.1:${p}/v1/traces#@evil.example`,
    `http://127.0.0.1:${p}/v1/./traces`,
    `http://127.0.0.1:${p}//v1/traces`,
    `http://u@127.0.0.1:${p}/v1/traces`,
    `http://127.0.0.1:${p}/v1/traces?host=evil.example`,
    `http://127.0.0.1:0${p}/v1/traces`,
    `http://127.1:${p}/v1/traces`,
    `http://0x7f.0.0.1:${p}/v1/traces`,
    `http://127.0.0.1:${p}\\@evil.example/v1/traces`,
  ];
  for (const url of urls) {
    const { outcome, events, runs } = await run({
      policy: collector(receiver, "bodies"),
      environ: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: url },
    });
    assert.equal(outcome.status, "completed", url);
    const blocked = of(events, "telemetry_blocked");
    assert.equal(blocked.length, 1, url);
    assert.equal(blocked[0]!.data.path, "destination", url);
    await Deno.remove(runs, { recursive: true });
  }
  assert.equal(receiver.requests.length, 0);
});

Deno.test("run_created records the telemetry and proxy variables that are set, by name, and no secret", async () => {
  const { events, runs } = await run({
    environ: {
      OTEL_EXPORTER_OTLP_ENDPOINT: "https://user:pw@otel.example.com",
      OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer sk-secret",
      OTEL_SERVICE_NAME: "x",
      MLFLOW_TRACKING_URI: "http://mlflow.example.com:5000",
      HTTPS_PROXY: "http://proxy.example:3128",
      no_proxy: "localhost",
      HOME: "/home/ada",
    },
    guardNet: false,
  });
  const data = events[0]!.data;
  assert.deepEqual(data.telemetry_variables, [
    "MLFLOW_TRACKING_URI",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_SERVICE_NAME",
  ]);
  assert.deepEqual(data.proxy_variables, ["HTTPS_PROXY", "no_proxy"]);
  assert.equal(data.policy_digest, TelemetryPolicy.denyAll().digest());
  assert.deepEqual(data.telemetry_destinations, [
    {
      variable: "OTEL_EXPORTER_OTLP_ENDPOINT",
      kind: "otlp",
      url: "https://otel.example.com/v1/traces",
      destination: null,
      receives: null,
    },
    {
      variable: "MLFLOW_TRACKING_URI",
      kind: "mlflow",
      url: "http://mlflow.example.com:5000/",
      destination: null,
      receives: null,
    },
  ]);
  const text = JSON.stringify(events);
  assert.ok(!text.includes("sk-secret") && !text.includes("pw@"));
  assert.deepEqual(of(events, "telemetry_blocked").map((e) => e.data.path), ["destination", "destination"]);
  await Deno.remove(runs, { recursive: true });
});

Deno.test("OTEL_DENO set: the run writes telemetry_problem, since Deno's own export cannot be turned off", async () => {
  for (const value of ["true", "1"]) {
    const { outcome, events, runs } = await run({ environ: { OTEL_DENO: value } });
    assert.equal(outcome.status, "completed");
    const problems = of(events, "telemetry_problem");
    assert.equal(problems.length, 1);
    assert.equal(problems[0]!.data.library, "deno");
    assert.match(problems[0]!.data.problem as string, /^OTEL_DENO is set; .*start provr without OTEL_DENO$/);
    await Deno.remove(runs, { recursive: true });
  }
});

Deno.test("a telemetry section that would widen the policy refuses the run before its folder exists", async () => {
  const runs = await Deno.makeTempDir();
  const policy = TelemetryPolicy.fromDict({ version: 1, hosts: ["otel.example.com"] });
  await assert.rejects(
    runFile(answerRun("telemetry:\n  hosts: [otel.example.com, evil.example]"), {
      runs,
      policy,
      environ: {},
    }),
    (error: unknown) => {
      assert.ok(error instanceof TelemetryPolicyError);
      assert.match(error.message, /evil\.example/);
      assert.ok(!error.message.includes("\n"));
      return true;
    },
  );
  assert.deepEqual([...Deno.readDirSync(runs)], []);
  await Deno.remove(runs, { recursive: true });
});

Deno.test("a telemetry section narrows the policy: a lower level reaches the destination", async () => {
  await using receiver = await OtlpReceiver.start();
  const policy = collector(receiver, "bodies");
  const section = "telemetry:\n  destinations:\n    collector: { receives: names }";
  const { events, runs } = await run({
    policy,
    telemetry: section,
    environ: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
  });
  const narrowed = policy.narrow({ destinations: { collector: { receives: "names" } } });
  assert.equal(events[0]!.data.policy_digest, narrowed.digest());
  assert.ok(receiver.spans.length > 0);
  for (const s of receiver.spans) {
    assert.ok(!Object.keys(s.attributes).some((k) => k.startsWith("gen_ai.usage.")), s.name);
  }
  await Deno.remove(runs, { recursive: true });
});

Deno.test("an approved library's span becomes span_recorded, its body in a payload; it feeds the destination", async () => {
  await using receiver = await OtlpReceiver.start();
  const policy = collector(receiver, "usage", {
    ai: { versions: ">=7.0.0 <8.0.0", telemetry: ["collector"] },
  });
  const backend = new LibraryBackend([{
    scope: "ai",
    name: "ai.generateText",
    attributes: {
      "gen_ai.request.model": "answer-1",
      "gen_ai.usage.input_tokens": 14,
      "ai.prompt": "the prompt",
    },
  }]);
  const { store, outcome, events, spans, runs } = await run({
    policy,
    backend,
    environ: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
  });
  assert.equal(outcome.status, "completed");
  const recorded = of(events, "span_recorded");
  assert.equal(recorded.length, 1);
  const e = recorded[0]!;
  assert.equal(e.confidence, "parsed");
  assert.equal(e.data.name, "ai.generateText");
  assert.equal(e.data.scope, "ai");
  assert.equal(e.data.library, "ai");
  assert.deepEqual(e.data.attributes, {
    "gen_ai.request.model": "answer-1",
    "gen_ai.usage.input_tokens": 14,
    "provrun.run_id": outcome.runId,
  });
  const body = JSON.parse(
    new TextDecoder().decode(await (await store.readRun(outcome.runId)).payload(e.payload!)),
  );
  assert.deepEqual(body.attributes, { "ai.prompt": "the prompt" });
  assert.equal(body.events[0].attributes.text, "the whole prompt");
  // the span is in the store's index without its body, linked by its IDs
  const stored = spans.find((s) => s.span_id === e.span_id)!;
  assert.equal(stored.trace_id, e.trace_id);
  assert.equal(stored.attributes["ai.prompt"], undefined);
  // the destination gets it at its level: no prompt, no events
  const sent = receiver.spans.find((s) => s.spanId === e.span_id)!;
  assert.equal(sent.scope.name, "ai");
  // Below bodies, the model a library names goes as a hash unless the run file declared it (harden).
  assert.deepEqual(sent.attributes, {
    ...e.data.attributes,
    "gen_ai.request.model": hashedName("model", "answer-1"),
  });
  assert.deepEqual(sent.events, []);
  assert.ok(of(events, "run_completed")[0]!.seq > e.seq);
  await Deno.remove(runs, { recursive: true });
});

Deno.test("an unapproved library's span is not recorded, stored or sent: telemetry_blocked path library, once", async () => {
  await using receiver = await OtlpReceiver.start();
  const policy = collector(receiver, "bodies", { ai: { versions: ">=7.0.0 <8.0.0", telemetry: [] } });
  const backend = new LibraryBackend([
    { scope: "@ai-sdk/openai", name: "openai.chat", attributes: { "ai.prompt": "p" } },
    { scope: "@ai-sdk/openai", name: "openai.chat", attributes: { "ai.prompt": "p" } },
    { scope: "ai/evil", name: "x", attributes: {} },
    { scope: "ai", name: "approved, feeds nothing", attributes: {} },
  ]);
  const { events, spans, runs } = await run({
    policy,
    backend,
    environ: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
  });
  assert.deepEqual(of(events, "telemetry_blocked").map((e) => e.data), [
    {
      path: "library",
      library: "@ai-sdk/openai",
      detail: 'spans of the scope "@ai-sdk/openai": the policy does not approve this library',
    },
    {
      path: "library",
      library: null,
      detail: 'spans of the scope "ai/evil": no installed package has this name',
    },
  ]);
  assert.deepEqual(of(events, "span_recorded").map((e) => e.data.scope), ["ai"]);
  assert.deepEqual(spans.filter((s) => s.scope.name !== "provrun").map((s) => s.scope.name), ["ai"]);
  assert.deepEqual(receiver.spans.filter((s) => s.scope.name !== "provrun"), []);
  await Deno.remove(runs, { recursive: true });
});

Deno.test("a library span's name or status message that holds text goes in the payload, not the event or index", async () => {
  await using receiver = await OtlpReceiver.start();
  const policy = collector(receiver, "usage", {
    ai: { versions: ">=7.0.0 <8.0.0", telemetry: ["collector"] },
  });
  const backend = new LibraryBackend([
    {
      scope: "ai",
      name: "chat the secret prompt",
      attributes: { "gen_ai.operation.name": "chat" },
      error: "cannot answer: the secret prompt",
    },
    { scope: "ai", name: "ai.generateText", attributes: {}, error: "timeout" },
  ]);
  const { store, outcome, events, spans, runs } = await run({
    policy,
    backend,
    environ: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
  });
  const [texty, plain] = of(events, "span_recorded");
  assert.ok(!JSON.stringify(events).includes("secret prompt"));
  assert.ok(!JSON.stringify(spans).includes("secret prompt"));
  assert.ok(!JSON.stringify(receiver.spans).includes("secret prompt"));
  assert.equal(texty!.data.name, "chat");
  assert.deepEqual(texty!.data.status, { code: 2, message: null });
  const body = JSON.parse(
    new TextDecoder().decode(await (await store.readRun(outcome.runId)).payload(texty!.payload!)),
  );
  assert.equal(body.name, "chat the secret prompt");
  assert.equal(body.status_message, "cannot answer: the secret prompt");
  assert.equal(spans.find((s) => s.span_id === texty!.span_id)!.name, "chat");
  // a plain name and a plain message stay
  assert.equal(plain!.data.name, "ai.generateText");
  assert.deepEqual(plain!.data.status, { code: 2, message: "timeout" });
  await Deno.remove(runs, { recursive: true });
});

Deno.test("a library that names its tracer provrun is not taken for provrun: its spans are blocked, not sent", async () => {
  await using receiver = await OtlpReceiver.start();
  const policy = collector(receiver, "bodies");
  const backend = new LibraryBackend([
    { scope: "provrun", name: "chat the secret prompt", attributes: { "ai.prompt": "the secret prompt" } },
  ]);
  const { events, spans, runs } = await run({
    policy,
    backend,
    environ: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
  });
  assert.ok(receiver.spans.length > 0);
  assert.ok(!JSON.stringify(receiver.spans).includes("secret prompt"));
  assert.ok(!JSON.stringify(spans).includes("secret prompt"));
  assert.deepEqual(of(events, "telemetry_blocked").map((e) => e.data), [{
    path: "library",
    library: null,
    detail: 'spans of the scope "provrun": no installed package has this name',
  }]);
  // provrun's own spans still reach both
  assert.ok(receiver.spans.some((s) => s.name === "invoke_agent q"));
  assert.ok(spans.some((s) => s.name === "invoke_agent q"));
  await Deno.remove(runs, { recursive: true });
});

Deno.test("a sqlite store keeps the run's spans in <run folder>/spans.jsonl, outside the evidence", async () => {
  const root = await Deno.makeTempDir();
  const store = new SqliteStore(join(root, "evidence.db"), { runs: join(root, "runs"), create: true });
  try {
    const { outcome, spans, events } = await run({ store });
    assert.equal(outcome.status, "completed");
    assert.equal(spans.find((s) => s.parent_span_id === null)?.name, "invoke_agent q");
    assert.equal(spans.length, new Set(events.map((e) => e.span_id)).size);
  } finally {
    await store.close();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("the traces endpoint wins: an approved general endpoint behind an unapproved traces endpoint gets nothing", async () => {
  await using receiver = await OtlpReceiver.start();
  const unlisted = `http://localhost:${receiver.port}/v1/traces`;
  const { outcome, events, runs } = await run({
    policy: collector(receiver, "bodies"),
    environ: {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: unlisted,
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiver.port}`,
    },
    guardNet: false,
  });
  assert.equal(outcome.status, "completed");
  assert.equal(receiver.requests.length, 0);
  const blocked = of(events, "telemetry_blocked").map((e) => e.data.detail);
  assert.deepEqual(blocked, [`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ${unlisted}`]);
  const named = events[0]!.data.telemetry_destinations as { variable: string; destination: string | null }[];
  assert.deepEqual(named.map((d) => [d.variable, d.destination]), [
    ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", null],
    ["OTEL_EXPORTER_OTLP_ENDPOINT", "collector"],
  ]);
  await Deno.remove(runs, { recursive: true });
});

Deno.test("with traces turned off, an approved general endpoint receives nothing", async () => {
  await using receiver = await OtlpReceiver.start();
  const { outcome, runs } = await run({
    policy: collector(receiver, "bodies"),
    environ: {
      OTEL_TRACES_EXPORTER: "none",
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiver.port}`,
    },
    guardNet: false,
  });
  assert.equal(outcome.status, "completed");
  assert.equal(receiver.requests.length, 0);
  await Deno.remove(runs, { recursive: true });
});

for (const how of ["an HTTP 500", "a refused connection"] as const) {
  Deno.test(`an OTLP export that the destination refuses (${how}) writes telemetry_problem; the run completes and verifies`, async () => {
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      () => new Response("no", { status: 500 }),
    );
    const url = `http://127.0.0.1:${server.addr.port}`;
    if (how === "a refused connection") await server.shutdown();
    try {
      const policy = TelemetryPolicy.fromDict({
        version: 1,
        libraries: {},
        destinations: { collector: { kind: "otlp", receives: "names", endpoint: `${url}/v1/traces` } },
        hosts: ["127.0.0.1"],
      });
      const { outcome, events } = await run({ policy, environ: { OTEL_EXPORTER_OTLP_ENDPOINT: url } });
      assert.equal(outcome.status, "completed");
      const problems = of(events, "telemetry_problem").map((e) =>
        String(e.data.problem ?? JSON.stringify(e.data))
      );
      assert.equal(problems.length, 1, problems.join("\n"));
      assert.match(
        problems[0]!,
        /the OTLP destination collector \(http:\/\/127\.0\.0\.1:\d+\/v1\/traces\) refused spans/,
      );
      assert.equal(events.at(-1)!.type, "run_completed");
    } finally {
      if (how === "an HTTP 500") await server.shutdown();
    }
  });
}

/**
 * The spans of a claude-code and a codex run (the real programs, over a fake model provider behind provr's model
 * gateway) against the GenAI conventions' table (_genai_table.ts, v1.41.1), as a destination at `bodies` receives
 * them. provr's spans are the GenAI record of a program run: the gateway's `chat` span of each model call, the
 * hooks' `execute_tool` span of each tool call, the program's `invoke_agent` (CLIENT) under the run's root. A
 * program sets its own request settings, so a setting counts where the program's request (the evidence's copy)
 * held it. The program's own spans stay in the evidence as they arrived, and no destination receives them: a
 * model call is one `chat` span, never two.
 */
import assert from "node:assert/strict";
import { OtlpReceiver } from "../../../lib/provevi/receiver/otlp_receiver.ts";
import type { ReceivedSpan } from "../../../lib/provevi/receiver/otlp_wire.ts";
import { CONTENT_KEYS } from "../../../lib/provevi/telemetry/genai_conventions.ts";
import type { EvidenceEvent, Json } from "../../../lib/provevi/evidence/event.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";
import { FAKE_ANSWER, startFakeAgentProvider } from "../../../fixtures/providers/fake_agent_provider.ts";
import { gitCatalog } from "../_catalog.ts";
import { eventsOf, needed, program, receivedSpans } from "../backends/_programs.ts";
import { otlpPolicy } from "./_genai_run.ts";
import { coverage, GENAI_OPERATIONS, type Requested, TABLE } from "./_genai_table.ts";
import { peerTest } from "../../_peers.ts";

const CSV = "quarter,revenue\nQ2,43.0\nQ3,48.2\n";

/** What differs between the two programs' runs. */
const PROGRAMS = {
  "claude-code": {
    variable: "PROVRUN_TEST_CLAUDE",
    model: "anthropic:claude-sonnet-4-5",
    key: "FAKE_ANTHROPIC_KEY",
    extra: "",
    script: [
      { name: "Read", input: { file_path: "{cwd}/input/revenue.csv" } },
      { name: "Write", input: { file_path: "{cwd}/output/answer.md", content: FAKE_ANSWER + "\n" } },
    ],
    provider: "anthropic",
    requested: "claude-sonnet-4-5",
  },
  codex: {
    variable: "PROVRUN_TEST_CODEX",
    model: "openai:gpt-fake",
    key: "FAKE_OPENAI_KEY",
    extra: "  allow_unsandboxed: [Bash]\n",
    script: [
      { name: "exec_command", input: { cmd: "cat input/revenue.csv" } },
      { name: "exec_command", input: { cmd: `echo '${FAKE_ANSWER}' > output/answer.md` } },
    ],
    provider: "openai",
    requested: "gpt-fake",
  },
} as const;

/** What a program's run gives: its outcome, events, the program's own spans, and each model call's request. */
interface ProgramRun {
  outcome: Awaited<ReturnType<typeof runFile>>;
  events: EvidenceEvent[];
  received: ReceivedSpan[];
  /** The request body of each model call the gateway recorded, by its span's ID, in order. */
  requests: Map<string, Json>;
}

/** Runs `name` once, its spans sent to `receiver` at `level` (`bodies` by default). */
async function programRun(
  name: keyof typeof PROGRAMS,
  receiver: OtlpReceiver,
  level: "usage" | "bodies" = "bodies",
): Promise<ProgramRun> {
  const p = PROGRAMS[name];
  const path = needed(program(name).path, p.variable);
  await using provider = startFakeAgentProvider([...p.script]);
  await using t = await gitCatalog({ "finance/revenue.csv": CSV });
  const file = RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada, mode: strict, session_id: conv-7 }
agent:
  name: analyst
  backend: ${name}
  program: ${JSON.stringify(path)}
  model: ${p.model}
  provider: { base_url: ${
    JSON.stringify(name === "codex" ? provider.openaiBaseUrl : provider.url)
  }, api_key_env: ${p.key} }
${p.extra}  limits: { seconds: 120 }
prompt: What was the revenue growth in Q3? Write it to output/answer.md.
inputs:
  - { uri: "data://acme/demo/dev/finance/revenue.csv", as: revenue.csv }
outputs: [answer.md]
`);
  const outcome = await runFile(file, {
    catalog: t.catalog,
    runs: t.runs,
    policy: otlpPolicy(receiver.tracesUrl, level),
    env: (n) => (n === p.key ? "sk-fake" : Deno.env.get(n)),
    environ: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.tracesUrl },
  });
  const events = await eventsOf(t.runs, outcome.runId);
  const record = await new FileStore({ runs: t.runs }).readRun(outcome.runId);
  const requests = new Map<string, Json>();
  for (const e of events) {
    if (e.type !== "model_called" || !e.span_id || !e.payload) continue;
    requests.set(e.span_id, JSON.parse(new TextDecoder().decode(await record.payload(e.payload))));
  }
  return { outcome, events, received: await receivedSpans(t.runs, outcome.runId), requests };
}

/** The fields of each provider API that hold a request setting (Anthropic, OpenAI Chat, OpenAI Responses). */
const FIELDS: Record<string, string[]> = {
  "gen_ai.request.max_tokens": ["max_tokens", "max_completion_tokens", "max_output_tokens"],
  "gen_ai.request.temperature": ["temperature"],
  "gen_ai.request.top_p": ["top_p"],
  "gen_ai.request.top_k": ["top_k"],
  "gen_ai.request.seed": ["seed"],
  "gen_ai.request.frequency_penalty": ["frequency_penalty"],
  "gen_ai.request.presence_penalty": ["presence_penalty"],
  "gen_ai.request.stop_sequences": ["stop_sequences", "stop"],
};

/**
 * A setting applies to a `chat` span where its request held it, and to an `invoke_agent` span where the run's
 * first request did (the conventions' agent span takes its settings from its first model call).
 */
function requestedBy(requests: Map<string, Json>): Requested {
  const first = [...requests.values()][0];
  return (span, key) => {
    const body = span.attributes["gen_ai.operation.name"] === "chat" ? requests.get(span.spanId) : first;
    const o = (body ?? {}) as { [key: string]: Json };
    return (FIELDS[key] ?? []).some((f) => o[f] !== undefined && o[f] !== null);
  };
}

/** Each span with a GenAI operation's name has its required attributes; no other span has an operation. */
function assertRequired(spans: ReceivedSpan[]): void {
  for (const span of spans) {
    const op = span.name.split(" ")[0]!;
    if (!GENAI_OPERATIONS.includes(op)) {
      assert.equal(span.attributes["gen_ai.operation.name"], undefined, span.name);
      continue;
    }
    assert.equal(span.attributes["gen_ai.operation.name"], op, span.name);
    const type = TABLE.spans[op];
    assert.ok(type, `${span.name}: a GenAI operation the table does not hold`);
    for (const key of type.required) assert.notEqual(span.attributes[key], undefined, `${span.name} ${key}`);
  }
}

for (const name of ["claude-code", "codex"] as const) {
  peerTest(name, {
    name: `a ${name} run's spans meet the GenAI table: chat and execute_tool 95%, invoke_agent 90%, ` +
      `each GenAI-named span its required attributes`,
    sanitizeResources: false,
    sanitizeOps: false,
    fn: async () => {
      await using receiver = await OtlpReceiver.start();
      const run = await programRun(name, receiver);
      assert.equal(run.outcome.status, "completed", JSON.stringify(run.outcome.error));
      const spans = receiver.spans;
      assertRequired(spans);
      const table = coverage(spans, requestedBy(run.requests));
      const lines = Object.entries(table).map(([op, row]) =>
        `${name} ${op.padEnd(13)} ${String(row.spans).padStart(3)} spans  ${
          (100 * row.present / row.applies).toFixed(1).padStart(5)
        }% of ${row.applies} (missing: ${[...row.missing].join(", ") || "none"})`
      );
      console.log(
        `GenAI semantic conventions ${TABLE.version}, a destination at bodies:\n${lines.join("\n")}`,
      );
      const at = (op: string) => table[op]!.present / table[op]!.applies;
      // one chat span per model call the gateway recorded, a tool call of each step, the run and the program
      assert.equal(table.chat!.spans, run.requests.size);
      assert.ok(table.chat!.spans >= 3 && table.execute_tool!.spans >= 2, lines.join("\n"));
      assert.equal(table.invoke_agent!.spans, 2);
      assert.ok(at("chat") >= 0.95, lines[0]);
      assert.ok(at("execute_tool") >= 0.95, lines[1]);
      assert.ok(at("invoke_agent") >= 0.90, lines[2]);
      for (const span of spans) {
        const type = TABLE.spans[String(span.attributes["gen_ai.operation.name"])];
        if (type && span.name !== `invoke_agent ${name}`) assert.equal(span.kind, type.kind, span.name);
      }
      // the opt-in content, on every span of its type, in the conventions' shapes
      for (const [op, type] of Object.entries(TABLE.spans)) {
        for (const span of spans.filter((s) => s.attributes["gen_ai.operation.name"] === op)) {
          for (const key of type.optIn) {
            assert.equal(typeof span.attributes[key], "string", `${span.name} ${key}`);
          }
        }
      }
      const chats = spans.filter((s) => s.attributes["gen_ai.operation.name"] === "chat");
      const said = JSON.parse(chats.at(-1)!.attributes["gen_ai.output.messages"] as string);
      assert.equal(said[0].role, "assistant");
      assert.match(JSON.stringify(said[0].parts), /Revenue grew 12% in Q3/);
      const asked = JSON.parse(chats[0]!.attributes["gen_ai.input.messages"] as string);
      assert.match(JSON.stringify(asked), /revenue growth in Q3/);
      const second = JSON.parse(chats[1]!.attributes["gen_ai.input.messages"] as string);
      assert.ok(
        second.some((m: { role: string }) => m.role === "tool"),
        JSON.stringify(second).slice(0, 2000),
      );
      // the gateway names the server behind it, never its own address
      const upstream = spans.find((s) => s.attributes["gen_ai.operation.name"] === "chat")!;
      assert.equal(upstream.attributes["gen_ai.provider.name"], PROGRAMS[name].provider);
      // the run's token totals are its model calls'
      const root = spans.find((s) => s.parentSpanId === null)!;
      const called = run.events.filter((e) => e.type === "model_called");
      const total = (key: string) => called.reduce((n, e) => n + (e.data[key] as number), 0);
      assert.equal(root.attributes["gen_ai.usage.input_tokens"], total("input_tokens"));
      assert.equal(root.attributes["gen_ai.usage.output_tokens"], total("output_tokens"));
      // the program is an agent in another process: a CLIENT invoke_agent under the run's root
      const agent = spans.find((s) => s.name === `invoke_agent ${name}`)!;
      assert.equal(root.name, "invoke_agent analyst");
      assert.deepEqual([root.kind, agent.kind, agent.parentSpanId], [1, 3, root.spanId]);
      for (const span of [root, agent]) {
        assert.equal(span.attributes["gen_ai.provider.name"], PROGRAMS[name].provider, span.name);
        assert.equal(span.attributes["gen_ai.request.model"], PROGRAMS[name].requested, span.name);
        assert.equal(span.attributes["gen_ai.conversation.id"], "conv-7", span.name);
        assert.equal(span.attributes["gen_ai.agent.id"], "acme/demo/dev/analyst", span.name);
      }
      assert.equal(agent.attributes["gen_ai.agent.name"], name);
    },
  });

  peerTest(name, {
    name:
      `a ${name} run keeps the program's own spans as they arrived, and sends a destination none of them, ` +
      `nor below bodies any content`,
    sanitizeResources: false,
    sanitizeOps: false,
    fn: async () => {
      await using receiver = await OtlpReceiver.start();
      const run = await programRun(name, receiver, "usage");
      assert.equal(run.outcome.status, "completed", JSON.stringify(run.outcome.error));
      assert.ok(run.received.length > 0, "the program sent its spans to the run");
      const chats = receiver.spans.filter((s) => s.attributes["gen_ai.operation.name"] === "chat");
      assert.equal(chats.length, run.requests.size);
      for (const span of receiver.spans) {
        for (const key of Object.keys(span.attributes)) {
          assert.ok(!CONTENT_KEYS.has(key) && !key.endsWith("_ref"), `${span.name} ${key}`);
        }
      }
      const own = new Set(run.received.map((s) => s.spanId));
      const sent = receiver.spans;
      assert.deepEqual(sent.filter((s) => own.has(s.spanId)).map((s) => s.name), []);
      for (const span of sent) assert.equal(typeof span.attributes["provrun.run_id"], "string", span.name);
      if (name === "claude-code") {
        // Claude Code names its model calls chat: kept in the evidence so, and never a second chat span out
        const llm = run.received.filter((s) => s.name === "claude_code.llm_request");
        assert.ok(llm.length > 0);
        for (const s of llm) assert.equal(s.attributes["gen_ai.operation.name"], "chat");
      }
    },
  });
}

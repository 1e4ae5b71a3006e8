/**
 * The spans of a claude-code and a codex run (the real programs, over a fake model provider) against the GenAI
 * conventions' table (_genai_table.ts, v1.41.1), as a destination at `bodies` receives them: each span with a
 * GenAI operation's name has that operation's required attributes, and the program's `invoke_agent` is a client
 * span with the well-known provider. The programs' own model calls reach provr only through a model gateway;
 * without one a program run has no `chat` span, and its root no token totals (the coverage printed says so).
 */
import assert from "node:assert/strict";
import { OtlpReceiver, type ReceivedSpan } from "../../../lib/provevi/receiver/mod.ts";
import { RunFile, runFile } from "../../../lib/provrun/mod.ts";
import { FAKE_ANSWER, startFakeAgentProvider } from "../../../fixtures/providers/fake_agent_provider.ts";
import { gitCatalog } from "../_catalog.ts";
import { needed, program } from "../backends/_programs.ts";
import { otlpPolicy } from "./_genai_run.ts";
import { coverage, GENAI_OPERATIONS, TABLE } from "./_genai_table.ts";
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

/** Runs `name` once at `bodies`, its spans sent to `receiver`. */
async function programRun(name: keyof typeof PROGRAMS, receiver: OtlpReceiver) {
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
  return await runFile(file, {
    catalog: t.catalog,
    runs: t.runs,
    policy: otlpPolicy(receiver.tracesUrl, "bodies"),
    env: (n) => (n === p.key ? "sk-fake" : Deno.env.get(n)),
    environ: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.tracesUrl },
  });
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
    name:
      `a ${name} run's GenAI spans have their operations' required attributes; the program is a client agent`,
    sanitizeResources: false,
    sanitizeOps: false,
    fn: async () => {
      await using receiver = await OtlpReceiver.start();
      const outcome = await programRun(name, receiver);
      assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
      const spans = receiver.spans;
      assertRequired(spans);
      const root = spans.find((s) => s.parentSpanId === null)!;
      const agent = spans.find((s) => s.name === `invoke_agent ${name}`)!;
      assert.equal(root.name, "invoke_agent analyst");
      assert.deepEqual([root.kind, agent.kind], [1, 3]);
      assert.equal(agent.parentSpanId !== null, true);
      for (const span of [root, agent]) {
        assert.equal(span.attributes["gen_ai.provider.name"], PROGRAMS[name].provider, span.name);
        assert.equal(span.attributes["gen_ai.request.model"], PROGRAMS[name].requested, span.name);
        assert.equal(span.attributes["gen_ai.conversation.id"], "conv-7", span.name);
      }
      assert.equal(agent.attributes["gen_ai.agent.name"], name);
      const row = coverage(spans).invoke_agent!;
      console.log(
        `${name}: invoke_agent ${row.spans} spans, ${(100 * row.present / row.applies).toFixed(1)}% of ` +
          `${row.applies} (missing: ${[...row.missing].join(", ") || "none"})`,
      );
    },
  });
}

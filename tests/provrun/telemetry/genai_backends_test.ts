/**
 * A run's spans in two real GenAI backends, read back through each one's own client: a real MLflow tracking
 * server (its OTLP endpoint; `mlflow.get_trace`) and a real Arize Phoenix (its OTLP endpoint;
 * `phoenix.client.Client().spans.get_spans_dataframe`). At `bodies` each shows the inputs and outputs of every
 * model call and tool call, the span types, the well-known provider and model, and the run's token totals; at
 * `usage` and `names` no content of the run arrives at either.
 */
import assert from "node:assert/strict";
import { mlflowPython, needMlflow, NO_MLFLOW } from "../../provevi/mlflow/_mlflow.ts";
import { CSV, type GenaiRun, genaiRun } from "./_genai_run.ts";
import { TOOLS_ANSWER } from "../../../fixtures/providers/fake_openai_tools_server.ts";
import { skipWithout } from "../../_peers.ts";
import { phoenixSpans, type Shown } from "./_phoenix.ts";

const PHOENIX_URL = Deno.env.get("PROVRUN_TEST_PHOENIX_URL");

const NO_PHOENIX = skipWithout("phoenix");

/** Texts of the run that are content: none may reach a destination below bodies. */
const CONTENT = ["What was the revenue growth", TOOLS_ANSWER, CSV.split("\n")[2]!, "Answer from the files"];

/** A slow server must not cut the export: MLflow writes each trace before it answers. */
const TIMEOUT = { OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: "120000" };

const traceOf = (run: GenaiRun) => run.events.find((e) => e.trace_id)!.trace_id!;

async function mlflowSpans(uri: string, traceId: string): Promise<Shown[]> {
  return await mlflowPython(
    `
import json, mlflow
trace = mlflow.get_trace("tr-${traceId}")
print(json.dumps([{"name": s.name, "type": s.span_type, "attributes": {k: v for k, v in s.attributes.items()}}
                  for s in trace.data.spans], default=str))
`,
    uri,
  ) as Shown[];
}

async function mlflowExperiment(uri: string): Promise<string> {
  const reply = await fetch(`${uri}/api/2.0/mlflow/experiments/create`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: `genai-spans-${crypto.randomUUID()}` }),
  });
  const { experiment_id } = await reply.json();
  return experiment_id;
}

/** The spans a backend shows of one operation. */
const ofOp = (spans: Shown[], op: string) => spans.filter((s) => s.name.startsWith(`${op} `));

/** Nothing of the run's content in any attribute a backend shows. */
function assertNoContent(spans: Shown[], where: string): void {
  const text = JSON.stringify(spans);
  for (const c of CONTENT) assert.ok(!text.includes(c), `${where}: ${JSON.stringify(c)} arrived`);
}

Deno.test({
  name:
    "MLflow shows a run's spans at bodies: inputs and outputs, span types, provider, model and token totals",
  ignore: NO_MLFLOW,
  fn: async () => {
    const { uri } = needMlflow();
    const experiment = await mlflowExperiment(uri);
    const run = await genaiRun({
      url: `${uri}/v1/traces`,
      level: "bodies",
      stream: true,
      environ: { OTEL_EXPORTER_OTLP_TRACES_HEADERS: `x-mlflow-experiment-id=${experiment}`, ...TIMEOUT },
    });
    assert.equal(run.outcome.status, "completed");
    assert.deepEqual(run.events.filter((e) => e.type === "telemetry_problem").map((e) => e.data), []);
    const spans = await mlflowSpans(uri, traceOf(run));
    const chats = ofOp(spans, "chat"),
      tools = ofOp(spans, "execute_tool"),
      agents = ofOp(spans, "invoke_agent");
    assert.deepEqual([chats.length, tools.length, agents.length], [3, 2, 1]);
    assert.ok(chats.every((s) => s.type === "CHAT_MODEL"));
    assert.ok(tools.every((s) => s.type === "TOOL"));
    assert.equal(agents[0]!.type, "AGENT");
    for (const s of [...chats, ...tools, ...agents]) {
      assert.ok(s.attributes["mlflow.spanInputs"], `${s.name}: no inputs`);
      assert.ok(s.attributes["mlflow.spanOutputs"], `${s.name}: no outputs`);
    }
    assert.match(JSON.stringify(tools[0]!.attributes["mlflow.spanOutputs"]), /Q3,48\.2/);
    assert.match(JSON.stringify(agents[0]!.attributes["mlflow.spanOutputs"]), /Revenue grew 12% in Q3\./);
    for (const s of [...chats, ...agents]) {
      assert.equal(s.attributes["mlflow.llm.provider"], "openai", s.name);
      assert.match(String(s.attributes["mlflow.llm.model"]), /^gpt-4o-mini/, s.name);
    }
    const usage = agents[0]!.attributes["mlflow.chat.tokenUsage"] as Record<string, number>;
    assert.equal(usage.input_tokens, run.tokens.input);
    assert.equal(usage.output_tokens, run.tokens.output);
  },
});

Deno.test({
  name:
    "Phoenix shows a run's spans at bodies: inputs and outputs, span kinds, provider, model and token totals",
  ignore: NO_PHOENIX,
  fn: async () => {
    const run = await genaiRun({ url: `${PHOENIX_URL}/v1/traces`, level: "bodies", stream: false });
    assert.equal(run.outcome.status, "completed");
    assert.deepEqual(run.events.filter((e) => e.type === "telemetry_problem").map((e) => e.data), []);
    const spans = await phoenixSpans(traceOf(run));
    const chats = ofOp(spans, "chat"),
      tools = ofOp(spans, "execute_tool"),
      agents = ofOp(spans, "invoke_agent");
    assert.deepEqual([chats.length, tools.length, agents.length], [3, 2, 1]);
    assert.ok(chats.every((s) => s.type === "LLM"));
    assert.ok(tools.every((s) => s.type === "TOOL"));
    assert.equal(agents[0]!.type, "AGENT");
    for (const s of [...chats, ...agents]) {
      assert.ok(
        JSON.stringify(s.attributes["llm.input_messages"]).includes("What was the revenue growth"),
        s.name,
      );
      assert.ok(s.attributes["llm.output_messages"], `${s.name}: no output messages`);
      assert.equal(s.attributes["llm.provider"], "openai", s.name);
      assert.equal(s.attributes["llm.model_name"], "gpt-4o-mini", s.name);
    }
    for (const s of tools) {
      assert.ok(s.attributes["tool.parameters"], `${s.name}: no arguments`);
      assert.ok(s.attributes["output.value"], `${s.name}: no result`);
    }
    assert.match(
      String(JSON.stringify(agents[0]!.attributes["llm.output_messages"])),
      /Revenue grew 12% in Q3\./,
    );
    assert.equal(Number(agents[0]!.attributes["llm.token_count.prompt"]), run.tokens.input);
    assert.equal(Number(agents[0]!.attributes["llm.token_count.completion"]), run.tokens.output);
    const sum = chats.reduce((n, s) => n + Number(s.attributes["llm.token_count.prompt"]), 0);
    assert.equal(sum, run.tokens.input);
  },
});

for (const level of ["usage", "names"] as const) {
  Deno.test({
    name: `at ${level}, no content of a run arrives at MLflow or at Phoenix, and the spans still do`,
    ignore: NO_MLFLOW || NO_PHOENIX,
    fn: async () => {
      const { uri } = needMlflow();
      const experiment = await mlflowExperiment(uri);
      const toMlflow = await genaiRun({
        url: `${uri}/v1/traces`,
        level,
        stream: true,
        environ: { OTEL_EXPORTER_OTLP_TRACES_HEADERS: `x-mlflow-experiment-id=${experiment}`, ...TIMEOUT },
      });
      const toPhoenix = await genaiRun({ url: `${PHOENIX_URL}/v1/traces`, level, stream: true });
      const inMlflow = await mlflowSpans(uri, traceOf(toMlflow));
      const inPhoenix = await phoenixSpans(traceOf(toPhoenix));
      for (const [where, spans] of [["MLflow", inMlflow], ["Phoenix", inPhoenix]] as const) {
        assert.equal(ofOp(spans, "chat").length, 3, where);
        assert.equal(ofOp(spans, "execute_tool").length, 2, where);
        assertNoContent(spans, where);
      }
      for (const s of inMlflow) {
        assert.equal(s.attributes["mlflow.spanInputs"], undefined, s.name);
        assert.equal(s.attributes["mlflow.spanOutputs"], undefined, s.name);
      }
      for (const s of inPhoenix) {
        for (const key of ["llm.input_messages", "llm.output_messages", "tool.parameters", "input.value"]) {
          assert.equal(s.attributes[key], undefined, `${s.name} ${key}`);
        }
      }
      // the names still arrive: the provider, and at usage the token totals
      const root = inPhoenix.find((s) => s.name.startsWith("invoke_agent"))!;
      assert.equal(root.attributes["llm.provider"], "openai");
      assert.equal(
        root.attributes["llm.token_count.prompt"] === undefined
          ? undefined
          : Number(root.attributes["llm.token_count.prompt"]),
        level === "usage" ? toPhoenix.tokens.input : undefined,
      );
    },
  });
}

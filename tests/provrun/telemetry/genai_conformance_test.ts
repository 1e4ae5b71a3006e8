/**
 * The conformance table (_genai_table.ts, the GenAI conventions v1.41.1) counted on what a destination at
 * `bodies` receives from real agent runs, and what else the conventions ask of a run's spans.
 */
import assert from "node:assert/strict";
import { CONTENT_BYTES, CUT_MARK } from "../../../lib/provevi/telemetry/content_cap.ts";
import { GENAI_CONVENTIONS } from "../../../lib/provevi/telemetry/genai_conventions.ts";
import { OtlpReceiver } from "../../../lib/provevi/receiver/otlp_receiver.ts";
import { genaiRun } from "./_genai_run.ts";
import { coverage, failed, GENAI_OPERATIONS, TABLE } from "./_genai_table.ts";

Deno.test("the spans of agent runs meet the GenAI conventions' table: chat and execute_tool 95%, invoke_agent 90%", async () => {
  assert.equal(TABLE.version, GENAI_CONVENTIONS);
  await using receiver = await OtlpReceiver.start();
  // streamed and not; one run without its input, so that read_file fails and error.type counts
  const runs = [
    await genaiRun({ url: receiver.tracesUrl, level: "bodies", stream: false }),
    await genaiRun({ url: receiver.tracesUrl, level: "bodies", stream: true }),
    await genaiRun({ url: receiver.tracesUrl, level: "bodies", stream: false, staged: false }),
  ];
  for (const run of runs) assert.equal(run.outcome.status, "completed", JSON.stringify(run.outcome.error));
  const spans = receiver.spans;
  const table = coverage(spans);
  const lines = Object.entries(table).map(([op, row]) =>
    `${op.padEnd(13)} ${String(row.spans).padStart(3)} spans  ${
      (100 * row.present / row.applies).toFixed(1).padStart(5)
    }% of ${row.applies} (missing: ${[...row.missing].join(", ") || "none"})`
  );
  console.log(`GenAI semantic conventions ${TABLE.version}, a destination at bodies:\n${lines.join("\n")}`);
  const at = (op: string) => table[op]!.present / table[op]!.applies;
  assert.ok(table.chat!.spans >= 9 && table.execute_tool!.spans >= 6 && table.invoke_agent!.spans === 3);
  assert.ok(at("chat") >= 0.95, lines[0]);
  assert.ok(at("execute_tool") >= 0.95, lines[1]);
  assert.ok(at("invoke_agent") >= 0.90, lines[2]);
  // the kinds the conventions ask for: a model over HTTP is a client, a tool and the run are in the process
  for (const span of spans) {
    const type = TABLE.spans[String(span.attributes["gen_ai.operation.name"])];
    if (type) assert.equal(span.kind, type.kind, span.name);
  }
  // the opt-in content, on every span of its type (a failed tool call has its arguments, not a result)
  for (const [op, type] of Object.entries(TABLE.spans)) {
    for (const span of spans.filter((s) => s.attributes["gen_ai.operation.name"] === op)) {
      for (const key of type.optIn) {
        assert.equal(typeof span.attributes[key], "string", `${span.name} ${key}`);
      }
    }
  }
  // a failed tool call counted its error.type; it ran in the run without the input
  assert.ok(spans.some((s) => s.attributes["gen_ai.operation.name"] === "execute_tool" && failed(s)));
});

Deno.test("every span with a GenAI operation's name has that operation's required attributes, and no other span takes one", async () => {
  await using receiver = await OtlpReceiver.start();
  const run = await genaiRun({ url: receiver.tracesUrl, level: "bodies", stream: true });
  assert.equal(run.outcome.status, "completed");
  for (const span of receiver.spans) {
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
  // one invoke_agent per run: its root
  assert.deepEqual(
    receiver.spans.filter((s) => s.name.startsWith("invoke_agent")).map((s) => s.parentSpanId),
    [null],
  );
});

Deno.test("the root invoke_agent holds the run's token totals, provider, model, agent and conversation", async () => {
  await using receiver = await OtlpReceiver.start();
  const run = await genaiRun({ url: receiver.tracesUrl, level: "bodies", stream: false });
  const root = receiver.spans.find((s) => s.parentSpanId === null)!;
  const chats = receiver.spans.filter((s) => s.attributes["gen_ai.operation.name"] === "chat");
  const created = run.events[0]!;
  assert.equal(root.name, "invoke_agent analyst");
  assert.equal(root.attributes["gen_ai.provider.name"], "openai");
  assert.equal(root.attributes["gen_ai.request.model"], "gpt-4o-mini");
  assert.equal(root.attributes["gen_ai.agent.id"], "acme/demo/dev/analyst");
  assert.equal(root.attributes["gen_ai.agent.version"], created.data.agent_version);
  assert.equal(root.attributes["gen_ai.conversation.id"], "conv-42");
  assert.equal(root.attributes["gen_ai.usage.input_tokens"], run.tokens.input);
  assert.equal(root.attributes["gen_ai.usage.output_tokens"], run.tokens.output);
  const sum = (key: string) => chats.reduce((n, s) => n + (s.attributes[key] as number), 0);
  assert.equal(
    root.attributes["gen_ai.usage.cache_read.input_tokens"],
    sum("gen_ai.usage.cache_read.input_tokens"),
  );
  assert.deepEqual(root.attributes["gen_ai.response.finish_reasons"], ["stop"]);
  assert.deepEqual(chats.map((c) => c.attributes["gen_ai.response.finish_reasons"]), [
    ["tool_call"],
    ["tool_call"],
    ["stop"],
  ]);
  // what the agent was given, and what it gave
  const output = JSON.parse(root.attributes["gen_ai.output.messages"] as string);
  assert.equal(output[0].parts[0].content, "Revenue grew 12% in Q3.");
  const input = JSON.parse(root.attributes["gen_ai.input.messages"] as string);
  assert.equal(input[0].role, "user");
  assert.match(input[0].parts[0].content, /^What was the revenue growth in Q3\?/);
});

Deno.test("below bodies the root keeps its provider, model, agent, version and conversation, and no content", async () => {
  await using receiver = await OtlpReceiver.start();
  const run = await genaiRun({ url: receiver.tracesUrl, level: "names", stream: false });
  const root = receiver.spans.find((s) => s.parentSpanId === null)!;
  assert.deepEqual(
    [
      "gen_ai.operation.name",
      "gen_ai.provider.name",
      "gen_ai.request.model",
      "gen_ai.agent.name",
      "gen_ai.agent.id",
      "gen_ai.agent.version",
      "gen_ai.conversation.id",
    ].map((k) => root.attributes[k]),
    [
      "invoke_agent",
      "openai",
      "gpt-4o-mini",
      "analyst",
      "acme/demo/dev/analyst",
      run.events[0]!.data.agent_version,
      "conv-42",
    ],
  );
  assert.equal(root.attributes["gen_ai.usage.input_tokens"], undefined);
  assert.equal(root.attributes["gen_ai.input.messages"], undefined);
});

Deno.test("a tool result past 32 KiB reaches bodies cut and marked, within 32 KiB; the evidence keeps it whole", async () => {
  await using receiver = await OtlpReceiver.start();
  const csv = "quarter,revenue\n" + "Q3,48.2\n".repeat(10_000);
  const run = await genaiRun({ url: receiver.tracesUrl, level: "bodies", stream: false, csv });
  const read = receiver.spans.find((s) => s.name === "execute_tool read_file")!;
  const result = read.attributes["gen_ai.tool.call.result"] as string;
  assert.ok(new TextEncoder().encode(result).length <= CONTENT_BYTES, `${result.length} characters`);
  const text = JSON.parse(result) as string;
  const cut = text.indexOf(CUT_MARK);
  assert.ok(cut > 1000, "the cut is marked, after what fits");
  assert.ok(csv.startsWith(text.slice(0, cut)));
  // the next model call's input holds the same result, cut the same way, and stays JSON of its shape
  const chat = receiver.spans.filter((s) => s.attributes["gen_ai.operation.name"] === "chat")[1]!;
  const input = JSON.parse(chat.attributes["gen_ai.input.messages"] as string);
  assert.equal(input.at(-1).role, "tool");
  const called = run.events.find((e) => e.type === "tool_called" && e.data.tool === "read_file")!;
  assert.equal(read.attributes["provrun.tool.call.result_ref"], called.data.result_payload);
});

Deno.test("a run that fails has error.type on its root", async () => {
  await using receiver = await OtlpReceiver.start();
  // a server that is not there: the model call fails, and with it the run
  const run = await genaiRunAt("http://127.0.0.1:9/v1", receiver);
  assert.equal(run.status, "failed");
  const root = receiver.spans.find((s) => s.parentSpanId === null)!;
  const chat = receiver.spans.find((s) => s.attributes["gen_ai.operation.name"] === "chat")!;
  assert.equal(root.status.code, 2);
  assert.equal(typeof root.attributes["error.type"], "string");
  assert.equal(chat.attributes["error.type"], root.attributes["error.type"]);
});

async function genaiRunAt(baseUrl: string, receiver: OtlpReceiver) {
  const { genaiFile, otlpPolicy } = await import("./_genai_run.ts");
  const { runFile } = await import("../../../lib/provrun/runner/run.ts");
  const runs = await Deno.makeTempDir();
  try {
    return await runFile(genaiFile({ baseUrl, stream: false, staged: false }), {
      runs,
      policy: otlpPolicy(receiver.tracesUrl, "bodies"),
      environ: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.tracesUrl },
    });
  } finally {
    await Deno.remove(runs, { recursive: true });
  }
}

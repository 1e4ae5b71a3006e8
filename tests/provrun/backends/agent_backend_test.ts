import assert from "node:assert/strict";
import { join } from "node:path";
import type { EvidenceEvent } from "../../../lib/provevi/evidence/event.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { readEventsText } from "../../../lib/provevi/evidence/read_events.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";
import { gitCatalog } from "../_catalog.ts";
import { agentFile as bareAgentFile } from "../_agent.ts";

const CSV = "quarter,revenue\nQ2,43.0\nQ3,48.2\n";

function agentFile(turns: string, extra = "", stream = false): RunFile {
  return RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada, mode: strict, session_id: "conv-42" }
agent:
  name: analyst
  backend: agent
  model: "test:"
  stream: ${stream}
${extra}
  script:
    model: answer-1
    turns:
${turns}
prompt: What was the revenue growth in Q3?
inputs:
  - { uri: "data://acme/demo/dev/finance/revenue.csv", as: revenue.csv }
outputs: [answer.txt]
`);
}

const READ_WRITE = `
      - tool_calls: [{ id: c1, name: read_file, args: { path: /input/revenue.csv } }]
        usage: { input: 30, output: 12 }
      - tool_calls: [{ id: c2, name: note, args: { text: "Q3 is 48.2, Q2 is 43.0" } }]
        usage: { input: 50, output: 10 }
      - tool_calls: [{ id: c3, name: write_file, args: { path: /output/answer.txt, content: "Revenue grew 12% in Q3." } }]
        usage: { input: 60, output: 20 }
      - text: "Revenue grew 12% in Q3."
        usage: { input: 70, output: 9, cache_read: 20 }`;

async function eventsOf(runs: string, runId: string) {
  const record = await new FileStore({ runs }).readRun(runId);
  return { record, events: readEventsText((await record.eventsText())!).events };
}

async function payload(runs: string, runId: string, sha: string): Promise<unknown> {
  const record = await new FileStore({ runs }).readRun(runId);
  return JSON.parse(new TextDecoder().decode(await record.payload(sha)));
}

Deno.test("an agent that reads /input and writes /output/answer.txt gives every event of the plan, and the chain verifies", async () => {
  await using t = await gitCatalog({ "finance/revenue.csv": CSV });
  const outcome = await runFile(agentFile(READ_WRITE), { catalog: t.catalog, runs: t.runs });
  assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
  assert.equal(outcome.text, "Revenue grew 12% in Q3.");
  const { events, record } = await eventsOf(t.runs, outcome.runId);
  assert.deepEqual(events.map((e) => e.type), [
    "run_created",
    "access_requested",
    "access_granted",
    "context_resolved",
    "snapshot_materialized",
    "input_staged",
    "sandbox_started",
    "prompt_rendered",
    "model_called",
    "tool_called",
    "model_called",
    "note_added",
    "tool_called",
    "model_called",
    "tool_called",
    "model_called",
    "trace_imported",
    "sandbox_completed",
    "input_verified",
    "output_artifact_created",
    "run_completed",
  ]);
  assert.equal(
    await Deno.readTextFile(join(outcome.folder, "output", "answer.txt")),
    "Revenue grew 12% in Q3.",
  );
  assert.equal(events[0]!.data.session_id, "conv-42");
  const started = events.find((e) => e.type === "sandbox_started")!;
  assert.equal(started.data.session_id, "conv-42");
  const tools = started.data.tools as { name: string; input_schema: unknown; description: string }[];
  assert.deepEqual(tools.map((x) => x.name), ["read_file", "list_files", "grep_file", "write_file", "note"]);
  assert.ok(tools.every((x) => x.description && typeof x.input_schema === "object"));
  const perms =
    (started.data.permissions as { worker: { read: string[]; write: string[]; env: boolean } }).worker;
  assert.deepEqual(perms.read, [join(outcome.folder, "input"), join(outcome.folder, "output")]);
  assert.deepEqual(perms.write, [join(outcome.folder, "output"), join(outcome.folder, "scratch")]);
  assert.equal(perms.env, false);

  const read = events.find((e) => e.type === "tool_called")!;
  assert.equal(read.data.tool, "read_file");
  assert.equal(read.data.call_id, "c1");
  assert.equal(read.data.error, null);
  assert.equal(read.data.executed_by, "sandbox");
  assert.ok(read.started_at && read.span_id && read.parent_span_id === events[0]!.span_id);
  assert.deepEqual(await payload(t.runs, outcome.runId, read.payload!), { path: "/input/revenue.csv" });
  assert.equal(await payload(t.runs, outcome.runId, read.data.result_payload as string), CSV);
  const note = events.find((e) => e.type === "note_added")!;
  assert.equal(note.component, "agent");
  assert.equal(note.data.text, "Q3 is 48.2, Q2 is 43.0");
  assert.deepEqual(note.data.citations, []);

  const calls = events.filter((e) => e.type === "model_called");
  assert.deepEqual(calls[0]!.data.tool_calls, [{ id: "c1", name: "read_file" }]);
  assert.equal(calls[0]!.data.provider, "test");
  assert.equal(calls[3]!.data.cache_read_tokens, 20);
  const spans = new Set(
    events.filter((e) => e.type === "model_called" || e.type === "tool_called").map((e) => e.span_id),
  );
  assert.equal(spans.size, 7, "each model turn and each tool call is its own span");

  const trace = events.find((e) => e.type === "trace_imported")!;
  assert.equal(trace.confidence, "parsed");
  const history = await payload(t.runs, outcome.runId, trace.payload!) as { messages: { role: string }[] };
  assert.equal(history.messages.length, trace.data.messages);
  assert.deepEqual(history.messages.map((m) => m.role), [
    "user",
    "assistant",
    "tool",
    "assistant",
    "tool",
    "assistant",
    "tool",
    "assistant",
  ]);
  const done = events.find((e) => e.type === "sandbox_completed")!;
  assert.equal(done.data.status, "ok");
  assert.deepEqual((await verifyRun(record)).problems, []);
});

/** An event without what differs between two runs of one script: times, IDs, and the streamed flag. */
function comparable(e: EvidenceEvent, folder: string) {
  const data = { ...e.data };
  delete data.streamed;
  delete data.expires_at; // a time
  delete data.reused; // the second run reuses the first one's snapshot
  if (e.type === "run_created") {
    delete data.spec;
    delete data.agent_version;
  }
  if (e.type === "model_called") delete data.response_payload; // a stream's reply is kept as its parts
  const text = JSON.stringify(data).replaceAll(folder, "<run>");
  return {
    type: e.type,
    component: e.component,
    confidence: e.confidence,
    timed: e.started_at !== null && e.started_at !== undefined,
    data: JSON.parse(text),
    payload: e.type === "run_created" || e.type === "model_called" ? "-" : e.payload,
  };
}

Deno.test("a streamed run and a non-streamed run of one script give the same events, apart from times and the streamed flag", async () => {
  await using t = await gitCatalog({ "finance/revenue.csv": CSV });
  const runs: { events: EvidenceEvent[]; folder: string }[] = [];
  for (const stream of [false, true]) {
    const outcome = await runFile(agentFile(READ_WRITE, "", stream), { catalog: t.catalog, runs: t.runs });
    assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
    const { events } = await eventsOf(t.runs, outcome.runId);
    assert.ok(events.filter((e) => e.type === "model_called").every((e) => e.data.streamed === stream));
    runs.push({ events, folder: outcome.folder });
  }
  const [plain, streamed] = runs.map((r) => r.events.map((e) => comparable(e, r.folder)));
  assert.deepEqual(streamed, plain);
});

const FINAL = `
      - tool_calls: [{ id: c1, name: read_file, args: { path: /input/revenue.csv } }]
      - tool_calls: [{ id: f1, name: final_answer, args: { answer: "Revenue grew 12% in Q3." } }]`;

for (const stream of [false, true]) {
  Deno.test(`an output tool's call is recorded and ends the loop (${stream ? "streamed: before" : "not streamed: after"} its model_called)`, async () => {
    await using t = await gitCatalog({ "finance/revenue.csv": CSV });
    const outcome = await runFile(agentFile(FINAL, "  tools: [read_file, final_answer]", stream), {
      catalog: t.catalog,
      runs: t.runs,
    });
    assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
    assert.equal(outcome.text, "Revenue grew 12% in Q3.");
    const { events } = await eventsOf(t.runs, outcome.runId);
    const types = events.map((e) => e.type);
    const start = types.indexOf("prompt_rendered") + 1;
    assert.deepEqual(
      types.slice(start, types.indexOf("trace_imported")),
      stream
        ? ["model_called", "tool_called", "tool_called", "model_called"]
        : ["model_called", "tool_called", "model_called", "tool_called"],
    );
    const out = events.filter((e) => e.type === "tool_called").at(-1)!;
    assert.equal(out.data.tool, "final_answer");
    assert.equal(out.data.executed_by, "output");
    assert.equal(out.data.result_payload, out.payload);
    assert.deepEqual(await payload(t.runs, outcome.runId, out.payload!), {
      answer: "Revenue grew 12% in Q3.",
    });
    const started = events.find((e) => e.type === "sandbox_started")!;
    assert.deepEqual((started.data.tools as { name: string }[]).map((x) => x.name), [
      "read_file",
      "final_answer",
    ]);
  });
}

for (const stream of [false, true]) {
  Deno.test(`a tool the provider ran is recorded after its model_called: parsed, untimed, inside the model call's span (${stream ? "streamed" : "not streamed"})`, async () => {
    await using t = await gitCatalog({ "finance/revenue.csv": CSV });
    const runs = t.runs;
    const turns = `
      - provider_tools: [{ id: ws1, name: web_search, args: { q: "Q3 revenue" }, result: { hits: 3 } }]
        text: "Searched; revenue grew 12% in Q3."`;
    const outcome = await runFile(agentFile(turns, "", stream), { runs, catalog: t.catalog });
    assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
    const { events, record } = await eventsOf(runs, outcome.runId);
    const i = events.findIndex((e) => e.type === "model_called");
    const model = events[i]!;
    const tool = events[i + 1]!;
    assert.equal(tool.type, "tool_called");
    assert.equal(tool.confidence, "parsed");
    assert.equal(tool.started_at ?? null, null);
    assert.equal(tool.parent_span_id, model.span_id);
    assert.equal(tool.data.executed_by, "provider");
    assert.equal(tool.data.call_id, "ws1");
    assert.deepEqual(await payload(runs, outcome.runId, tool.payload!), { q: "Q3 revenue" });
    assert.deepEqual(await payload(runs, outcome.runId, tool.data.result_payload as string), { hits: 3 });
    assert.deepEqual((await verifyRun(record)).problems, []);
  });
}

Deno.test("the step limit ends the loop and sandbox_completed says so; the declared output it never wrote fails the strict run", async () => {
  await using t = await gitCatalog({ "finance/revenue.csv": CSV });
  const outcome = await runFile(agentFile(READ_WRITE, "  limits: { steps: 2 }"), {
    catalog: t.catalog,
    runs: t.runs,
  });
  assert.equal(outcome.status, "failed");
  const { events, record } = await eventsOf(t.runs, outcome.runId);
  assert.equal(events.filter((e) => e.type === "model_called").length, 2);
  const done = events.find((e) => e.type === "sandbox_completed")!;
  assert.equal(done.data.status, "step_limit");
  assert.equal(done.data.steps, 2);
  assert.equal(events.at(-1)!.type, "run_failed");
  assert.equal(events.at(-1)!.data.error, "OutputMissing");
  assert.match(String(events.at(-1)!.data.message), /did not write its declared output output\/answer\.txt/);
  assert.deepEqual((await verifyRun(record)).problems, []);
});

Deno.test("in lenient mode a declared output the run never wrote is noted (note_added, missing_outputs), and the run completes", async () => {
  await using t = await gitCatalog({ "finance/revenue.csv": CSV });
  const file = agentFile(READ_WRITE, "  limits: { steps: 2 }");
  file.data.run.mode = "lenient";
  const outcome = await runFile(file, { catalog: t.catalog, runs: t.runs });
  assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
  const { events } = await eventsOf(t.runs, outcome.runId);
  const note = events.find((e) => e.type === "note_added" && e.component === "Outputter")!;
  assert.deepEqual(note.data.missing_outputs, ["answer.txt"]);
});

Deno.test("the agent's final answer goes to the first declared output when no tool wrote it", async () => {
  await using t = await gitCatalog({ "finance/revenue.csv": CSV });
  const turns = `
      - tool_calls: [{ id: c1, name: read_file, args: { path: /input/revenue.csv } }]
      - text: "Revenue grew 12% in Q3."`;
  const outcome = await runFile(agentFile(turns), { catalog: t.catalog, runs: t.runs });
  assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
  const { events } = await eventsOf(t.runs, outcome.runId);
  const out = events.find((e) => e.type === "output_artifact_created")!;
  assert.equal(out.data.path, "answer.txt");
  assert.equal(
    await Deno.readTextFile(join(t.runs, outcome.runId, "output", "answer.txt")),
    "Revenue grew 12% in Q3.",
  );
});

Deno.test("the token limit cancels an agent run: run_failed with CancelledError, sealed", async () => {
  await using t = await gitCatalog({ "finance/revenue.csv": CSV });
  const outcome = await runFile(agentFile(READ_WRITE, "  limits: { tokens: 100 }"), {
    catalog: t.catalog,
    runs: t.runs,
  });
  assert.equal(outcome.status, "failed");
  const { events, record } = await eventsOf(t.runs, outcome.runId);
  assert.equal(events.at(-1)!.type, "run_failed");
  assert.equal(events.at(-1)!.data.error, "CancelledError");
  assert.match(String(events.at(-1)!.data.message), /limit of 100 tokens \(102\)/);
  assert.equal(outcome.manifest?.status, "failed");
  assert.deepEqual((await verifyRun(record)).problems, []);
});

for (const stream of [false, true]) {
  Deno.test(`a call of a tool that does not exist is recorded as tool_called with the AI SDK's error (${stream ? "streamed" : "not streamed"})`, async () => {
    const runs = await Deno.makeTempDir();
    const turns = [
      `      - tool_calls: [{ id: x1, name: shell, args: { cmd: "rm -rf /" } }]`,
      `      - text: "done"`,
    ].join("\n");
    const outcome = await runFile(bareAgentFile(turns, { stream }), { runs });
    assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
    const { events, record } = await eventsOf(runs, outcome.runId);
    const types = events.map((e) => e.type);
    const call = events.find((e) => e.type === "tool_called")!;
    assert.ok(call, types.join());
    assert.equal(types.indexOf("tool_called"), types.indexOf("model_called") + 1);
    assert.equal(call.data.tool, "shell");
    assert.equal(call.data.call_id, "x1");
    assert.equal(call.data.error, "AI_NoSuchToolError");
    assert.equal(call.data.executed_by, "none");
    assert.deepEqual(await payload(runs, outcome.runId, call.payload!), { cmd: "rm -rf /" });
    assert.deepEqual((await verifyRun(record)).problems, []);
    await Deno.remove(runs, { recursive: true });
  });
}

Deno.test("a call whose arguments do not match the tool's JSON schema runs nothing, and is recorded with the reason", async () => {
  const runs = await Deno.makeTempDir();
  const turns = [
    `      - tool_calls: [{ id: v1, name: read_file, args: { nope: 1 } }]`,
    `      - text: "done"`,
  ].join("\n");
  const outcome = await runFile(bareAgentFile(turns, {}), { runs });
  assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
  const { events, record } = await eventsOf(runs, outcome.runId);
  const call = events.find((e) => e.type === "tool_called")!;
  assert.equal(call.data.tool, "read_file");
  assert.equal(call.data.executed_by, "none");
  assert.equal(call.data.error, "AI_InvalidToolInputError");
  assert.match(String(call.data.message), /Invalid input for tool read_file: .*Type validation failed/);
  assert.deepEqual((await verifyRun(record)).problems, []);
  await Deno.remove(runs, { recursive: true });
});

Deno.test("a run that fails after writing an output records the output before run_failed, and its record verifies", async () => {
  const runs = await Deno.makeTempDir();
  const turns = [
    `      - tool_calls: [{ id: w1, name: write_file, args: { path: /output/partial.txt, content: "half" } }]`,
    `      - error: { status: 503, message: overloaded }`,
  ].join("\n");
  const outcome = await runFile(bareAgentFile(turns, {}), { runs });
  assert.equal(outcome.status, "failed");
  const { events, record } = await eventsOf(runs, outcome.runId);
  const types = events.map((e) => e.type);
  assert.deepEqual(types.slice(-2), ["output_artifact_created", "run_failed"]);
  assert.equal(events.at(-2)!.data.path, "partial.txt");
  assert.deepEqual((await verifyRun(record)).problems, []);
  await Deno.remove(runs, { recursive: true });
});

Deno.test("a note's citations are recorded as data of note_added: a run file by its agent path, a URI, a quote", async () => {
  await using t = await gitCatalog({ "finance/revenue.csv": CSV });
  const cites =
    `[{ source: /input/./revenue.csv, quote: "Q3,48.2" }, { source: "data://acme/demo/dev/finance/revenue.csv" }]`;
  const outcome = await runFile(
    agentFile(`
      - tool_calls: [{ id: c1, name: note, args: { text: "Q3 is 48.2", citations: ${cites} } }]
      - tool_calls: [{ id: c2, name: note, args: { text: "made up", citations: [{ source: /input/nowhere.csv }] } }]
      - tool_calls: [{ id: c3, name: note, args: { text: "loose", citations: [{ source: "see the table" }] } }]
      - tool_calls: [{ id: c4, name: write_file, args: { path: /output/answer.txt, content: "12%" } }]
      - text: "12%"`),
    { catalog: t.catalog, runs: t.runs },
  );
  assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
  const { events, record } = await eventsOf(t.runs, outcome.runId);
  const notes = events.filter((e) => e.type === "note_added");
  assert.deepEqual(notes.map((e) => [e.component, e.data.text, e.data.citations, e.data.call_id]), [
    ["agent", "Q3 is 48.2", [
      { source: "/input/revenue.csv", quote: "Q3,48.2" },
      { source: "data://acme/demo/dev/finance/revenue.csv" },
    ], "c1"],
  ]);
  // A citation of a file that is not there, or of neither a file nor a URI, fails the tool call (the model is told).
  const failed = events.filter((e) => e.type === "tool_called" && e.data.error !== null);
  assert.deepEqual(failed.map((e) => [e.data.call_id, e.data.error]), [["c2", "PathRefused"], [
    "c3",
    "TypeError",
  ]]);
  assert.deepEqual((await verifyRun(record)).problems, []);
});

/**
 * The run's core calls its parts at named points: the order of the hooks against the run's events, a served
 * model, a tool call served without the sandbox, a part that fails after the seal, and parts closed when the run
 * is refused before it starts.
 */
import assert from "node:assert/strict";
import { findRun } from "../../../lib/provevi/runs/find_run.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { readEventsText } from "../../../lib/provevi/evidence/read_events.ts";
import { checkScript, ScriptedModel } from "../../../lib/provrun/backends/scripted_model.ts";
import type { RunPart, ToolReturn } from "../../../lib/provrun/run/run_part.ts";
import { ModelKeyMissing } from "../../../lib/provrun/run/errors.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";
import { RunParts } from "../../../lib/provrun/runner/run_parts.ts";
import { agentFile, eventsOf, payloadOf } from "../_agent.ts";
import { startFakeOpenAI } from "../../../fixtures/providers/fake_openai_server.ts";

const CALL = `
run: { org: acme, domain: demo, env: dev, actor: ada, mode: strict }
agent:
  name: q
  backend: call
  model: "test:"
  stream: true
  script: { turns: [{ text: "forty-two", usage: { input: 3, output: 2 } }] }
prompt: What is six times seven?
`;

/** A part that writes down each hook it is given, with the last event written before it. */
function tracer(name: string, log: string[]): RunPart {
  let last = "-";
  const note = (hook: string) => log.push(`${name}.${hook} after ${last}`);
  return {
    name,
    beforeStart: () => void note("beforeStart"),
    facts: () => {
      note("facts");
      return { [`${name}_fact`]: true };
    },
    afterCreated: () => Promise.resolve(void note("afterCreated")),
    onEvent: (event) => void (last = event.type),
    onText: () => void note("onText"),
    onUsage: (u) => void note(`onUsage ${u.input}+${u.output}`),
    beforeLastEvent: () => Promise.resolve(void note("beforeLastEvent")),
    beforeSeal: () => Promise.resolve(void note("beforeSeal")),
    afterSeal: (sealed) => Promise.resolve(void note(`afterSeal ${sealed.manifest.status}`)),
    close: () => Promise.resolve(void note("close")),
  };
}

async function withRuns<T>(fn: (runs: string) => Promise<T>): Promise<T> {
  const runs = await Deno.makeTempDir({ prefix: "provrun-core-" });
  try {
    return await fn(runs);
  } finally {
    await Deno.remove(runs, { recursive: true });
  }
}

Deno.test("the core calls each part's hooks at their points; the ones that tear down, the last part first", async () => {
  await withRuns(async (runs) => {
    const log: string[] = [];
    const outcome = await runFile(RunFile.parse(CALL), { runs, parts: [tracer("a", log), tracer("b", log)] });
    assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
    const hooks = log.filter((l) => !/\.onText /.test(l));
    assert.deepEqual(hooks, [
      "a.beforeStart after -",
      "b.beforeStart after -",
      "a.facts after -",
      "b.facts after -",
      "a.afterCreated after run_created",
      "b.afterCreated after run_created",
      "a.onUsage 3+2 after model_called",
      "b.onUsage 3+2 after model_called",
      "a.beforeLastEvent after output_artifact_created",
      "b.beforeLastEvent after output_artifact_created",
      "b.beforeSeal after run_completed",
      "a.beforeSeal after run_completed",
      "a.afterSeal completed after run_completed",
      "b.afterSeal completed after run_completed",
      "b.close after run_completed",
      "a.close after run_completed",
    ]);
    // the model's text streamed through each part, before its model_called
    assert.ok(log.includes("a.onText after prompt_rendered"), log.join("\n"));
    const { events } = await eventsOf(runs, outcome.runId);
    assert.equal(events[0]!.data.a_fact, true);
    assert.equal(events[0]!.data.b_fact, true);
  });
});

Deno.test("a part's modelFor serves the run's model; the capture records each request it answers", async () => {
  await withRuns(async (runs) => {
    const served = new ScriptedModel(checkScript({ turns: [{ text: "served answer" }] }, "served"), {
      name: "served",
    });
    const replay: RunPart = { name: "replay", modelFor: () => Promise.resolve(served) };
    const outcome = await runFile(RunFile.parse(CALL), { runs, parts: [replay] });
    assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
    assert.equal(outcome.text, "served answer");
    const { events } = await eventsOf(runs, outcome.runId);
    const call = events.find((e) => e.type === "model_called")!;
    assert.equal(call.data.model, "served");
    assert.ok((await verifyRun(await findRun(outcome.folder))).ok);
  });
});

Deno.test("a part's wrapTool answers a tool call inside its recorded step, without the sandbox running the tool", async () => {
  await withRuns(async (runs) => {
    const calls: string[] = [];
    const replay: RunPart = {
      name: "replay",
      wrapTool: (call, _run): Promise<ToolReturn> => {
        calls.push(`${call.tool} ${JSON.stringify(call.args)}`);
        return Promise.resolve({ value: "quarter,revenue\nQ3,99.9\n", console: "" });
      },
    };
    const file = agentFile(
      `      - tool_calls: [{ name: read_file, args: { path: /input/absent.csv } }]
      - text: "Q3 was 99.9."`,
    );
    const outcome = await runFile(file, { runs, parts: [replay] });
    assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
    assert.deepEqual(calls, [`read_file {"path":"/input/absent.csv"}`]);
    const { events } = await eventsOf(runs, outcome.runId);
    const tool = events.find((e) => e.type === "tool_called")!;
    assert.equal(tool.data.error, null);
    assert.equal(
      await payloadOf(runs, outcome.runId, tool.data.result_payload as string),
      "quarter,revenue\nQ3,99.9\n",
    );
  });
});

Deno.test("a part's prepareBackend points the model at another place and gives the key in its own way, as a gateway does", async () => {
  await withRuns(async (runs) => {
    await using server = startFakeOpenAI();
    const read: string[] = [];
    const gateway: RunPart = {
      name: "gateway",
      prepareBackend: (setup) =>
        Promise.resolve({
          agent: { ...setup.agent, provider: { ...setup.agent.provider!, base_url: server.baseUrl } },
          env: (name) => {
            read.push(name);
            return name === "PROVR_KEY_FAKE" ? "run-token" : undefined;
          },
        }),
    };
    const file = RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada, mode: strict }
agent:
  name: q
  backend: call
  model: "openai-compatible:fake-4o"
  provider: { base_url: "http://127.0.0.1:9/v1", api_key_env: PROVR_KEY_FAKE }
prompt: What was the revenue growth in Q3?
`);
    const outcome = await runFile(file, {
      runs,
      env: (name) => (name === "PROVR_KEY_FAKE" ? "the-provider-key" : undefined),
      parts: [gateway],
    });
    assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
    assert.equal(server.bodies.length, 1);
    assert.ok(read.includes("PROVR_KEY_FAKE"), read.join(" "));
    // run_created records the run file's agent, as written
    const { events } = await eventsOf(runs, outcome.runId);
    assert.equal(
      (events[0]!.data.spec as { provider: { base_url: string } }).provider.base_url,
      "http://127.0.0.1:9/v1",
    );
  });
});

Deno.test("a part that fails after the seal fails the outcome; the evidence is sealed and verifies", async () => {
  await withRuns(async (runs) => {
    const log: RunPart = {
      name: "log",
      afterSeal: () => Promise.reject(new Error("the log cannot be appended")),
    };
    const outcome = await runFile(RunFile.parse(CALL), { runs, parts: [log] });
    assert.equal(outcome.status, "failed");
    assert.equal(outcome.error?.message, "the log cannot be appended");
    assert.equal(outcome.manifest?.status, "completed");
    const record = await new FileStore({ runs }).readRun(outcome.runId);
    assert.equal(readEventsText((await record.eventsText())!).events.at(-1)!.type, "run_completed");
    assert.ok((await verifyRun(record)).ok);
  });
});

Deno.test("a run refused before it starts closes the caller's parts and writes no run folder", async () => {
  await withRuns(async (runs) => {
    const log: string[] = [];
    const file = RunFile.parse(CALL.replace('model: "test:"', 'model: "openai:gpt-4o-mini"'));
    await assert.rejects(
      () => runFile(file, { runs, env: () => undefined, parts: [tracer("a", log)] }),
      ModelKeyMissing,
    );
    assert.deepEqual(log, ["a.close after -"]);
    assert.deepEqual(await Array.fromAsync(Deno.readDir(runs)), []);
  });
});

Deno.test("RunParts.wrapTool() nests the parts' tool hooks, the first part outermost", async () => {
  const order: string[] = [];
  const wrap = (name: string): RunPart => ({
    name,
    wrapTool: async (_call, run) => {
      order.push(`${name} in`);
      const out = await run();
      order.push(`${name} out`);
      return out;
    },
  });
  const hook = new RunParts([wrap("a"), { name: "none" }, wrap("b")]).wrapTool()!;
  const out = await hook({ tool: "t", callId: "c", args: {} }, () => {
    order.push("tool");
    return Promise.resolve({ value: 1, console: "" });
  });
  assert.deepEqual(out, { value: 1, console: "" });
  assert.deepEqual(order, ["a in", "b in", "tool", "b out", "a out"]);
  assert.equal(new RunParts([{ name: "none" }]).wrapTool(), undefined);
});

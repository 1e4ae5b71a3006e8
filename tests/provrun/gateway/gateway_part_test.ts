import assert from "node:assert/strict";
import { join } from "node:path";
import { startFakeAgentProvider } from "../../../fixtures/providers/fake_agent_provider.ts";
import { findRun } from "../../../lib/provevi/runs/find_run.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { readEventsText } from "../../../lib/provevi/evidence/read_events.ts";
import { runCost } from "../../../lib/provevi/cost/run_cost.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";
import { forkRun } from "../../../lib/provrun/replay/fork_run.ts";
import { RunNotReplayable } from "../../../lib/provrun/replay/replay_errors.ts";
import { replayRun } from "../../../lib/provrun/replay/replay_run.ts";

const KEY = "sk-real-provider-key-0123456789";

function agentRun(model: string, baseUrl: string, extra = ""): RunFile {
  return RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada }
agent:
  name: analyst
  backend: agent
  model: ${model}
  provider: { base_url: ${JSON.stringify(baseUrl)}, api_key_env: PROVR_KEY_FAKE }
  gateway: true
  tools: [note]
${extra}
prompt: What was the revenue growth in Q3?
`);
}

async function eventsOf(folder: string) {
  return readEventsText(await Deno.readTextFile(join(folder, "evidence", "events.jsonl"))).events;
}

for (
  const [route, base, stream] of [
    ["anthropic:claude-sonnet-4-5", (p: { url: string }) => p.url, false],
    ["anthropic:claude-sonnet-4-5", (p: { url: string }) => `${p.url}/v1`, true],
    ["openai:gpt-5", (p: { openaiBaseUrl: string }) => p.openaiBaseUrl, true],
    ["openai-compatible:deepseek-chat", (p: { openaiBaseUrl: string }) => p.openaiBaseUrl, false],
  ] as const
) {
  Deno.test(`an agent run with agent.gateway (${route}, ${stream ? "streamed" : "not streamed"}) records each call once, at the gateway, priced, and the key reaches only the provider`, async () => {
    await using provider = startFakeAgentProvider([{ name: "note", input: { text: "Q3 is up" } }], {
      usage: { input: 1000, output: 100, cacheRead: 400, reasoning: 20 },
    });
    const runs = await Deno.makeTempDir({ prefix: "gateway-part-" });
    try {
      const outcome = await runFile(agentRun(route, base(provider), stream ? "  stream: true" : ""), {
        runs,
        env: (n) => (n === "PROVR_KEY_FAKE" ? KEY : undefined),
      });
      assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
      assert.equal(outcome.text, "Revenue grew 12% in Q3.");
      const events = await eventsOf(outcome.folder);
      const calls = events.filter((e) => e.type === "model_called");
      assert.equal(calls.length, 2, "one model_called per request, not two");
      assert.equal(calls.length, provider.requests.length);
      assert.ok(calls.every((c) => c.data.via === "gateway" && c.component === "ModelGateway"));
      assert.ok(provider.requests.every((r) => r.key === KEY), "the provider gets the real key");
      const started = events.find((e) => e.type === "sandbox_started")!;
      const gateway = started.data.gateway as Record<string, unknown>;
      assert.equal(gateway.key_variable, "PROVR_KEY_FAKE");
      assert.ok(!(await Deno.readTextFile(join(outcome.folder, "evidence", "events.jsonl"))).includes(KEY));
      // the tool call is joined to the call that asked for it
      const tool = events.find((e) => e.type === "tool_called")!;
      assert.deepEqual((calls[0]!.data.tool_calls as { id: string }[]).map((t) => t.id), [tool.data.call_id]);
      const last = events.at(-1)!;
      assert.equal((last.data.cost as Record<string, unknown>).calls, 2);
      assert.deepEqual(last.data.gateway, { calls: 2, refused: {}, passed: 0 });
      const record = await findRun(outcome.folder);
      const cost = await runCost(events, (sha) => record.payload(sha));
      assert.deepEqual(cost.problems, []);
      assert.equal(cost.unpriced, 0);
      assert.equal((last.data.cost as Record<string, unknown>).amount, cost.total);
      const check = await verifyRun(record);
      assert.ok(check.ok, JSON.stringify(check.problems));
    } finally {
      await Deno.remove(runs, { recursive: true });
    }
  });
}

Deno.test("an agent run through the gateway whose provider fails records the failed call and fails the run, sealed and verifiable", async () => {
  await using provider = startFakeAgentProvider([], {
    faults: { 0: { status: 400, message: "bad request" } },
  });
  const runs = await Deno.makeTempDir({ prefix: "gateway-part-" });
  try {
    const outcome = await runFile(agentRun("anthropic:claude-sonnet-4-5", provider.url), {
      runs,
      env: (n) => (n === "PROVR_KEY_FAKE" ? KEY : undefined),
    });
    assert.equal(outcome.status, "failed");
    const events = await eventsOf(outcome.folder);
    const failed = events.filter((e) => e.type === "step_failed" && e.data.step === "model_called");
    assert.equal(failed[0]!.data.error, "ProviderError");
    assert.equal(failed[0]!.data.status, 400);
    assert.equal(events.at(-1)!.type, "run_failed");
    const check = await verifyRun(await findRun(outcome.folder));
    assert.ok(check.ok, JSON.stringify(check.problems));
  } finally {
    await Deno.remove(runs, { recursive: true });
  }
});

Deno.test("a run whose model calls the gateway recorded (the provider's own requests and answers) is refused by replay and fork in one line, and no run folder is made", async () => {
  await using provider = startFakeAgentProvider([{ name: "note", input: { text: "Q3 is up" } }]);
  const dir = await Deno.makeTempDir({ prefix: "gateway-replay-" });
  try {
    const file = join(dir, "run.yaml");
    await Deno.writeTextFile(
      file,
      `run: { org: acme, domain: demo, env: dev, actor: ada }
agent:
  name: analyst
  backend: agent
  model: anthropic:claude-sonnet-4-5
  provider: { base_url: ${JSON.stringify(provider.url)}, api_key_env: PROVR_KEY_FAKE }
  gateway: true
  tools: [note]
prompt: What was the revenue growth in Q3?
`,
    );
    const store = new FileStore({ runs: join(dir, "runs") });
    const outcome = await runFile(await RunFile.load(file), {
      store,
      env: (n) => (n === "PROVR_KEY_FAKE" ? KEY : undefined),
    });
    assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
    const source = await store.readRun(outcome.runId);
    const refusal = /recorded its model calls at the model gateway \(agent\.gateway\).*prove diff compares/;
    await assert.rejects(
      () => replayRun(source, { store }),
      (e) => e instanceof RunNotReplayable && refusal.test(e.message),
    );
    await assert.rejects(
      () => forkRun(source, { store, at: 1 }),
      (e) => e instanceof RunNotReplayable && refusal.test(e.message),
    );
    assert.deepEqual(await store.runIds(), [outcome.runId]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

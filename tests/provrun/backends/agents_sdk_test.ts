import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { Agent, getGlobalTraceProvider, Runner, tool, withCustomSpan, withTrace } from "@openai/agents-core";
import { OpenAIProvider, setDefaultOpenAITracingExporter } from "@openai/agents-openai";
import { z } from "zod";
import type { EvidenceStore } from "../../../lib/provevi/store/store.ts";
import { findRun } from "../../../lib/provevi/runs/find_run.ts";
import { openStore } from "../../../lib/provevi/runs/open_store.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import type { RunOutcome } from "../../../lib/provrun/runner/run.ts";
import { runAgentsSdk } from "../../../lib/provrun/runner/run_agents_sdk.ts";
import { sentMessages } from "../../../lib/provtrace/build/messages.ts";
import {
  FAKE_ANSWER,
  type FakeAgentProvider,
  startFakeAgentProvider,
} from "../../../fixtures/providers/fake_agent_provider.ts";

/** Every host a `fetch` of this process reached while `fn` ran: the SDK's exporter to OpenAI would be one. */
async function hostsReached<T>(fn: () => Promise<T>): Promise<{ value: T; hosts: Set<string> }> {
  const hosts = new Set<string>();
  const original = globalThis.fetch;
  globalThis.fetch = (input: string | URL | Request, init?: RequestInit) => {
    hosts.add(new URL(input instanceof Request ? input.url : String(input)).hostname);
    return original(input, init);
  };
  try {
    return { value: await fn(), hosts };
  } finally {
    globalThis.fetch = original;
  }
}

// What `@openai/agents` does when an app imports it: the SDK's default processor exports every trace to OpenAI.
setDefaultOpenAITracingExporter();

/** An app on the SDK: a triage agent that hands over to an analyst with a tool, against the fake provider. */
function financeApp(provider: FakeAgentProvider, revenue: (quarter: string) => string) {
  const analyst = new Agent({
    name: "analyst",
    instructions: "Answer with the numbers.",
    tools: [tool({
      name: "revenue",
      description: "The revenue of a quarter, in millions.",
      parameters: z.object({ quarter: z.string() }),
      execute: ({ quarter }) => revenue(quarter),
    })],
  });
  const triage = Agent.create({
    name: "triage",
    instructions: "Hand finance questions over.",
    handoffs: [analyst],
  });
  const runner = new Runner({
    modelProvider: new OpenAIProvider({ apiKey: "sk-fake", baseURL: provider.openaiBaseUrl }),
    model: "gpt-fake",
    traceIncludeSensitiveData: true,
  });
  return async ({ prompt }: { prompt: string }) =>
    String((await runner.run(triage, prompt)).finalOutput ?? "");
}

const SCRIPT = [{ name: "transfer_to_analyst", input: {} }, { name: "revenue", input: { quarter: "Q3" } }];

async function recorded(
  store: EvidenceStore,
  provider: FakeAgentProvider,
  revenue: (quarter: string) => string,
): Promise<RunOutcome> {
  return await runAgentsSdk(financeApp(provider, revenue), {
    agent: { name: "triage", model: "openai:gpt-fake", provider: { base_url: provider.openaiBaseUrl } },
    run: { org: "acme", domain: "demo", env: "dev", actor: "ada" },
    prompt: "What was the revenue in Q3?",
  }, { store });
}

/** The events of a run as the sqlite store's rows hold them. */
function rowsOf(db: string, runId: string) {
  const rows = new DatabaseSync(db, { readOnly: true });
  try {
    return rows.prepare("SELECT line FROM provevi_events WHERE run_id = ? ORDER BY seq").all(runId)
      .map((r) => JSON.parse(String(r.line)));
  } finally {
    rows.close();
  }
}

async function withStore(fn: (store: EvidenceStore, db: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "agents-sdk-" });
  // with a key set, the SDK's default exporter would send its traces to api.openai.com
  Deno.env.set("OPENAI_API_KEY", "sk-fake");
  try {
    const db = join(dir, "runs.db");
    await using store = await openStore(`sqlite:///${db}`, { runs: join(dir, "runs") });
    await fn(store, db);
  } finally {
    Deno.env.delete("OPENAI_API_KEY");
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test({
  name:
    "an app on the OpenAI Agents SDK (a tool, a handoff) is recorded as a run whose model and tool calls are " +
    "rows of a sqlite store, that verifies, and that sent no trace to OpenAI",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () =>
    withStore(async (store, db) => {
      await using provider = startFakeAgentProvider(SCRIPT);
      const { value: outcome, hosts } = await hostsReached(async () => {
        const outcome = await recorded(store, provider, () => "48.2");
        // as the SDK does at the process's exit: every processor sends what it holds
        await getGlobalTraceProvider().forceFlush();
        return outcome;
      });
      assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
      assert.equal(outcome.text, FAKE_ANSWER);
      assert.deepEqual([...hosts], ["127.0.0.1"], "a request left for another host");
      const check = await verifyRun(await findRun(outcome.folder), { store });
      assert.ok(check.ok, JSON.stringify(check.problems));
      const events = rowsOf(db, outcome.runId);
      const models = events.filter((e) => e.type === "model_called");
      assert.equal(models.length, 3, events.map((e) => e.type).join(" "));
      assert.ok(models.every((e) => e.component === "AgentsSdk" && e.data.provider === "openai"));
      assert.ok(models.every((e) => e.data.input_tokens > 0), JSON.stringify(models.map((e) => e.data)));
      assert.deepEqual(models[1].data.tool_calls.map((c: { name: string }) => c.name), ["revenue"]);
      const tools = events.filter((e) => e.type === "tool_called");
      assert.deepEqual(tools.map((e) => e.data.tool), ["revenue"]);
      const run = await store.readRun(outcome.runId);
      assert.equal(new TextDecoder().decode(await run.payload(tools[0].data.result_payload)), "48.2");
      assert.deepEqual(JSON.parse(new TextDecoder().decode(await run.payload(tools[0].payload))), {
        quarter: "Q3",
      });
      // the request is a Responses API body, as provtrace reads the gateway's
      const sent = sentMessages(
        JSON.parse(new TextDecoder().decode(await run.payload(models[1].payload))),
        models[1].data.api,
      );
      assert.equal(sent.format, "openai");
      assert.ok(JSON.stringify(sent.messages).includes("What was the revenue in Q3?"), JSON.stringify(sent));
      const notes = events.filter((e) => e.type === "note_added").map((e) => e.data.text);
      assert.ok(notes.includes("handoff from triage to analyst"), JSON.stringify(notes));
      // the SDK's spans are steps of the run's trace
      const root = events.find((e) => e.type === "run_created").trace_id;
      assert.ok([...models, ...tools].every((e) => e.trace_id === root));
      assert.ok(provider.requests.some((r) => r.path.endsWith("/responses")), "the SDK spoke Responses");
    }),
});

Deno.test({
  name: "two apps on the Agents SDK recorded at once in one process each keep their own model and tool calls",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () =>
    withStore(async (store, db) => {
      await using a = startFakeAgentProvider(SCRIPT);
      await using b = startFakeAgentProvider(SCRIPT);
      const [one, two] = await Promise.all([
        recorded(store, a, () => "48.2"),
        recorded(store, b, () => "51.0"),
      ]);
      for (const [outcome, answer] of [[one, "48.2"], [two, "51.0"]] as const) {
        assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
        const events = rowsOf(db, outcome.runId);
        assert.equal(events.filter((e) => e.type === "model_called").length, 3);
        const tools = events.filter((e) => e.type === "tool_called");
        assert.equal(tools.length, 1);
        const run = await store.readRun(outcome.runId);
        assert.equal(new TextDecoder().decode(await run.payload(tools[0].data.result_payload)), answer);
        assert.ok((await verifyRun(await findRun(outcome.folder), { store })).ok);
      }
    }),
});

Deno.test({
  name: "a tool of an Agents SDK app that throws is a step_failed of tool_called in its run, which verifies",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () =>
    withStore(async (store, db) => {
      await using provider = startFakeAgentProvider(SCRIPT);
      const outcome = await recorded(store, provider, () => {
        throw new Error("the ledger is closed");
      });
      const events = rowsOf(db, outcome.runId);
      const failed = events.filter((e) => e.type === "step_failed" && e.data.step === "tool_called");
      assert.equal(failed.length, 1, events.map((e) => e.type).join(" "));
      assert.equal(failed[0].data.tool, "revenue");
      assert.ok((await verifyRun(await findRun(outcome.folder), { store })).ok);
    }),
});

Deno.test({
  name:
    "an Agents SDK app's input guardrail and custom span are note_added events of its run, which verifies",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () =>
    withStore(async (store, db) => {
      await using provider = startFakeAgentProvider([]);
      const agent = new Agent({
        name: "analyst",
        instructions: "Answer.",
        inputGuardrails: [{
          name: "no_secrets",
          execute: () => Promise.resolve({ outputInfo: null, tripwireTriggered: false }),
        }],
      });
      const runner = new Runner({
        modelProvider: new OpenAIProvider({ apiKey: "sk-fake", baseURL: provider.openaiBaseUrl }),
        model: "gpt-fake",
      });
      // a custom span needs a trace: the app's own, around its run
      const outcome = await runAgentsSdk(({ prompt }) =>
        withTrace("finance", async () => {
          const answer = String((await runner.run(agent, prompt)).finalOutput ?? "");
          await withCustomSpan(() => Promise.resolve(), { data: { name: "lookup", data: { rows: 2 } } });
          return answer;
        }), {
        agent: { name: "analyst", model: "openai:gpt-fake", provider: { base_url: provider.openaiBaseUrl } },
        run: { org: "acme", domain: "demo", env: "dev", actor: "ada" },
        prompt: "What was the revenue in Q3?",
      }, { store });
      assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
      const notes = rowsOf(db, outcome.runId).filter((e) => e.type === "note_added");
      assert.deepEqual(notes.map((e) => e.data.text).sort(), [
        "custom span lookup",
        "guardrail no_secrets passed",
      ]);
      const custom = notes.find((e) => e.data.span_type === "custom");
      const run = await store.readRun(outcome.runId);
      assert.deepEqual(JSON.parse(new TextDecoder().decode(await run.payload(custom.payload))), { rows: 2 });
      assert.ok((await verifyRun(await findRun(outcome.folder), { store })).ok);
    }),
});

import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { Agent, OpenAIProvider, Runner, tool } from "@openai/agents";
import { z } from "zod";
import { findRun, openStore, verifyRun } from "../../../lib/provevi/mod.ts";
import { runAgentsSdk } from "../../../lib/provrun/mod.ts";
import { FAKE_ANSWER, startFakeAgentProvider } from "../../../fixtures/providers/fake_agent_provider.ts";

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

Deno.test({
  name:
    "an app on the OpenAI Agents SDK (a tool, a handoff) is recorded as a run whose model and tool calls are " +
    "rows of a sqlite store, that verifies, and that sent no trace to OpenAI",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "agents-sdk-" });
    await using provider = startFakeAgentProvider([
      { name: "transfer_to_analyst", input: {} },
      { name: "revenue", input: { quarter: "Q3" } },
    ]);
    // with a key set, the SDK's default exporter would send its traces to api.openai.com
    Deno.env.set("OPENAI_API_KEY", "sk-fake");
    try {
      const db = join(dir, "runs.db");
      await using store = await openStore(`sqlite:///${db}`, { runs: join(dir, "runs") });
      const revenue = tool({
        name: "revenue",
        description: "The revenue of a quarter, in millions.",
        parameters: z.object({ quarter: z.string() }),
        execute: ({ quarter }) => (quarter === "Q3" ? "48.2" : "43.0"),
      });
      const analyst = new Agent({
        name: "analyst",
        instructions: "Answer with the numbers.",
        tools: [revenue],
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
      const { value: outcome, hosts } = await hostsReached(() =>
        runAgentsSdk(
          async ({ prompt }) => String((await runner.run(triage, prompt)).finalOutput ?? ""),
          {
            agent: {
              name: "triage",
              model: "openai:gpt-fake",
              provider: { base_url: provider.openaiBaseUrl },
            },
            run: { org: "acme", domain: "demo", env: "dev", actor: "ada" },
            prompt: "What was the revenue in Q3?",
          },
          { store },
        )
      );
      assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
      assert.equal(outcome.text, FAKE_ANSWER);
      assert.deepEqual([...hosts], ["127.0.0.1"], "a request left for another host");
      const check = await verifyRun(await findRun(outcome.folder), { store });
      assert.ok(check.ok, JSON.stringify(check.problems));
      const rows = new DatabaseSync(db, { readOnly: true });
      try {
        const events = rows.prepare("SELECT type, line FROM provevi_events WHERE run_id = ? ORDER BY seq")
          .all(outcome.runId).map((r) => ({ type: String(r.type), ...JSON.parse(String(r.line)) }));
        const models = events.filter((e) => e.type === "model_called");
        assert.equal(models.length, 3, events.map((e) => e.type).join(" "));
        assert.ok(models.every((e) => e.component === "AgentsSdk" && e.data.provider === "openai"));
        assert.ok(models.every((e) => e.data.input_tokens > 0), JSON.stringify(models.map((e) => e.data)));
        const tools = events.filter((e) => e.type === "tool_called");
        assert.deepEqual(tools.map((e) => e.data.tool), ["revenue"]);
        const result = await store.readRun(outcome.runId);
        assert.equal(new TextDecoder().decode(await result.payload(tools[0].data.result_payload)), "48.2");
        const notes = events.filter((e) => e.type === "note_added").map((e) => e.data.text);
        assert.ok(notes.includes("handoff from triage to analyst"), JSON.stringify(notes));
        // the SDK's spans are steps of the run's trace: a tool call's parent is the analyst's agent span
        const root = events.find((e) => e.type === "run_created").trace_id;
        assert.ok([...models, ...tools].every((e) => e.trace_id === root));
      } finally {
        rows.close();
      }
      assert.ok(provider.requests.some((r) => r.path.endsWith("/responses")), "the SDK spoke Responses");
    } finally {
      Deno.env.delete("OPENAI_API_KEY");
      await Deno.remove(dir, { recursive: true });
    }
  },
});

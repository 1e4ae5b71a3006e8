/**
 * Runs whose model calls the model gateway recorded build into the trace database like any run: each call a row
 * of `trace_model_calls` with its messages read from the provider's own bodies (Anthropic's Messages, OpenAI's
 * Responses), its tokens and its cost; the tool calls joined to the call that asked for them; the run's cost.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { startFakeAgentProvider } from "../../../fixtures/providers/fake_agent_provider.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";
import { buildTrace } from "../../../lib/provtrace/build/build.ts";

for (
  const [route, url] of [["anthropic:claude-sonnet-4-5", "url"], ["openai:gpt-5", "openaiBaseUrl"]] as const
) {
  Deno.test(`provtrace builds a run through the model gateway (${route}): calls, messages, tool calls joined, costs`, async () => {
    await using provider = startFakeAgentProvider([{ name: "note", input: { text: "Q3 is up" } }], {
      usage: { input: 2000, output: 300, cacheRead: 1000, reasoning: 100 },
    });
    const root = await Deno.makeTempDir({ prefix: "provtrace-gateway-" });
    try {
      const runs = join(root, "runs");
      const outcome = await runFile(
        RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada }
agent:
  name: analyst
  backend: agent
  model: ${route}
  provider: { base_url: ${JSON.stringify(provider[url])}, api_key_env: PROVR_KEY_FAKE }
  gateway: true
  stream: true
  tools: [note]
prompt: What was the revenue growth in Q3?
`),
        { runs, env: (n) => (n === "PROVR_KEY_FAKE" ? "sk-fake" : undefined) },
      );
      assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
      const db = join(root, "trace.db");
      const built = await buildTrace({ store: "file", runs, db });
      assert.deepEqual([built.added.map((r) => r.verified), built.refused], [[true], []]);
      const sql = new DatabaseSync(db, { readOnly: true });
      try {
        const calls = sql.prepare(
          "SELECT message_format, input_tokens, cache_read_input_tokens, reasoning_tokens, cost FROM trace_model_calls ORDER BY seq",
        ).all() as Record<string, unknown>[];
        assert.equal(calls.length, 2);
        assert.ok(
          calls.every((c) => c.message_format === (route.startsWith("anthropic") ? "anthropic" : "openai")),
        );
        assert.ok(
          calls.every((c) => typeof c.cost === "string" && Number(c.cost) > 0),
          JSON.stringify(calls),
        );
        const sent = sql.prepare(
          "SELECT count(*) AS n FROM trace_call_messages WHERE direction = 'sent'",
        ).get() as { n: number };
        assert.ok(sent.n >= 2, "the request's messages are read from the provider's body");
        const tool = sql.prepare("SELECT tool, model_span_id, deferred FROM trace_tool_calls")
          .all() as Record<string, unknown>[];
        assert.equal(tool.length, 1);
        assert.equal(tool[0]!.deferred, 0);
        assert.ok(tool[0]!.model_span_id, "the tool call is joined to the call that asked for it");
        const run = sql.prepare("SELECT cost, currency FROM trace_runs").get() as Record<string, unknown>;
        const sum = calls.reduce((n, c) => n + Number(c.cost), 0);
        assert.equal(run.currency, "USD");
        assert.ok(Math.abs(Number(run.cost) - sum) < 1e-12);
        const answer = sql.prepare(
          "SELECT m.content FROM trace_call_messages cm JOIN trace_messages m ON m.hash = cm.message_hash WHERE cm.direction = 'received' AND m.part_kind = 'text'",
        ).all() as { content: string }[];
        assert.ok(answer.some((a) => a.content.includes("Revenue grew 12% in Q3.")));
      } finally {
        sql.close();
      }
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  });
}

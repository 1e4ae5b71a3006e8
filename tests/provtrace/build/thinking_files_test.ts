import assert from "node:assert/strict";
import { join } from "node:path";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";
import { buildTrace } from "../../../lib/provtrace/build/build.ts";
import { exportTrace } from "../../../lib/provtrace/export/export.ts";
import {
  FAKE_ANTHROPIC_REPLY,
  startFakeAnthropic,
} from "../../../fixtures/providers/fake_anthropic_server.ts";
import { git, gitCatalog } from "../../provrun/_catalog.ts";
import { ask } from "../_runs.ts";
import { sha256Hex } from "../../../lib/provevi/evidence/hash.ts";

// A real PNG: the 1×1 transparent pixel.
const PNG = Uint8Array.from(
  atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="),
  (c) => c.charCodeAt(0),
);

Deno.test("a run with thinking parts and a file: the AI SDK's Anthropic provider, its cache tokens counted in input_tokens", async () => {
  await using server = startFakeAnthropic();
  Deno.env.set("ANTHROPIC_BASE_URL", server.baseUrl);
  Deno.env.set("ANTHROPIC_API_KEY", "sk-ant-test");
  await using t = await gitCatalog({ "finance/revenue.csv": "quarter,revenue\nQ3,48.2\n" });
  await Deno.writeFile(join(t.repo, "finance", "chart.png"), PNG);
  await git(t.repo, "add", "-A");
  await git(t.repo, "commit", "-q", "-m", "chart");
  const file = RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada, mode: strict }
agent:
  name: chart-reader
  backend: call
  model: anthropic:claude-fake
  instructions: Read the chart.
prompt: What does the chart show?
inputs:
  - { uri: "data://acme/demo/dev/finance/chart.png", as: chart.png }
outputs: [answer.txt]
`);
  const outcome = await runFile(file, { catalog: t.catalog, runs: t.runs });
  Deno.env.delete("ANTHROPIC_BASE_URL");
  Deno.env.delete("ANTHROPIC_API_KEY");
  assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
  assert.equal(server.bodies.length, 1);
  const db = join(t.root, "trace.db");
  const built = await buildTrace({ store: "file", runs: t.runs, db, catalog: t.catalog });
  assert.deepEqual(built.refused, []);

  const parts = ask(
    db,
    `
    SELECT cm.direction, m.role, m.part_kind, m.text, m.content FROM trace_call_messages cm
      JOIN trace_messages m ON m.hash = cm.message_hash ORDER BY cm.direction DESC, cm.position`,
  ).rows;
  assert.deepEqual(parts.map((p) => [p.direction, p.role, p.part_kind]), [
    ["sent", "system", "text"],
    ["sent", "user", "text"],
    ["sent", "user", "file"],
    ["received", "assistant", "thinking"],
    ["received", "assistant", "text"],
  ]);
  assert.equal(parts[3]!.text, FAKE_ANTHROPIC_REPLY.thinking);
  assert.equal(parts[4]!.text, FAKE_ANTHROPIC_REPLY.text);
  const image = JSON.parse(String(parts[2]!.content));
  assert.equal(image.media_type, "image/png");
  assert.equal(image.filename, "chart.png");
  // The file's bytes are a payload of the run, named by their SHA-256, not copied into the database.
  assert.equal(image.sha256, sha256Hex(PNG));

  const call = ask(db, "SELECT * FROM trace_model_calls").rows[0]!;
  const u = FAKE_ANTHROPIC_REPLY.usage;
  assert.equal(call.provider, "anthropic.messages");
  assert.equal(call.answered_by, "claude-fake-20261101");
  assert.equal(call.input_tokens, u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens);
  assert.equal(call.cache_read_input_tokens, u.cache_read_input_tokens);
  assert.equal(call.cache_creation_input_tokens, u.cache_creation_input_tokens);
  assert.equal(call.total_tokens, Number(call.input_tokens) + u.output_tokens);

  // The steps export keeps the thinking; the OpenAI chat format has no place for it.
  const [step] = (await exportTrace(db, { runs: t.runs, kind: "steps", catalog: t.catalog })).lines;
  assert.deepEqual((step!.action as { kind: string }[]).map((p) => p.kind), ["thinking", "text"]);
  const [sft] = (await exportTrace(db, { runs: t.runs, kind: "sft", catalog: t.catalog })).lines;
  assert.deepEqual(sft!.messages, [
    { role: "system", content: "Read the chart." },
    {
      role: "user",
      content: [
        { type: "text", text: "What does the chart show?" },
        { type: "file", file: { filename: "chart.png", sha256: sha256Hex(PNG), url: null } },
      ],
    },
    { role: "assistant", content: FAKE_ANTHROPIC_REPLY.text },
  ]);
});

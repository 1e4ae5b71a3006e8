import assert from "node:assert/strict";
import { FileRunRecord } from "../../../lib/provevi/store/file_run_record.ts";
import { join } from "node:path";
import { findRun } from "../../../lib/provevi/runs/find_run.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";
import { FAKE_ANSWER, startFakeAgentProvider } from "../../../fixtures/providers/fake_agent_provider.ts";
import { gitCatalog } from "../_catalog.ts";
import { eventsOf, needed, program, receivedSpans, spanRows } from "./_programs.ts";
import { peerTest } from "../../_peers.ts";

const CLAUDE = program("claude-code");
const CSV = "quarter,revenue\nQ2,43.0\nQ3,48.2\n";

function claudeRun(claude: string, baseUrl: string, extra = ""): RunFile {
  return RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada, mode: strict }
agent:
  name: analyst
  backend: claude-code
  program: ${JSON.stringify(claude)}
  model: anthropic:claude-sonnet-4-5
  provider: { base_url: ${JSON.stringify(baseUrl)}, api_key_env: FAKE_ANTHROPIC_KEY }
  limits: { seconds: 120 }
${extra}
prompt: What was the revenue growth in Q3? Write it to output/answer.md.
inputs:
  - { uri: "data://acme/demo/dev/finance/revenue.csv", as: revenue.csv }
outputs: [answer.md]
`);
}

peerTest("claude-code", {
  name:
    "a claude-code run records the real Claude Code's hooks, spans and transcript, blocks a read outside " +
    "its grants, and verifies",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const claude = needed(CLAUDE.path, "PROVRUN_TEST_CLAUDE");
    await using provider = startFakeAgentProvider([
      { name: "Read", input: { file_path: "{cwd}/input/revenue.csv" } },
      { name: "Read", input: { file_path: "/etc/hostname" } },
      { name: "Write", input: { file_path: "{cwd}/output/answer.md", content: FAKE_ANSWER + "\n" } },
    ]);
    await using t = await gitCatalog({ "finance/revenue.csv": CSV });
    const outcome = await runFile(claudeRun(claude, provider.url, "  raw_bodies: true"), {
      catalog: t.catalog,
      runs: t.runs,
      env: (n) => (n === "FAKE_ANTHROPIC_KEY" ? "sk-fake" : Deno.env.get(n)),
    });
    assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
    assert.equal(outcome.text, FAKE_ANSWER);
    const events = await eventsOf(t.runs, outcome.runId);
    const types = events.map((e) => e.type);
    const started = events.find((e) => e.type === "sandbox_started")!;
    assert.equal(started.data.backend, "claude-code");
    assert.deepEqual((started.data.hooks as { blocking: string[] }).blocking, ["PreToolUse"]);
    // each hook event is one evidence event; the read outside the grants was refused before it ran
    const hooks = events.filter((e) => e.type === "hook_called");
    const pre = hooks.filter((e) => e.data.event === "PreToolUse");
    assert.deepEqual(pre.map((e) => [e.data.tool, e.data.decision]), [
      ["Read", "allow"],
      ["Read", "deny"],
      ["Write", "allow"],
    ]);
    assert.match(String(pre[1]!.data.reason), /\/etc\/hostname is outside the folders this run may read/);
    assert.ok(
      hooks.some((e) => e.data.event === "PostToolUse"),
      JSON.stringify(hooks.map((e) => e.data.event)),
    );
    assert.ok(hooks.some((e) => e.data.event === "SessionStart"));
    // the model saw the refusal as the tool's result
    const lastRequest = provider.requests.filter((r) => r.path.endsWith("/messages")).at(-1)!.body;
    assert.match(lastRequest, /outside the folders this run may read/);
    // the transcript is in the chain as raw bytes, and the raw model bodies as payloads
    const transcripts = events.filter((e) => e.type === "trace_imported" && e.data.kind === "transcript");
    assert.ok(transcripts.length >= 1, types.join(" "));
    assert.equal(transcripts[0]!.confidence, "parsed");
    const text = new TextDecoder().decode(
      await new FileRunRecord(outcome.runId, outcome.folder).payload(transcripts[0]!.payload!),
    );
    assert.match(text, /toolu_fake_/);
    assert.ok(events.some((e) => e.type === "trace_imported" && e.data.kind === "raw_api_body"));
    // Claude Code's spans reached the run's receiver and joined the run's trace
    const spans = await receivedSpans(t.runs, outcome.runId);
    assert.ok(spans.length >= 1, `no spans reached the receiver: ${types.join(" ")}`);
    const traceId = events.find((e) => e.type === "run_created")!.trace_id;
    assert.ok(spans.every((s) => s.traceId === traceId), "a span of Claude Code is outside the run's trace");
    assert.ok(
      (await spanRows(outcome.folder)).some((s) =>
        s.trace_id === traceId && s.name.startsWith("claude_code")
      ),
    );
    const out = events.find((e) => e.type === "output_artifact_created")!;
    assert.equal(out.data.path, "answer.md");
    assert.equal(await Deno.readTextFile(join(outcome.folder, "output", "answer.md")), FAKE_ANSWER + "\n");
    assert.equal(types.at(-1), "run_completed");
    const check = await verifyRun(await findRun(outcome.folder));
    assert.ok(check.ok, JSON.stringify(check.problems));
  },
});

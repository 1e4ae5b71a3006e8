import assert from "node:assert/strict";
import { FileRunRecord } from "../../../lib/provevi/store/file_run_record.ts";
import { join } from "node:path";
import { findRun } from "../../../lib/provevi/runs/find_run.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { sha256Hex } from "../../../lib/provevi/evidence/hash.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";
import { FAKE_ANSWER, startFakeAgentProvider } from "../../../fixtures/providers/fake_agent_provider.ts";
import { gitCatalog } from "../_catalog.ts";
import { eventsOf, needed, program, receivedSpans, spanRows } from "./_programs.ts";
import { peerTest } from "../../_peers.ts";

const CODEX = program("codex");
const CSV = "quarter,revenue\nQ2,43.0\nQ3,48.2\n";

function codexRun(codex: string, baseUrl: string): RunFile {
  return RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada, mode: strict }
agent:
  name: analyst
  backend: codex
  program: ${JSON.stringify(codex)}
  model: openai:gpt-fake
  provider: { base_url: ${JSON.stringify(baseUrl)}, api_key_env: FAKE_OPENAI_KEY }
  allow_unsandboxed: [Bash]
  limits: { seconds: 120 }
prompt: What was the revenue growth in Q3? Write it to output/answer.md.
inputs:
  - { uri: "data://acme/demo/dev/finance/revenue.csv", as: revenue.csv }
outputs: [answer.md]
`);
}

peerTest("codex", {
  name:
    "a codex run records the real Codex's hooks, spans and rollout, blocks a command outside its grants, " +
    "and verifies",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const codex = needed(CODEX.path, "PROVRUN_TEST_CODEX");
    await using provider = startFakeAgentProvider([
      { name: "exec_command", input: { cmd: "cat input/revenue.csv" } },
      { name: "exec_command", input: { cmd: "cat /etc/hostname" } },
      { name: "exec_command", input: { cmd: `echo '${FAKE_ANSWER}' > output/answer.md` } },
    ]);
    await using t = await gitCatalog({ "finance/revenue.csv": CSV });
    const outcome = await runFile(codexRun(codex, provider.openaiBaseUrl), {
      catalog: t.catalog,
      runs: t.runs,
      env: (n) => (n === "FAKE_OPENAI_KEY" ? "sk-fake" : Deno.env.get(n)),
    });
    assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
    assert.equal(outcome.text, FAKE_ANSWER);
    const events = await eventsOf(t.runs, outcome.runId);
    const types = events.map((e) => e.type);
    const started = events.find((e) => e.type === "sandbox_started")!;
    assert.equal(started.data.backend, "codex");
    assert.deepEqual((started.data.hooks as { blocking: string[] }).blocking, ["PreToolUse"]);
    // The hooks live in a file a command of Codex's own sandbox can write: the run says so.
    assert.ok(
      (started.data.gaps as string[]).some((g) =>
        g.includes(".codex, the config home that holds the hooks, read-only")
      ),
    );
    const hooks = events.filter((e) => e.type === "hook_called");
    const pre = hooks.filter((e) => e.data.event === "PreToolUse");
    assert.deepEqual(
      pre.map((e) => e.data.decision),
      ["allow", "deny", "allow"],
      JSON.stringify(pre.map((e) => e.data)),
    );
    assert.match(String(pre[1]!.data.reason), /\/etc\/hostname is outside the folders this run may read/);
    assert.ok(
      hooks.some((e) => e.data.event === "SessionStart"),
      JSON.stringify(hooks.map((e) => e.data.event)),
    );
    assert.ok(hooks.some((e) => e.data.event === "Stop"));
    // the model saw the refusal, and never the host name
    const bodies = provider.requests.filter((r) => r.path.endsWith("/responses")).map((r) => r.body).join(
      "\n",
    );
    assert.match(bodies, /outside the folders this run may read/);
    assert.match(bodies, /Q3,48\.2/);
    // the rollout is in the chain as raw bytes
    const rollouts = events.filter((e) => e.type === "trace_imported" && e.data.kind === "rollout");
    assert.equal(rollouts.length, 1, types.join(" "));
    const rollout = new TextDecoder().decode(
      await new FileRunRecord(outcome.runId, outcome.folder).payload(rollouts[0]!.payload!),
    );
    assert.match(rollout, /call_fake_/);
    // Codex's traces reached the run's receiver
    const spans = await receivedSpans(t.runs, outcome.runId);
    assert.ok(spans.length >= 1, `no spans reached the receiver: ${types.join(" ")}`);
    assert.ok((await spanRows(outcome.folder)).length >= spans.length);
    // TRACEPARENT joins its session's spans to the run's trace (a few of its start-up spans come before it)
    const traceId = events.find((e) => e.type === "run_created")!.trace_id;
    assert.ok(spans.some((s) => s.traceId === traceId), "no span of Codex is in the run's trace");
    assert.equal(await Deno.readTextFile(join(outcome.folder, "output", "answer.md")), FAKE_ANSWER + "\n");
    assert.ok(events.some((e) => e.type === "output_artifact_created" && e.data.path === "answer.md"));
    assert.equal(types.at(-1), "run_completed");
    const check = await verifyRun(await findRun(outcome.folder));
    assert.ok(check.ok, JSON.stringify(check.problems));
  },
});

peerTest("codex", {
  name:
    "a codex run whose task rewrites the config that holds its hooks is stopped by Codex's sandbox: the config " +
    "stays as provr wrote it, later tool calls still reach the hooks, and the run completes",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const codex = needed(CODEX.path, "PROVRUN_TEST_CODEX");
    await using provider = startFakeAgentProvider([
      { name: "exec_command", input: { cmd: `printf '\\n[hooks]\\n' >> .codex/config.toml; echo rc=$?` } },
      { name: "exec_command", input: { cmd: `rm -f .codex/config.toml; echo rc=$?` } },
      { name: "exec_command", input: { cmd: `echo '${FAKE_ANSWER}' > output/answer.md` } },
    ]);
    await using t = await gitCatalog({ "finance/revenue.csv": CSV });
    const outcome = await runFile(codexRun(codex, provider.openaiBaseUrl), {
      catalog: t.catalog,
      runs: t.runs,
      env: (n) => (n === "FAKE_OPENAI_KEY" ? "sk-fake" : Deno.env.get(n)),
    });
    assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
    const events = await eventsOf(t.runs, outcome.runId);
    const started = events.find((e) => e.type === "sandbox_started")!;
    assert.equal(started.data.config_home, ".codex");
    const guarded = started.data.guarded as Record<string, string | null>;
    const config = await Deno.readFile(join(outcome.folder, ".codex", "config.toml"));
    assert.equal(guarded[".codex/config.toml"], sha256Hex(config), "the config is as provr wrote it");
    // each command was allowed by the broker (it names no path outside the run) and failed in Codex's sandbox
    const pre = events.filter((e) => e.type === "hook_called" && e.data.event === "PreToolUse");
    assert.deepEqual(pre.map((e) => e.data.decision), ["allow", "allow", "allow"]);
    const bodies = provider.requests.filter((r) => r.path.endsWith("/responses")).map((r) => r.body).join(
      "\n",
    );
    assert.match(bodies, /Read-only file system|Permission denied|Operation not permitted/);
    assert.equal(await Deno.readTextFile(join(outcome.folder, "output", "answer.md")), FAKE_ANSWER + "\n");
    const check = await verifyRun(await findRun(outcome.folder));
    assert.ok(check.ok, JSON.stringify(check.problems));
  },
});

import assert from "node:assert/strict";
import { findRun } from "../../../lib/provevi/runs/find_run.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";
import { startFakeAgentProvider } from "../../../fixtures/providers/fake_agent_provider.ts";
import { removeWritable } from "../../_files.ts";
import { eventsOf, needed, program } from "./_programs.ts";
import { peerTest } from "../../_peers.ts";

const CLAUDE = program("claude-code");

peerTest("claude-code", {
  name:
    "a claude-code run past limits.seconds stops the real Claude Code and fails with CancelledError, and verifies",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const claude = needed(CLAUDE.path, "PROVRUN_TEST_CLAUDE");
    await using provider = startFakeAgentProvider([], { delayMs: 120_000 });
    const runs = await Deno.makeTempDir({ prefix: "provrun-claude-cancel-" });
    try {
      const file = RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada }
agent:
  name: slow
  backend: claude-code
  program: ${JSON.stringify(claude)}
  model: anthropic:claude-sonnet-4-5
  provider: { base_url: ${JSON.stringify(provider.url)}, api_key_env: FAKE_ANTHROPIC_KEY }
  limits: { seconds: 4 }
prompt: Take your time.
`);
      const outcome = await runFile(file, {
        runs,
        env: (n) => (n === "FAKE_ANTHROPIC_KEY" ? "sk-fake" : Deno.env.get(n)),
      });
      assert.equal(outcome.status, "failed");
      assert.equal(outcome.error?.name, "CancelledError");
      assert.match(outcome.error!.message, /limit of 4 seconds/);
      const events = await eventsOf(runs, outcome.runId);
      const done = events.find((e) => e.type === "sandbox_completed")!;
      assert.equal(done.data.status, "failed");
      assert.ok(
        done.data.signal === "SIGTERM" || done.data.signal === "SIGKILL" || done.data.exit_code !== 0,
      );
      assert.equal(events.at(-1)!.type, "run_failed");
      const check = await verifyRun(await findRun(outcome.folder));
      assert.ok(check.ok, JSON.stringify(check.problems));
    } finally {
      await removeWritable(runs);
    }
  },
});

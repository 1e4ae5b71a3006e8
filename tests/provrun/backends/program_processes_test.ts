/**
 * An agent program runs in a process group of its own, watched by the reaper: when provr is killed with
 * SIGKILL mid-run (no chance to stop anything), the program dies with it, and the run shows as cut.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startFakeAgentProvider } from "../../../fixtures/providers/fake_agent_provider.ts";
import { removeWritable } from "../../_files.ts";
import { needed, program } from "./_programs.ts";
import { alive, descendants, taskFlags } from "../../_children.ts";
import { peerTest } from "../../_peers.ts";

const CLAUDE = program("claude-code");
const ROOT = new URL("../../../", import.meta.url).pathname;

peerTest("claude-code", {
  name:
    "provr killed with SIGKILL while Claude Code runs: the program dies with it (the reaper kills its group)",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const path = needed(CLAUDE.path, "PROVRUN_TEST_CLAUDE");
    // the model never answers: Claude Code waits on it until provr is killed
    await using provider = startFakeAgentProvider([], { delayMs: 120_000 });
    const dir = await Deno.makeTempDir({ prefix: "provrun-claude-killed-" });
    const file = join(dir, "run.yaml");
    await Deno.writeTextFile(
      file,
      `run: { org: acme, domain: demo, env: dev, actor: ada }
agent:
  name: waiter
  backend: claude-code
  program: ${JSON.stringify(path)}
  model: anthropic:claude-sonnet-4-5
  provider: { base_url: ${JSON.stringify(provider.url)}, api_key_env: PROVR_KEY_FAKE }
  limits: { seconds: 120 }
prompt: Wait.
`,
    );
    const flags = taskFlags("provr", [path]);
    const provr = new Deno.Command(Deno.execPath(), {
      args: ["run", ...flags, join(ROOT, "cli/provr.ts"), "--runs", join(dir, "runs"), "run", file],
      cwd: dir,
      env: { PROVR_KEY_FAKE: "sk-fake" },
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const stderr = new Response(provr.stderr).text();
    let seen: { pid: number; cmd: string }[] = [];
    try {
      const until = Date.now() + 90_000;
      // until the program has asked its model
      while (provider.requests.filter((r) => r.method === "POST").length === 0) {
        if (Date.now() > until) {
          provr.kill("SIGKILL");
          assert.fail(`Claude Code never asked its model: ${await stderr}`);
        }
        await new Promise((r) => setTimeout(r, 200));
      }
      seen = descendants(provr.pid).filter((p) => !p.cmd.includes("data:"));
      assert.ok(seen.some((p) => p.cmd.includes("claude")), JSON.stringify(seen));
      provr.kill("SIGKILL");
      await provr.status;
      const deadline = Date.now() + 60_000; // generous: a busy machine is slow to reap
      while (Date.now() < deadline && seen.some((p) => alive(p.pid))) {
        await new Promise((r) => setTimeout(r, 100));
      }
      const left = seen.filter((p) => alive(p.pid));
      assert.deepEqual(left, [], "a process of the program outlived provr");
    } finally {
      for (const p of seen) {
        try {
          Deno.kill(p.pid, "SIGKILL");
        } catch { /* gone */ }
      }
      await stderr.catch(() => "");
      await removeWritable(dir);
    }
  },
});

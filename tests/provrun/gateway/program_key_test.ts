/**
 * The provider key never enters an agent program: the program gets the run's token, which only the gateway
 * takes. Claude Code and Codex each dump their environment from their own shell tool, Claude Code also asks the
 * gateway without the token; then every file of the run folder (the program's config home, its session files,
 * the evidence, the outputs) is searched for the key.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startFakeAgentProvider } from "../../../fixtures/providers/fake_agent_provider.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";
import { removeWritable } from "../../_files.ts";
import { needed, program } from "../backends/_programs.ts";
import { peerTest } from "../../_peers.ts";

const CLAUDE = program("claude-code");
const CODEX = program("codex");
const KEY = "sk-ant-real-0123456789abcdef-never-in-the-program";

/** Every file under a folder that holds the text, by its path relative to the folder. */
async function holding(folder: string, text: string): Promise<string[]> {
  const found: string[] = [];
  const needle = new TextEncoder().encode(text);
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(dir)) {
      const p = join(dir, e.name);
      if (e.isDirectory) await walk(p);
      else if (e.isFile) {
        const bytes = await Deno.readFile(p);
        outer: for (let i = 0; i + needle.length <= bytes.length; i++) {
          for (let j = 0; j < needle.length; j++) if (bytes[i + j] !== needle[j]) continue outer;
          found.push(p.slice(folder.length + 1));
          break;
        }
      }
    }
  };
  await walk(folder);
  return found;
}

function runText(backend: string, path: string, baseUrl: string, model: string): RunFile {
  return RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada }
agent:
  name: key-keeper
  backend: ${backend}
  program: ${JSON.stringify(path)}
  model: ${model}
  provider: { base_url: ${JSON.stringify(baseUrl)}, api_key_env: PROVR_KEY_REAL }
  allow_unsandboxed: [Bash]
  limits: { seconds: 180 }
prompt: Show your environment.
`);
}

peerTest("claude-code", {
  name:
    "Claude Code gets the run's token, never the key: its environment, config home, command line and the evidence hold no key, and the gateway refuses it a request without the token",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const path = needed(CLAUDE.path, "PROVRUN_TEST_CLAUDE");
    const command =
      `env > output/env.txt; curl -s -o output/no-token-body.json -w '%{http_code}' -X POST -H 'content-type: application/json' ` +
      `--data '{"model":"claude-sonnet-4-5","max_tokens":1,"messages":[]}' "$ANTHROPIC_BASE_URL/v1/messages" > output/no-token.txt`;
    await using provider = startFakeAgentProvider([{
      name: "Bash",
      input: { command, description: "dump" },
    }]);
    const runs = await Deno.makeTempDir({ prefix: "gateway-key-" });
    try {
      const outcome = await runFile(
        runText("claude-code", path, provider.url, "anthropic:claude-sonnet-4-5"),
        {
          runs,
          env: (n) => (n === "PROVR_KEY_REAL" ? KEY : Deno.env.get(n)),
        },
      );
      assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
      const env = await Deno.readTextFile(join(outcome.folder, "output", "env.txt"));
      assert.match(
        env,
        /^ANTHROPIC_API_KEY=provr-run-[0-9a-f]{64}$/m,
        "the program's key is the run's token",
      );
      assert.match(env, /^ANTHROPIC_BASE_URL=http:\/\/127\.0\.0\.1:\d+$/m);
      assert.equal(await Deno.readTextFile(join(outcome.folder, "output", "no-token.txt")), "401");
      const refusal = JSON.parse(
        await Deno.readTextFile(join(outcome.folder, "output", "no-token-body.json")),
      );
      assert.equal(refusal.error.type, "authentication_error");
      assert.ok(provider.requests.every((r) => r.key === KEY));
      assert.deepEqual(await holding(outcome.folder, KEY), [], "no file of the run holds the key");
      assert.deepEqual(await holding(outcome.folder, KEY.slice(8, 30)), []);
    } finally {
      await removeWritable(runs);
    }
  },
});

peerTest("codex", {
  name:
    "Codex gets the run's token, never the key: its environment, config home, command line and the evidence hold no key",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const path = needed(CODEX.path, "PROVRUN_TEST_CODEX");
    await using provider = startFakeAgentProvider([{
      name: "exec_command",
      input: { cmd: "env > output/env.txt" },
    }]);
    const runs = await Deno.makeTempDir({ prefix: "gateway-key-" });
    try {
      const outcome = await runFile(runText("codex", path, provider.openaiBaseUrl, "openai:gpt-5"), {
        runs,
        env: (n) => (n === "PROVR_KEY_REAL" ? KEY : Deno.env.get(n)),
      });
      assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
      const env = await Deno.readTextFile(join(outcome.folder, "output", "env.txt"));
      assert.match(env, /^CODEX_HOME=/m, "the dump is Codex's shell's environment");
      assert.ok(!env.includes(KEY));
      assert.match(
        await Deno.readTextFile(join(outcome.folder, ".codex", "config.toml")),
        /base_url = "http:\/\/127\.0\.0\.1:\d+\/v1"/,
      );
      assert.ok(provider.requests.every((r) => r.key === KEY));
      assert.deepEqual(await holding(outcome.folder, KEY), [], "no file of the run holds the key");
    } finally {
      await removeWritable(runs);
    }
  },
});

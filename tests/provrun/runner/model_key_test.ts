import assert from "node:assert/strict";
import { join } from "node:path";
import { checkModelKey, routeKeyName } from "../../../lib/provrun/backends/models.ts";
import { ModelKeyMissing } from "../../../lib/provrun/run/errors.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { permissionNeeds } from "../../../lib/provrun/runner/permissions.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";

const NO_KEYS = () => undefined;

function file(agent: string): RunFile {
  return RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada }
agent: ${agent}
prompt: What was the revenue growth?
`);
}

/** Every backend that needs a key, with the variable it reads and the line the refusal gives. */
const NEEDS_A_KEY: { agent: string; variable: string; line: RegExp }[] = [
  {
    agent: `{ name: q, backend: call, model: "openai:gpt-4o-mini" }`,
    variable: "OPENAI_API_KEY",
    line:
      /^the model route openai:gpt-4o-mini needs the variable OPENAI_API_KEY; set it, or use a test: model$/,
  },
  {
    agent: `{ name: q, backend: agent, model: "anthropic:claude-sonnet-4-5" }`,
    variable: "ANTHROPIC_API_KEY",
    line: /^the model route anthropic:claude-sonnet-4-5 needs the variable ANTHROPIC_API_KEY; set it/,
  },
  {
    agent:
      `{ name: q, backend: call, model: "openai-compatible:llama3.1", provider: { base_url: "http://127.0.0.1:11434/v1", api_key_env: PROVR_KEY_OLLAMA } }`,
    variable: "PROVR_KEY_OLLAMA",
    line: /^the model route openai-compatible:llama3\.1 needs the variable PROVR_KEY_OLLAMA; set it/,
  },
  {
    agent:
      `{ name: q, backend: claude-code, model: "anthropic:claude-sonnet-4-5", program: /nonexistent/claude }`,
    variable: "ANTHROPIC_API_KEY",
    line:
      /^the claude-code backend's model anthropic:claude-sonnet-4-5 needs the variable ANTHROPIC_API_KEY, which is not set; set it for provr/,
  },
  {
    agent:
      `{ name: q, backend: codex, model: "openai:gpt-5", program: /nonexistent/codex, provider: { base_url: "http://127.0.0.1:9/v1", api_key_env: PROVR_KEY_CODEX } }`,
    variable: "PROVR_KEY_CODEX",
    line: /^the codex backend's model openai:gpt-5 needs the variable PROVR_KEY_CODEX, which is not set/,
  },
];

for (const { agent, variable, line } of NEEDS_A_KEY) {
  const backend = agent.match(/backend: ([a-z-]+)/)![1];
  Deno.test(`${backend === "agent" ? "an" : "a"} ${backend} run whose key ${variable} is not set is refused before it starts, in one line, with no run folder`, async () => {
    const runs = await Deno.makeTempDir({ prefix: "provrun-key-" });
    try {
      const error = await runFile(file(agent), { runs, env: NO_KEYS }).then(
        () => assert.fail("the run started"),
        (e) => e,
      );
      assert.ok(error instanceof ModelKeyMissing, String(error));
      assert.equal(error.exitCode, 1);
      assert.match(error.message, line);
      assert.equal(error.message.split("\n").length, 1);
      assert.deepEqual(await Array.fromAsync(Deno.readDir(runs)), []);
      assert.equal(routeKeyName(file(agent).data.agent), variable);
      // the permission check before the run asks for the variable too
      assert.ok(
        permissionNeeds(file(agent), { runs }).some((n) => n.flag === `--allow-env=${variable}`),
        variable,
      );
    } finally {
      await Deno.remove(runs, { recursive: true });
    }
  });
}

Deno.test("a test: model and an openai-compatible route without api_key_env need no key", async () => {
  const runs = await Deno.makeTempDir({ prefix: "provrun-key-" });
  try {
    const scripted = file(`{ name: q, backend: call, model: "test:", script: { turns: [{ text: "12%" }] } }`);
    assert.equal(routeKeyName(scripted.data.agent), null);
    const outcome = await runFile(scripted, { runs, env: NO_KEYS });
    assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
    const open = file(
      `{ name: q, backend: call, model: "openai-compatible:llama3.1", provider: { base_url: "http://127.0.0.1:11434/v1" } }`,
    );
    assert.equal(routeKeyName(open.data.agent), null);
    checkModelKey(open.data.agent, NO_KEYS);
    assert.ok(!permissionNeeds(open, { runs }).some((n) => n.descriptor.name === "env"));
  } finally {
    await Deno.remove(runs, { recursive: true });
  }
});

Deno.test("checkModelKey() takes an empty variable as unset, and a variable it may not read as unset", () => {
  const agent = { model: "openai:gpt-4o" };
  assert.throws(() => checkModelKey(agent, () => ""), ModelKeyMissing);
  assert.throws(
    () =>
      checkModelKey(agent, () => {
        throw new Deno.errors.NotCapable('Requires env access to "OPENAI_API_KEY"');
      }),
    ModelKeyMissing,
  );
  checkModelKey(agent, (name) => (name === "OPENAI_API_KEY" ? "sk-x" : undefined));
});

Deno.test("a run with its key set starts: a missing program fails the run, not the start", async () => {
  const runs = await Deno.makeTempDir({ prefix: "provrun-key-" });
  try {
    const agent = NEEDS_A_KEY[3]!.agent;
    const outcome = await runFile(file(agent), {
      runs,
      env: (name) => (name === "ANTHROPIC_API_KEY" ? "sk-fake" : undefined),
    });
    assert.equal(outcome.status, "failed");
    assert.match(outcome.error!.message, /cannot start \/nonexistent\/claude/);
    assert.ok((await Deno.stat(join(runs, outcome.runId))).isDirectory);
  } finally {
    await Deno.remove(runs, { recursive: true });
  }
});

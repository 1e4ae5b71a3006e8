import assert from "node:assert/strict";
import { join } from "node:path";
import { findRun } from "../../../lib/provevi/runs/find_run.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";
import { claudeTokens, codexSteps, codexTokens } from "../../../lib/provrun/backends/_program_files.ts";
import { startFakeAgentProvider } from "../../../fixtures/providers/fake_agent_provider.ts";
import { removeWritable } from "../../_files.ts";
import { eventsOf, needed, program } from "./_programs.ts";
import { peerTest } from "../../_peers.ts";

const CLAUDE = program("claude-code");
const CODEX = program("codex");

Deno.test("claudeTokens() counts each assistant message of a transcript once; codexTokens() takes a rollout's last total", async () => {
  const dir = await Deno.makeTempDir({ prefix: "provrun-tokens-" });
  try {
    const usage = { input_tokens: 100, cache_read_input_tokens: 20, output_tokens: 5 };
    const transcript = join(dir, "t.jsonl");
    await Deno.writeTextFile(
      transcript,
      [
        { type: "user", message: { role: "user", content: "hi" } },
        // one message written as two lines (two content blocks), then its final usage
        { type: "assistant", message: { id: "msg_1", usage } },
        { type: "assistant", message: { id: "msg_1", usage: { ...usage, output_tokens: 30 } } },
        { type: "assistant", message: { id: "msg_2", usage } },
      ].map((l) => JSON.stringify(l)).join("\n") + '\n{"type":"assistant","mess', // a torn last line
    );
    assert.equal(await claudeTokens([transcript]), 150 + 125);
    const rollout = join(dir, "r.jsonl");
    const count = (input: number, output: number) => ({
      type: "event_msg",
      payload: {
        type: "token_count",
        info: { total_token_usage: { input_tokens: input, output_tokens: output } },
      },
    });
    await Deno.writeTextFile(
      rollout,
      [count(10, 1), { type: "event_msg", payload: { type: "token_count", info: null } }, count(40, 9)]
        .map((l) => JSON.stringify(l)).join("\n"),
    );
    assert.equal(await codexTokens([rollout]), 49);
    assert.equal(await codexTokens([join(dir, "missing.jsonl")]), 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** The tool call that lists the files, as each program names its shell tool. */
function listFiles(backend: "claude-code" | "codex") {
  return backend === "codex"
    ? { name: "exec_command", input: { cmd: "ls" } }
    : { name: "Bash", input: { command: "ls" } };
}

/** Runs a run file of `backend` against the fake provider, with these limits, in a fresh runs root. */
async function runProgram(
  backend: "claude-code" | "codex",
  path: string,
  provider: { url: string; openaiBaseUrl: string },
  run: { name: string; limits: string; prompt: string; runs: string },
) {
  const model = backend === "codex" ? "openai:gpt-fake" : "anthropic:claude-sonnet-4-5";
  const baseUrl = backend === "codex" ? provider.openaiBaseUrl : provider.url;
  const key = backend === "codex" ? "FAKE_OPENAI_KEY" : "FAKE_ANTHROPIC_KEY";
  const file = RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada }
agent:
  name: ${run.name}
  backend: ${backend}
  program: ${JSON.stringify(path)}
  model: ${model}
  provider: { base_url: ${JSON.stringify(baseUrl)}, api_key_env: ${key} }
  allow_unsandboxed: [Bash]
  limits: ${run.limits}
prompt: ${run.prompt}
`);
  return await runFile(file, { runs: run.runs, env: (n) => (n === key ? "sk-fake" : Deno.env.get(n)) });
}

/** A run of `backend` whose first model response reports 5,000 tokens, with a limit of 1,000. */
async function overTokens(backend: "claude-code" | "codex", path: string) {
  // The second model request waits two minutes: a run that is not stopped by its token limit runs into
  // limits.seconds, and fails with another message.
  await using provider = startFakeAgentProvider(
    [listFiles(backend)],
    { delayMs: 120_000, delayFrom: 1, usage: { input: 4_000, output: 1_000 } },
  );
  const runs = await Deno.makeTempDir({ prefix: `provrun-${backend}-tokens-` });
  try {
    const started = performance.now();
    const outcome = await runProgram(backend, path, provider, {
      name: "spender",
      limits: "{ tokens: 1000, seconds: 90 }",
      prompt: "List the files, then answer.",
      runs,
    });
    assert.equal(outcome.status, "failed");
    assert.equal(outcome.error?.name, "CancelledError");
    assert.match(outcome.error!.message, /the run passed its limit of 1000 tokens \(\d+\)/);
    assert.ok(performance.now() - started < 80_000, "the program was not stopped before limits.seconds");
    const events = await eventsOf(runs, outcome.runId);
    const done = events.find((e) => e.type === "sandbox_completed")!;
    assert.equal(done.data.status, "failed");
    // stopped: by the signal, or by its own exit on SIGTERM (Claude Code exits 143)
    assert.ok(
      done.data.signal === "SIGTERM" || done.data.signal === "SIGKILL" ||
        done.data.exit_code === 143 || done.data.exit_code === 137,
      JSON.stringify(done.data),
    );
    const failed = events.at(-1)!;
    assert.equal(failed.type, "run_failed");
    assert.equal(failed.data.error, "CancelledError");
    // what the program did until it was stopped is in the chain: its session file
    assert.ok(events.some((e) => e.type === "trace_imported"), events.map((e) => e.type).join(" "));
    const check = await verifyRun(await findRun(outcome.folder));
    assert.ok(check.ok, JSON.stringify(check.problems));
  } finally {
    await removeWritable(runs);
  }
}

peerTest("claude-code", {
  name:
    "a claude-code run past limits.tokens stops the real Claude Code and fails with CancelledError, and verifies",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => await overTokens("claude-code", needed(CLAUDE.path, "PROVRUN_TEST_CLAUDE")),
});

peerTest("codex", {
  name: "a codex run past limits.tokens stops the real Codex and fails with CancelledError, and verifies",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => await overTokens("codex", needed(CODEX.path, "PROVRUN_TEST_CODEX")),
});

Deno.test("codexSteps() counts a rollout's model responses and whether the last asked for a tool", async () => {
  const dir = await Deno.makeTempDir({ prefix: "provrun-steps-" });
  try {
    const item = (payload: Record<string, unknown>) => ({ type: "response_item", payload });
    const done = { type: "event_msg", payload: { type: "token_count", info: { total_token_usage: {} } } };
    const rollout = join(dir, "r.jsonl");
    const write = (lines: unknown[]) =>
      Deno.writeTextFile(rollout, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    const call = item({ type: "function_call", name: "exec_command", arguments: "{}" });
    const output = item({ type: "function_call_output", output: "a.txt" });
    const answer = item({ type: "message", role: "assistant", content: [] });
    await write([{ type: "event_msg", payload: { type: "token_count", info: null } }]);
    assert.deepEqual(await codexSteps([rollout]), { responses: 0, toolPending: false });
    await write([call, done, output]);
    assert.deepEqual(await codexSteps([rollout]), { responses: 1, toolPending: true });
    await write([call, done, output, answer, done]);
    assert.deepEqual(await codexSteps([rollout]), { responses: 2, toolPending: false });
    assert.deepEqual(await codexSteps([join(dir, "missing.jsonl")]), { responses: 0, toolPending: false });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** A run of `backend` with limits.steps 2, whose model asks for three tool calls before its answer. */
async function atSteps(backend: "claude-code" | "codex", path: string) {
  // The third model request waits two minutes, so a program that is not stopped at two steps runs into
  // limits.seconds and fails.
  await using provider = startFakeAgentProvider(
    [1, 2, 3].map(() => listFiles(backend)),
    { delayMs: 120_000, delayFrom: 2 },
  );
  const runs = await Deno.makeTempDir({ prefix: `provrun-${backend}-steps-` });
  try {
    const started = performance.now();
    const outcome = await runProgram(backend, path, provider, {
      name: "stepper",
      limits: "{ steps: 2, seconds: 90 }",
      prompt: "List the files three times, then answer.",
      runs,
    });
    assert.equal(outcome.status, "completed", outcome.error?.message);
    assert.ok(performance.now() - started < 80_000, "the program was not stopped before limits.seconds");
    // two model responses: Claude Code makes no third request, Codex's is never answered
    const requests = provider.requests.filter((r) => r.method === "POST").length;
    assert.ok(requests === 2 || requests === 3, `${requests} model requests`);
    const events = await eventsOf(runs, outcome.runId);
    const opened = events.find((e) => e.type === "sandbox_started")!;
    assert.equal((opened.data.limits as { steps: number }).steps, 2);
    const done = events.find((e) => e.type === "sandbox_completed")!;
    assert.equal(done.data.status, "step_limit", JSON.stringify(done.data));
    assert.equal(done.data.step_limit, 2);
    assert.ok(events.some((e) => e.type === "trace_imported"), events.map((e) => e.type).join(" "));
    const check = await verifyRun(await findRun(outcome.folder));
    assert.ok(check.ok, JSON.stringify(check.problems));
  } finally {
    await removeWritable(runs);
  }
}

peerTest("claude-code", {
  name:
    "a claude-code run at limits.steps (--max-turns) ends as an agent run at its step limit does, and verifies",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => await atSteps("claude-code", needed(CLAUDE.path, "PROVRUN_TEST_CLAUDE")),
});

peerTest("codex", {
  name:
    "a codex run at limits.steps is stopped after that many model responses, ends as an agent run at its " +
    "step limit does, and verifies",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => await atSteps("codex", needed(CODEX.path, "PROVRUN_TEST_CODEX")),
});

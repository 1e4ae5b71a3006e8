/**
 * The real agent programs (Claude Code and Codex, the versions CI installs) behind the model gateway, against the
 * fake provider, on a suite of scripted tasks: every model request a program made is one `model_called` (or one
 * `step_failed` of a model call), matched one to one against the program's own session file (count, order,
 * tokens); every tool call it reported is one `tool_called`, joined to the model response that asked for it;
 * the run verifies. The match table is printed. The tasks run a few at a time: the programs take seconds to start.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startFakeAgentProvider } from "../../../fixtures/providers/fake_agent_provider.ts";
import type { EvidenceEvent } from "../../../lib/provevi/evidence/event.ts";
import { findRun } from "../../../lib/provevi/runs/find_run.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { readEventsText } from "../../../lib/provevi/evidence/read_events.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";
import { matchSession, sessionEntries } from "../../../lib/provrun/gateway/session_match.ts";
import { gitCatalog } from "../_catalog.ts";
import type { Catalog } from "../../../lib/provcat/catalog.ts";
import { needed, program } from "../backends/_programs.ts";
import { PROGRAM_TASKS, type ProgramTask } from "./_program_tasks.ts";
import { peerTest } from "../../_peers.ts";

const CLAUDE = program("claude-code");
const CODEX = program("codex");
const CSV = "quarter,revenue\nQ2,43.0\nQ3,48.2\n";
const AT_ONCE = 4;

/** One line of the match table. */
interface Row {
  task: string;
  status: string;
  requests: number;
  recorded: number;
  session: number;
  matched: number;
  tokens: string;
  tools: string;
  problems: string[];
}

function runText(task: ProgramTask, path: string, baseUrl: string): string {
  const claude = task.program === "claude";
  return `
run: { org: acme, domain: demo, env: dev, actor: ada, mode: strict }
agent:
  name: ${claude ? "claude" : "codex"}-${task.name.replace(/[^a-z0-9]+/gi, "-").replace(/-$/, "")}
  backend: ${claude ? "claude-code" : "codex"}
  program: ${JSON.stringify(path)}
  model: ${claude ? "anthropic:claude-sonnet-4-5" : "openai:gpt-5"}
  provider: { base_url: ${JSON.stringify(baseUrl)}, api_key_env: PROVR_KEY_FAKE }
  limits: { seconds: 240 }
${task.agent ?? ""}
prompt: What was the revenue growth in Q3? Write it to output/answer.md.
inputs:
  - { uri: "data://acme/demo/dev/finance/revenue.csv", as: revenue.csv }
`;
}

const MODEL_PATHS = ["/v1/messages", "/v1/responses"];

/** Runs one task and checks it; the row of the match table. */
async function runTask(task: ProgramTask, runs: { root: string; catalog: Catalog }): Promise<Row> {
  const path = task.program === "claude"
    ? needed(CLAUDE.path, "PROVRUN_TEST_CLAUDE")
    : needed(CODEX.path, "PROVRUN_TEST_CODEX");
  await using provider = startFakeAgentProvider(task.script, task.provider ?? {});
  const abort = new AbortController();
  const watch = task.cancelAfter === undefined ? null : setInterval(() => {
    if (provider.requests.filter((r) => MODEL_PATHS.includes(r.path)).length >= task.cancelAfter!) {
      abort.abort();
    }
  }, 100);
  const outcome = await runFile(
    RunFile.parse(runText(task, path, task.program === "claude" ? provider.url : provider.openaiBaseUrl)),
    {
      catalog: runs.catalog,
      runs: runs.root,
      signal: abort.signal,
      env: (n) => (n === "PROVR_KEY_FAKE" ? "sk-fake-provider-key" : Deno.env.get(n)),
    },
  ).finally(() => watch && clearInterval(watch));
  await provider.close();
  const events =
    readEventsText(await Deno.readTextFile(join(outcome.folder, "evidence", "events.jsonl"))).events;
  const row = await checkTask(task, {
    outcome,
    events,
    requests: provider.requests.filter((r) => MODEL_PATHS.includes(r.path)),
  });
  const check = await verifyRun(await findRun(outcome.folder));
  if (!check.ok) row.problems.push(`does not verify: ${check.problems.map((p) => p.message).join("; ")}`);
  return row;
}

/** The checks of one task's run, as a row of the table and its problems. */
async function checkTask(
  task: ProgramTask,
  run: {
    outcome: Awaited<ReturnType<typeof runFile>>;
    events: EvidenceEvent[];
    requests: { key: string | null }[];
  },
): Promise<Row> {
  const { outcome, events, requests } = run;
  const problems: string[] = [];
  const last = events.at(-1)!;
  const status = last.type === "run_completed"
    ? "completed"
    : last.data.error === "CancelledError"
    ? "cancelled"
    : "failed";
  if (status !== task.ends) {
    problems.push(`ended ${status} (${outcome.error?.message ?? ""}), not ${task.ends}`);
  }
  const calls = events.filter((e) =>
    e.type === "model_called" || (e.type === "step_failed" && e.data.step === "model_called")
  );
  if (calls.length !== requests.length) {
    problems.push(`${requests.length} model requests, ${calls.length} recorded`);
  }
  if (requests.some((r) => r.key !== "sk-fake-provider-key")) {
    problems.push("a request reached the provider without the real key");
  }
  // the session file, matched one to one with the gateway's responses
  const ok = events.filter((e) => e.type === "model_called");
  const gateway = ok.map((e) => ({
    seq: e.seq,
    id: String(e.data.response_id),
    usage: {
      input: Number(e.data.input_tokens),
      output: Number(e.data.output_tokens),
      cacheRead: Number(e.data.cache_read_tokens),
      cacheWrite: Number(e.data.cache_write_tokens),
      reasoning: Number(e.data.reasoning_tokens),
    },
  }));
  const kind = task.program === "claude" ? "transcript" : "rollout";
  const entries = [];
  for (const e of events.filter((e) => e.type === "trace_imported" && e.data.kind === kind)) {
    entries.push(...sessionEntries(kind, await Deno.readTextFile(join(outcome.folder, String(e.data.path)))));
  }
  const rows = matchSession(kind, gateway, entries);
  const matched = rows.filter((r) => r.verdict === "match").length;
  if (task.ends !== "cancelled" && (matched !== gateway.length || matched !== entries.length)) {
    problems.push(
      `match: ${rows.filter((r) => r.verdict !== "match").map((r) => `${r.id} ${r.verdict}`).join(", ")}`,
    );
  }
  const crossCheck = events.filter((e) => e.type === "telemetry_problem" && e.data.library === "gateway");
  if (task.ends !== "cancelled" && crossCheck.length) {
    problems.push(`gateway problems: ${crossCheck.map((e) => e.data.problem).join("; ")}`);
  }
  // every tool call the program reported is one tool_called, asked for by a recorded response
  const reported = new Set(
    events.filter((e) =>
      e.type === "hook_called" && ["PostToolUse", "PostToolUseFailure"].includes(String(e.data.event)) ||
      (e.type === "hook_called" && e.data.decision === "deny")
    ).map((e) => String(e.data.tool_use_id)),
  );
  const tools = events.filter((e) => e.type === "tool_called");
  const asked = new Set(ok.flatMap((e) => (e.data.tool_calls as { id: string }[]).map((t) => t.id)));
  if (tools.length !== reported.size) {
    problems.push(`${reported.size} tool calls reported, ${tools.length} tool_called`);
  }
  for (const t of tools) {
    if (!asked.has(String(t.data.call_id))) {
      problems.push(`tool call ${t.data.call_id} asked by no response`);
    }
  }
  const refused = tools.filter((t) => t.data.error === "ToolRefused").length;
  if (refused !== (task.refused ?? 0)) {
    problems.push(`${refused} tool calls refused, not ${task.refused ?? 0}`);
  }
  const sum = (k: string) => ok.reduce((n, e) => n + Number(e.data[k]), 0);
  return {
    task: `${task.program} ${task.name}`,
    status,
    requests: requests.length,
    recorded: calls.length,
    session: entries.length,
    matched,
    tokens: `${sum("input_tokens")}/${sum("output_tokens")}/${sum("cache_read_tokens")}/${
      sum("reasoning_tokens")
    }`,
    tools: `${tools.length} (${refused} refused)`,
    problems,
  };
}

function printTable(rows: Row[]): void {
  const head = [
    "TASK",
    "END",
    "REQUESTS",
    "RECORDED",
    "SESSION",
    "MATCHED",
    "TOKENS in/out/cache/reason",
    "TOOL CALLS",
    "OK",
  ];
  const lines = [
    head,
    ...rows.map((
      r,
    ) => [
      r.task,
      r.status,
      String(r.requests),
      String(r.recorded),
      String(r.session),
      String(r.matched),
      r.tokens,
      r.tools,
      r.problems.length ? "NO" : "yes",
    ]),
  ];
  const widths = head.map((_, i) => Math.max(...lines.map((l) => l[i]!.length)));
  console.log(`\nthe model gateway and the programs' session files, ${rows.length} tasks:`);
  for (const l of lines) console.log(l.map((c, i) => c.padEnd(widths[i]!)).join("  "));
}

peerTest(["claude-code", "codex"], {
  name:
    "Claude Code and Codex behind the model gateway, on 22 scripted tasks: every model request one model_called, matched one to one with the session file, every tool call one tool_called, every run verifies",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    assert.ok(PROGRAM_TASKS.length >= 20);
    await using t = await gitCatalog({ "finance/revenue.csv": CSV });
    const rows: Row[] = [];
    const queue = [...PROGRAM_TASKS];
    await Promise.all(Array.from({ length: AT_ONCE }, async () => {
      for (let task = queue.shift(); task; task = queue.shift()) {
        rows.push(
          await runTask(task, { root: t.runs, catalog: t.catalog }).catch((error) => ({
            task: `${task!.program} ${task!.name}`,
            status: "error",
            requests: 0,
            recorded: 0,
            session: 0,
            matched: 0,
            tokens: "-",
            tools: "-",
            problems: [String(error?.stack ?? error)],
          })),
        );
      }
    }));
    rows.sort((a, b) => a.task.localeCompare(b.task));
    printTable(rows);
    const failed = rows.filter((r) => r.problems.length).map((r) => `${r.task}: ${r.problems.join("; ")}`);
    assert.deepEqual(failed, []);
  },
});

/**
 * A corpus of 100 recorded runs (scripted `test:` models; the call backend and the agent backend, streamed and
 * not; tools that read, write and fail; a tools folder whose tool reaches a server; MCP tools; the output tool;
 * a tool the provider ran; a call of no tool; a model error; a stream cut part way; the step and token limits
 * hit) replays with 0 divergences, in a process that has no net permission at all and may run only `cp`, with
 * Deno's permission audit on: the audit holds 0 attempts to reach the network and 0 programs started but `cp`,
 * and the server the tools reach counts no call from the replays.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Catalog } from "../../../lib/provcat/catalog.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";
import { countingTools, startCounter } from "./_counter.ts";

const ROOT = new URL("../../../", import.meta.url).pathname;
const CHILD = new URL("./_replay_child.ts", import.meta.url).pathname;
const MCP = join(ROOT, "fixtures", "mcp", "server.ts");

/** The script and agent keys of run `i`: ten kinds, each streamed and not, with texts of their own. */
function agentOf(i: number, host: string): { backend: string; extra: string; turns: string[] } {
  const say = (text: string) =>
    `{ text: "${text} (${i})", usage: { input: ${10 + i}, output: ${3 + (i % 5)} } }`;
  const call = (name: string, args: string) => `{ tool_calls: [{ name: ${name}, args: ${args} }] }`;
  switch (i % 10) {
    case 0:
      return { backend: "call", extra: "", turns: [say("The answer is 42")] };
    case 1:
      return {
        backend: "call",
        extra: "",
        turns: [`{ error: { status: 503, message: "overloaded ${i}" } }`],
      };
    case 2:
      return {
        backend: "agent",
        extra: "",
        turns: [
          call("write_file", `{ path: /output/notes-${i}.txt, content: "note ${i}" }`),
          call("read_file", `{ path: /output/notes-${i}.txt }`),
          say("Wrote and read"),
        ],
      };
    case 3:
      return {
        backend: "agent",
        extra: "  tools: [read_file, list_files, final_answer]",
        turns: [
          call("read_file", "{ path: /input/missing.csv }"),
          call("list_files", "{ path: /input }"),
          call("final_answer", `{ answer: "final ${i}" }`),
        ],
      };
    case 4:
      return {
        backend: "agent",
        extra: `  tools_folder: tools\n  net: ["${host}"]`,
        turns: [call("count", `{ n: ${i} }`), call("stamp", `{ n: ${i} }`), say("Counted")],
      };
    case 5:
      return {
        backend: "agent",
        extra: `  mcp: [{ name: calc, command: [${MCP}] }]`,
        turns: [call("add", `{ a: ${i}, b: 2 }`), call("read_text", "{ path: /etc/hostname }"), say("Added")],
      };
    case 6:
      return {
        backend: "agent",
        extra: "  limits: { steps: 2 }",
        turns: [
          call("note", `{ text: "first ${i}" }`),
          call("note", `{ text: "second ${i}" }`),
          say("never"),
        ],
      };
    case 7:
      return {
        backend: "agent",
        extra: "  limits: { tokens: 5 }",
        turns: [call("list_files", "{ path: /output }"), say("never")],
      };
    case 8:
      return {
        backend: "agent",
        extra: "",
        turns: [
          `{ provider_tools: [{ name: web_search, args: { q: "q${i}" }, result: { hits: ${i} } }], text: "searched" }`,
          call("no_such_tool", "{}"),
          say("Searched"),
        ],
      };
    default:
      return {
        backend: "agent",
        extra: "",
        turns: [
          call("grep_file", "{ path: /input, pattern: Q3 }"),
          `{ text: "a stream that breaks (${i})", cut_after: 2 }`,
        ],
      };
  }
}

function runText(i: number, options: { host: string; input: string }): string {
  const agent = agentOf(i, options.host);
  const stream = i % 10 === 9 || Math.floor(i / 10) % 2 === 1;
  return `run: { org: acme, domain: demo, env: dev, actor: ada, mode: ${i % 3 === 0 ? "lenient" : "strict"} }
agent:
  name: corpus-${i % 10}
  backend: ${agent.backend}
  model: "test:"
  stream: ${stream}
${agent.extra}
  script:
    model: scripted-${i % 4}
    turns:
${agent.turns.map((t) => `      - ${t}`).join("\n")}
prompt: "Question ${i}: what was the revenue growth in Q3?"
${i % 2 === 0 ? `inputs: [{ uri: "file://${options.input}", as: revenue.csv }]` : ""}
outputs: [answer-${i}.txt]
`;
}

Deno.test("100 recorded runs replay with 0 divergences and 0 network calls, as Deno's permission audit proves", async () => {
  const dir = await Deno.makeTempDir({ prefix: "replay-corpus-" });
  await using counter = startCounter();
  try {
    await countingTools(dir, { host: counter.host, token: "corpus" });
    const input = join(dir, "revenue.csv");
    await Deno.writeTextFile(input, "quarter,revenue\nQ2,43.0\nQ3,48.2\n");
    const runs = join(dir, "runs");
    await using catalog = await Catalog.open({ config: {} });
    const store = new FileStore({ runs });
    const statuses: Record<string, number> = {};
    for (let i = 0; i < 100; i += 5) {
      await Promise.all(Array.from({ length: 5 }, async (_, k) => {
        const path = join(dir, `run-${i + k}.yaml`);
        await Deno.writeTextFile(path, runText(i + k, { host: counter.host, input }));
        const outcome = await runFile(await RunFile.load(path), { store, catalog });
        assert.ok(outcome.manifest, `run ${i + k}: ${JSON.stringify(outcome.error)}`);
        statuses[outcome.status] = (statuses[outcome.status] ?? 0) + 1;
      }));
    }
    assert.ok(statuses.completed! >= 50 && statuses.failed! >= 20, JSON.stringify(statuses));
    const tells = () => [...counter.calls.values()].reduce((a, b) => a + b, 0);
    const told = tells();
    assert.ok(told >= 10, `the tools reached the server ${told} times in the recorded runs`);

    const audit = join(dir, "audit.jsonl");
    const child = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--no-prompt",
        "--allow-read",
        "--allow-write",
        "--allow-env",
        "--allow-sys=hostname,osRelease",
        "--allow-run=cp",
        CHILD,
        runs,
      ],
      env: { DENO_AUDIT_PERMISSIONS: audit },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const err = new TextDecoder().decode(child.stderr);
    assert.ok(child.success, err);
    const lines = new TextDecoder().decode(child.stdout).trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(lines.length, 100, err);
    const diverged = lines.filter((l) => !l.identical);
    assert.deepEqual(diverged, [], "every replay is identical");
    const reached = (await Deno.readTextFile(audit)).trim().split("\n").map((l) => JSON.parse(l));
    const net = reached.filter((a) => a.permission === "net");
    const programs = [...new Set(reached.filter((a) => a.permission === "run").map((a) => a.value))];
    assert.deepEqual(net, [], "no replay reached the network");
    assert.deepEqual(
      programs.filter((p) => !String(p).endsWith("cp")),
      [],
      "no replay started a program but cp",
    );
    assert.equal(tells(), told, "no replay ran the tool that reaches the server");
    for (const l of lines.slice(0, 10)) {
      assert.ok((await verifyRun(await store.readRun(l.replay), { store })).ok);
    }
    const served = lines.reduce((n, l) => n + l.served.model_calls + l.served.tool_calls, 0);
    console.log(
      `100 runs replayed: 0 divergences, ${served} model and tool calls served, ${net.length} network attempts ` +
        `and ${programs.length} program (${
          programs.join(", ")
        }) in the audit of ${reached.length} permission checks`,
    );
    await store.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

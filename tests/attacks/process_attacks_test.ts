/**
 * Processes that must not outlive provr: `provr` killed with SIGKILL mid-run, while a tool spins in its
 * sandbox process and an MCP server (python3, with a grandchild that ignores SIGTERM) runs, leaves no process
 * behind (the reaper kills them); and at the seal, a server that is not Deno has its whole process group
 * stopped, the grandchild too, and the record says so.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runFile } from "../../lib/provrun/runner/run.ts";
import { agentFile, eventsOf, payloadOf } from "../provrun/_agent.ts";
import { gitCatalog } from "../provrun/_catalog.ts";
import { Tally } from "./_tally.ts";
import { alive, descendants, taskRun } from "../_children.ts";

const tally = new Tally("process attacks");
const ROOT = new URL("../../", import.meta.url).pathname;
const FORKER = join(ROOT, "fixtures/attacks/mcp/forker.py");
const BUSY = join(ROOT, "fixtures/attacks/busy_tools");

async function hasPython(): Promise<boolean> {
  try {
    return (await new Deno.Command("python3", { args: ["--version"], stdout: "null", stderr: "null" })
      .output())
      .success;
  } catch {
    return false;
  }
}

/** True when python3 runs here; in CI its absence fails the test, elsewhere the test is skipped and says so. */
async function pythonHere(): Promise<boolean> {
  if (await hasPython()) return true;
  if (Deno.env.get("CI")) throw new Error("python3 is missing: the process attacks need it");
  console.log("skipped: python3 is not installed");
  return false;
}

Deno.test("provr killed with SIGKILL mid-run leaves no process behind: not the busy sandbox process, not the MCP server or its grandchild", async () => {
  if (!(await pythonHere())) return;
  const dir = await Deno.makeTempDir({ prefix: "attack-orphans-" });
  const file = join(dir, "run.yaml");
  await Deno.writeTextFile(
    file,
    `run: { org: acme, domain: demo, env: dev, actor: ada }
agent:
  name: attacker
  backend: agent
  model: "test:"
  tools_folder: ${BUSY}
  mcp: [{ name: forker, command: [python3, ${FORKER}] }]
  allow_unsandboxed: [forker]
  limits: { tool_seconds: 600, seconds: 900 }
  script:
    turns:
      - tool_calls: [{ id: p1, name: pids }]
      - tool_calls: [{ id: s1, name: spin }]
      - text: "done"
prompt: Attack.
`,
  );
  const provr = new Deno.Command(Deno.execPath(), {
    args: [
      ...taskRun("provr", ["python3"]),
      "--runs",
      join(dir, "runs"),
      "run",
      file,
    ],
    cwd: dir,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(provr.stderr).text();
  try {
    // Wait for the spinning tool: the pids call is recorded, a sandbox process and the server run.
    let seen: { pid: number; cmd: string }[] = [];
    const until = Date.now() + 90_000;
    for (;;) {
      if (Date.now() > until) {
        provr.kill("SIGKILL");
        assert.fail(`the run never reached its busy tool: ${await stderr}`);
      }
      await new Promise((r) => setTimeout(r, 200));
      const events = await Array.fromAsync(Deno.readDir(join(dir, "runs"))).catch(() => []);
      const text = events.length
        ? await Deno.readTextFile(join(dir, "runs", events[0]!.name, "evidence", "events.jsonl")).catch(() =>
          ""
        )
        : "";
      seen = descendants(provr.pid);
      if (text.includes(`"tool":"pids"`) && seen.some((p) => p.cmd.includes("data:text/javascript"))) break;
    }
    await new Promise((r) => setTimeout(r, 1000)); // the spin call is under way
    seen = descendants(provr.pid);
    // The sandbox process: deno running the sandbox role (from source), or provr started again in it (compiled).
    const sandboxes = seen.filter((p) =>
      p.cmd.includes("--allow-write=") && /sandbox_role\.ts|--provr-sandbox-process/.test(p.cmd)
    );
    const server = seen.filter((p) => p.cmd.includes("forker.py"));
    const grandchild = seen.filter((p) => p.cmd.includes("trap"));
    assert.ok(sandboxes.length >= 1 && server.length === 1 && grandchild.length === 1, JSON.stringify(seen));
    provr.kill("SIGKILL");
    await provr.status;
    const deadline = Date.now() + 60_000; // generous: the reaper's SIGKILL is at once, a busy machine is slow
    while (Date.now() < deadline && seen.some((p) => alive(p.pid))) {
      await new Promise((r) => setTimeout(r, 100));
    }
    const left = seen.filter((p) => alive(p.pid));
    tally.add("provr killed: its sandbox, MCP server and grandchild die with it", {
      stopped: left.length === 0,
      recorded: true, // nothing can be recorded by a killed provr; the run shows as cut
    });
    for (const p of left) Deno.kill(p.pid, "SIGKILL");
    assert.deepEqual(left, [], "left behind after provr was killed");
  } finally {
    try {
      provr.kill("SIGKILL");
    } catch {
      // It has ended.
    }
    await stderr;
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an MCP server that is not Deno has its whole process group stopped at the seal, its grandchild that ignores SIGTERM too", async () => {
  if (!(await pythonHere())) return;
  await using t = await gitCatalog({ "x.txt": "x" });
  const turns = `      - tool_calls: [{ id: p1, name: pids }]
      - text: "done"`;
  const file = agentFile(turns, {
    extra: `  mcp: [{ name: forker, command: [python3, ${FORKER}] }]\n  allow_unsandboxed: [forker]`,
  });
  const outcome = await runFile(file, { runs: t.runs });
  assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
  const { events } = await eventsOf(t.runs, outcome.runId);
  const call = events.find((e) => e.type === "tool_called" && e.data.tool === "pids")!;
  const [server, grandchild] = String(
    await payloadOf(t.runs, outcome.runId, call.data.result_payload as string),
  )
    .split(" ").map(Number);
  assert.ok(server! > 0 && grandchild! > 0);
  const done = events.find((e) => e.type === "sandbox_completed")!;
  const stopped = done.data.mcp_stopped as { server: string; pid: number; ended: string }[];
  const left = [server!, grandchild!].filter(alive);
  tally.add("a python3 server and its grandchild that ignores SIGTERM, at the seal", {
    stopped: left.length === 0,
    recorded: stopped.length === 1 && stopped[0]!.ended === "killed" && stopped[0]!.pid === server,
  });
  for (const pid of left) Deno.kill(pid, "SIGKILL");
  assert.deepEqual(left, [], "the server or its grandchild outlived the run");
  assert.deepEqual(stopped.map((s) => [s.server, s.pid, s.ended]), [["forker", server, "killed"]]);
});

Deno.test("provr ends after the seal while a process that left an MCP server's group (setsid) still holds the server's pipes", async () => {
  if (!(await pythonHere())) return;
  const dir = await Deno.makeTempDir({ prefix: "attack-escaped-" });
  const file = join(dir, "run.yaml");
  await Deno.writeTextFile(
    file,
    `run: { org: acme, domain: demo, env: dev, actor: ada }
agent:
  name: attacker
  backend: agent
  model: "test:"
  mcp: [{ name: forker, command: [python3, ${FORKER}, --escape] }]
  allow_unsandboxed: [forker]
  script:
    turns:
      - tool_calls: [{ id: p1, name: pids }]
      - text: "done"
prompt: Attack.
`,
  );
  let escaped = 0;
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        ...taskRun("provr", ["python3"]),
        "--runs",
        join(dir, "runs"),
        "run",
        file,
        "--json",
      ],
      cwd: dir,
      stdin: "null",
    }).output();
    const result = JSON.parse(new TextDecoder().decode(out.stdout));
    assert.equal(result.status, "completed", new TextDecoder().decode(out.stderr));
    const { events } = await eventsOf(join(dir, "runs"), result.run_id);
    const call = events.find((e) => e.type === "tool_called" && e.data.tool === "pids")!;
    escaped = Number(
      String(await payloadOf(join(dir, "runs"), result.run_id, call.data.result_payload as string)).split(
        " ",
      )[2],
    );
    assert.ok(escaped > 0);
    // provr has exited, and the escaped process (60 s of sleep) is still there: provr did not wait on it
    const ended = !alive(escaped);
    tally.add("a process that left an MCP server's group holds its pipes: provr still exits", {
      stopped: !ended,
      recorded: events.some((e) => e.type === "sandbox_completed"),
    });
    assert.ok(!ended, "provr waited for the escaped process to end");
  } finally {
    if (escaped > 0) {
      try {
        Deno.kill(escaped, "SIGKILL");
      } catch { /* gone */ }
    }
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the process attack counts", () => {
  console.log(tally.line());
  assert.equal(tally.missed.length, 0, tally.line());
});

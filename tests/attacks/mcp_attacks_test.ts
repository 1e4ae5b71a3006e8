/**
 * MCP servers under attack: a Deno server that ignores SIGTERM and the end of its stdin is killed at the end
 * of the run and the record says so; a Deno command may set only the flags of an allow-list, so no flag reads
 * or writes outside the sandbox (`--lock=/outside/x.json`).
 * @module
 */
import assert from "node:assert/strict";
import { mcpLaunch } from "../../lib/provrun/sandbox/mcp.ts";
import { sandboxPermissions } from "../../lib/provrun/sandbox/sandbox_permissions.ts";
import { runFile } from "../../lib/provrun/runner/run.ts";
import { agentFile, eventsOf, payloadOf } from "../provrun/_agent.ts";
import { gitCatalog } from "../provrun/_catalog.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("MCP attacks");

Deno.test("a Deno MCP command may set only allowed flags: any flag that reads or writes a file is refused", () => {
  const options = { permissions: sandboxPermissions("/r"), allowUnsandboxed: [], folder: "/repo" };
  for (
    const flag of [
      "--lock=/outside/x.json",
      "--lock",
      "--config=/outside/deno.json",
      "-c=/outside/deno.json",
      "--import-map=/outside/map.json",
      "--env-file=/home/me/.env",
      "--cert=/outside/ca.pem",
      "--v8-flags=--allow-natives-syntax",
      "--inspect=127.0.0.1:9229",
      "--watch",
      "--location=https://evil.example/",
      "--frozen=false",
    ]
  ) {
    let error: unknown = null;
    try {
      mcpLaunch({ name: "calc", command: ["deno", "run", flag, "server.ts"] }, options);
    } catch (e) {
      error = e;
    }
    const stopped = error instanceof Error &&
      /not one a server may set|own permission flag/.test(error.message);
    tally.add(`MCP flag ${flag}`, { stopped, recorded: stopped });
    assert.ok(stopped, `${flag}: ${error}`);
  }
  for (const flag of ["-q", "--quiet", "--no-check", "--unstable-kv", "--cached-only", "--seed=7"]) {
    assert.equal(
      mcpLaunch({ name: "c", command: ["deno", "run", flag, "s.ts"] }, options).sandboxed,
      true,
      flag,
    );
  }
});

Deno.test("a Deno MCP server that ignores SIGTERM is killed at the end of the run, and sandbox_completed says so", async () => {
  await using t = await gitCatalog({ "x.txt": "x" });
  const turns = `      - tool_calls: [{ id: p1, name: pid }]
      - text: "done"`;
  const file = agentFile(turns, {
    extra: `  mcp: [{ name: stubborn, command: [fixtures/attacks/mcp/stubborn.ts] }]`,
  });
  const outcome = await runFile(file, { runs: t.runs });
  assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
  const { events } = await eventsOf(t.runs, outcome.runId);
  const call = events.find((e) => e.type === "tool_called" && e.data.tool === "pid")!;
  const pid = Number(await payloadOf(t.runs, outcome.runId, call.data.result_payload as string));
  assert.ok(pid > 0);
  let alive = true;
  try {
    await Deno.stat(`/proc/${pid}`);
  } catch {
    alive = false;
  }
  const done = events.find((e) => e.type === "sandbox_completed")!;
  const stopped = done.data.mcp_stopped as { server: string; ended: string }[];
  tally.add("a server that ignores SIGTERM", {
    stopped: !alive,
    recorded: stopped.length === 1 && stopped[0]!.server === "stubborn" && stopped[0]!.ended === "killed",
  });
  const status = alive ? await Deno.readTextFile(`/proc/${pid}/status`).catch(() => "") : "";
  assert.equal(
    alive,
    false,
    `the server (pid ${pid}) outlived the run: ${JSON.stringify(stopped)} ${
      status.split("\n").slice(0, 3).join(" ")
    }`,
  );
  assert.deepEqual(stopped.map((s) => [s.server, s.ended]), [["stubborn", "killed"]]);
});

Deno.test("the MCP attack counts", () => {
  console.log(tally.line());
  assert.equal(tally.missed.length, 0, tally.line());
});

import assert from "node:assert/strict";
import { join } from "node:path";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { agentPath } from "../../../lib/provrun/sandbox/fs_tools.ts";
import { Sandbox } from "../../../lib/provrun/sandbox/sandbox.ts";
import { sandboxPermissions } from "../../../lib/provrun/sandbox/sandbox_permissions.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";
import { gitCatalog } from "../_catalog.ts";
import { agentFile, eventsOf, payloadOf } from "../_agent.ts";

const CSV = "quarter,revenue\nQ2,43.0\nQ3,48.2\n";
const INPUTS = `inputs:\n  - { uri: "data://acme/demo/dev/finance/revenue.csv", as: revenue.csv }`;

Deno.test("agentPath() maps the agent's view and refuses .. escapes and host paths", () => {
  assert.equal(agentPath("/r", "/input/a.csv"), "/r/input/a.csv");
  assert.equal(agentPath("/r", "/output/x/y.txt", { write: true }), "/r/output/x/y.txt");
  assert.throws(() => agentPath("/r", "/input/../../etc/passwd"), /`\.\.` may not be used/);
  assert.throws(() => agentPath("/r", "/etc/passwd"), /only \/input\/… and \/output\/…/);
  assert.throws(() => agentPath("/r", "/input/a.csv", { write: true }), /written only under \/output/);
  assert.throws(() => agentPath("/r", "/scratch/x"), /PathRefused|refused/);
});

Deno.test("the sandbox's permissions are exactly the run's grants", () => {
  assert.deepEqual(sandboxPermissions("/r", ["127.0.0.1:8123"]), {
    read: ["/r/input", "/r/output"],
    write: ["/r/output", "/r/scratch"],
    net: ["127.0.0.1:8123"],
    env: false,
    run: false,
    ffi: false,
    sys: false,
    import: false,
  });
  assert.equal(sandboxPermissions("/r").net, false);
});

Deno.test("tools that reach past the sandbox are stopped by Deno's permissions, recorded as NotCapable, and the run goes on", async () => {
  await using t = await gitCatalog({ "finance/revenue.csv": CSV });
  await using granted = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response("granted"),
  );
  await using other = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response("secret"),
  );
  const grantedUrl = `http://127.0.0.1:${granted.addr.port}/`;
  const otherUrl = `http://127.0.0.1:${other.addr.port}/`;
  const call = (id: string, name: string, args: unknown) =>
    `      - tool_calls: [{ id: ${id}, name: ${name}, args: ${JSON.stringify(args)} }]`;
  const turns = [
    call("w1", "write_file", { path: "/input/revenue.csv", content: "x" }),
    call("w2", "write_input", { name: "revenue.csv", text: "x" }),
    call("r1", "read_host_file", { path: "/etc/passwd" }),
    call("n1", "fetch_url", { url: otherUrl }),
    call("e1", "read_env", { name: "HOME" }),
    call("p1", "start_program", { program: "ls" }),
    call("ok1", "fetch_url", { url: grantedUrl }),
    call("ok2", "scratch_write", { text: "kept" }),
    `      - text: "done"`,
  ].join("\n");
  const file = agentFile(turns, {
    extra: `  tools_folder: fixtures/agent/tools\n  net: ["127.0.0.1:${granted.addr.port}"]`,
    inputs: INPUTS,
  });
  const outcome = await runFile(file, { catalog: t.catalog, runs: t.runs });
  assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
  const { events, record } = await eventsOf(t.runs, outcome.runId);
  const byId = new Map(events.filter((e) => e.type === "tool_called").map((e) => [e.data.call_id, e]));
  assert.equal(byId.get("w1")!.data.error, "PathRefused");
  for (const id of ["w2", "r1", "n1", "e1", "p1"]) {
    assert.equal(byId.get(id)!.data.error, "NotCapable", `${id}: ${byId.get(id)!.data.message}`);
    assert.equal(byId.get(id)!.data.result_payload, null);
  }
  assert.match(String(byId.get("r1")!.data.message), /read access to "\/etc\/passwd"/);
  assert.match(
    String(byId.get("n1")!.data.message),
    new RegExp(`net access to "127.0.0.1:${other.addr.port}"`),
  );
  assert.match(String(byId.get("e1")!.data.message), /env access to "HOME"/);
  assert.match(String(byId.get("p1")!.data.message), /run access to "ls"/);
  assert.match(String(byId.get("w2")!.data.message), /write access to .*input\/revenue\.csv/);
  assert.equal(byId.get("ok1")!.data.error, null, String(byId.get("ok1")!.data.message));
  assert.equal(
    await payloadOf(t.runs, outcome.runId, byId.get("ok1")!.data.result_payload as string),
    "granted",
  );
  assert.equal(
    await payloadOf(t.runs, outcome.runId, byId.get("ok2")!.data.result_payload as string),
    "written",
  );
  assert.equal(await Deno.readTextFile(join(outcome.folder, "scratch", "note.txt")), "kept");
  const started = events.find((e) => e.type === "sandbox_started")!;
  const names = (started.data.tools as { name: string; kind: string }[]).map((x) => `${x.kind}:${x.name}`);
  assert.ok(names.includes("folder:read_host_file") && names.includes("builtin:read_file"), names.join());
  // The input was not changed, and the run went on to the end.
  assert.equal(await Deno.readTextFile(join(outcome.folder, "input", "revenue.csv")), CSV);
  assert.equal(events.find((e) => e.type === "input_verified")!.data.ok, true);
  assert.equal(events.at(-1)!.type, "run_completed");
  assert.deepEqual((await verifyRun(record)).problems, []);
});

Deno.test("a tool that loops forever is terminated at its time limit, recorded, and a fresh worker serves the next call", async () => {
  await using t = await gitCatalog({ "finance/revenue.csv": CSV });
  const turns = `      - tool_calls: [{ id: s1, name: spin }]
      - tool_calls: [{ id: r1, name: read_file, args: { path: /input/revenue.csv } }]
      - text: "done"`;
  const file = agentFile(turns, {
    extra: `  tools_folder: fixtures/agent/tools\n  limits: { tool_seconds: 0.5 }`,
    inputs: INPUTS,
  });
  const t0 = performance.now();
  const outcome = await runFile(file, { catalog: t.catalog, runs: t.runs });
  assert.ok(performance.now() - t0 < 60_000); // the spin never ends by itself: generous on a busy machine
  assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
  const { events } = await eventsOf(t.runs, outcome.runId);
  const tools = events.filter((e) => e.type === "tool_called");
  assert.equal(tools[0]!.data.tool, "spin");
  assert.equal(tools[0]!.data.error, "ToolTimeout");
  assert.match(String(tools[0]!.data.message), /limit of 0.5 s .*agent\.limits\.tool_seconds/);
  assert.equal(tools[1]!.data.error, null);
  const done = events.find((e) => e.type === "sandbox_completed")!;
  assert.equal(done.data.workers_terminated, 1);
  assert.equal(done.data.workers_started, 2);
});

Deno.test("Sandbox.call() refuses a tools module whose TOOLS is wrong, naming it", async () => {
  const dir = await Deno.makeTempDir();
  await Deno.writeTextFile(join(dir, "bad.ts"), `export const TOOLS = [{ name: "x", execute: () => 1 }];`);
  await assert.rejects(
    () => Sandbox.open(dir, { modules: [new URL(`file://${dir}/bad.ts`).href] }),
    /bad\.ts: tool "x": needs a description/,
  );
  await Deno.remove(dir, { recursive: true });
});

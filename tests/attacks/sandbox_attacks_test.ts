/**
 * The sandbox under attack: every tool of fixtures/attacks/tools/evil.ts is called in one agent run, and each
 * must be stopped (an error in its `tool_called`, or for the console forgery, its text kept in the record and
 * out of provr's output) and recorded, with the run going on to a sealed record that verifies. The same corpus
 * is stopped the same way in a compiled provr's sandbox role. Limits are generous (60 s) except for the two
 * attacks about time, which never end, so they meet any limit whatever the machine's load.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { verifyRun } from "../../lib/provevi/runs/verify_run.ts";
import { runFile } from "../../lib/provrun/runner/run.ts";
import { Sandbox } from "../../lib/provrun/sandbox/sandbox.ts";
import { agentFile, eventsOf } from "../provrun/_agent.ts";
import { selfCommand } from "../provrun/sandbox/_self.ts";
import { gitCatalog } from "../provrun/_catalog.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("sandbox attacks");

/** What each attack must end in: the error's name, or a check of the event. */
const TIMED: Record<string, string | RegExp> = { busy_loop: "ToolTimeout", redos: "ToolTimeout" };
const EXPECTED: Record<string, string | RegExp> = {
  read_passwd: "NotCapable",
  read_passwd_sync: "NotCapable",
  read_dev_stdin: "NotCapable",
  read_proc_environ: "NotCapable",
  read_env: "NotCapable",
  read_env_object: "NotCapable",
  node_env: /./,
  run_program: "NotCapable",
  run_deno: "NotCapable",
  net_ungranted: "NotCapable",
  net_listen: "NotCapable",
  ffi: "NotCapable",
  sys_hostname: "NotCapable",
  write_outside: "NotCapable",
  write_input: "NotCapable",
  chmod_input: "NotCapable",
  stdin_read: "NotCapable",
  node_stdin: "NotCapable",
  prompt_request: "NotCapable", // the process has --no-prompt, whatever provr was started with
  dynamic_import_file: /./,
  dynamic_import_remote: /./,
  dynamic_import_npm: /./,
  worker_inherit: "NotCapable", // no nested worker: it would start outside the sandbox's hooks
  kill_parent: "NotCapable",
  huge_result: /ResultTooLarge|SandboxExited/,
  memory_bomb: /SandboxExited|ToolTimeout/,
  exit_process: /SandboxExited|NotCapable/,
};
/** The imports that the sandbox's own hooks must refuse (a compiled provr's loader would not ask Deno). */
const HOOKED = ["dynamic_import_file", "dynamic_import_remote", "dynamic_import_npm"];

Deno.test("every attack of the corpus on the sandbox is stopped and recorded, and the run verifies", async () => {
  await using t = await gitCatalog({ "finance/revenue.csv": "quarter,revenue\nQ3,48.2\n" });
  const names = [...Object.keys(EXPECTED), "console_forgery", "node_stdout"];
  const turns = [
    ...names.map((name, i) => `      - tool_calls: [{ id: a${i}, name: ${name} }]`),
    `      - tool_calls: [{ id: last, name: read_file, args: { path: /input/revenue.csv } }]`,
    `      - text: "done"`,
  ].join("\n");
  const file = agentFile(turns, {
    extra: `  tools_folder: ${new URL("../../fixtures/attacks/tools", import.meta.url).pathname}\n` +
      `  limits: { tool_seconds: 60, tool_result_bytes: 1000000, steps: 100 }`,
    inputs: `inputs:\n  - { uri: "data://acme/demo/dev/finance/revenue.csv", as: revenue.csv }`,
  });
  const lock = new URL("../../deno.lock", import.meta.url);
  const lockBefore = await Deno.readTextFile(lock);
  const outcome = await runFile(file, { catalog: t.catalog, runs: t.runs });
  assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
  // A dynamic import of a package is refused without Deno writing it into the toolkit's lock.
  assert.equal(await Deno.readTextFile(lock), lockBefore);
  const { events, record } = await eventsOf(t.runs, outcome.runId);
  const calls = new Map(
    events.filter((e) => e.type === "tool_called").map((e) => [e.data.tool as string, e]),
  );
  const problems: string[] = [];
  for (const [name, expected] of Object.entries(EXPECTED)) {
    const event = calls.get(name);
    const error = event?.data.error as string | null | undefined;
    const stopped = typeof error === "string" &&
      (typeof expected === "string" ? error === expected : expected.test(error));
    const hooked = !HOOKED.includes(name) ||
      /the sandbox refuses the import/.test(String(event?.data.message));
    if (!stopped || !hooked) problems.push(`${name}: ${error} ${event?.data.message ?? ""}`);
    tally.add(name, { stopped: stopped && hooked, recorded: !!event && event.data.result_payload === null });
  }
  const forged = calls.get("console_forgery");
  const console = String(forged?.data.console ?? "");
  const kept = console.includes("run-20990101T000000Z-deadbeef\x1b[2J") && console.includes("raw stdout") &&
    console.includes('{"runId":"forged"}');
  if (!kept) problems.push(`console_forgery: console not recorded: ${JSON.stringify(console)}`);
  tally.add("console_forgery", { stopped: kept, recorded: !!forged });
  const node = calls.get("node_stdout");
  const nodeKept = node?.data.console === "node stdout\n";
  if (!nodeKept) problems.push(`node_stdout: console not recorded: ${JSON.stringify(node?.data.console)}`);
  tally.add("node_stdout", { stopped: nodeKept, recorded: !!node });
  // The run went on after every attack, and the file the tools could not touch is as it was.
  assert.equal(calls.get("read_file")?.data.error, null);
  assert.equal(events.at(-1)!.type, "run_completed");
  assert.deepEqual((await verifyRun(record)).problems.map((p) => p.message), []);
  await assert.rejects(() => Deno.stat("/tmp/provrun-attack-written"), Deno.errors.NotFound);
  assert.deepEqual(problems, []);
});

/** Calls each attack in a sandbox of its own start mode and gives the problems; counts each. */
async function attackSandbox(
  mode: "deno" | "self",
  attacks: Record<string, string | RegExp>,
  toolSeconds: number,
): Promise<string[]> {
  const dir = await Deno.makeTempDir();
  for (const sub of ["input", "output", "scratch"]) await Deno.mkdir(join(dir, sub));
  const module = new URL("../../fixtures/attacks/tools/evil.ts", import.meta.url).href;
  const problems: string[] = [];
  // A memory limit of 256 MB, not the default 512: memory_bomb meets it the same way for half the CPU it spends
  // filling the heap (1.7 CPU s at 512, 0.6 at 256), and huge_result's 64 MB still ends in ResultTooLarge (#25).
  const sandbox = await Sandbox.open(dir, {
    modules: [module],
    self: mode === "self" ? selfCommand() : null,
    toolSeconds,
    resultBytes: 1_000_000,
    memoryMb: 256,
  });
  try {
    for (const [name, expected] of Object.entries(attacks)) {
      let error = "";
      let message = "";
      try {
        await sandbox.call(name, {});
      } catch (e) {
        error = (e as Error).name;
        message = (e as Error).message;
      }
      const stopped = typeof expected === "string"
        ? error === expected
        : error !== "" && expected.test(error);
      const hooked = !HOOKED.includes(name) || /the sandbox refuses the import/.test(message);
      if (!stopped || !hooked) problems.push(`${mode} ${name}: ${error} ${message}`);
      tally.add(`${mode} ${name}`, { stopped: stopped && hooked, recorded: stopped });
    }
  } finally {
    await sandbox.close();
    await Deno.remove(dir, { recursive: true });
  }
  return problems;
}

// A tool that never ends meets any limit: a short one (the call's clock starts once its process is up, so a
// loaded machine cannot make a slow start look like a timeout) spins the tool for less CPU (#25).
Deno.test("a tool that never ends meets its time limit, whatever the load, in both start modes", async () => {
  assert.deepEqual([
    ...await attackSandbox("deno", TIMED, 0.5),
    ...await attackSandbox("self", TIMED, 0.5),
  ], []);
});

Deno.test("the whole corpus is stopped the same way in a compiled provr's sandbox role", async () => {
  assert.deepEqual(await attackSandbox("self", EXPECTED, 60), []);
});

Deno.test("a tools module whose static import reads a host file is refused before any tool runs, naming the import", async () => {
  const dir = await Deno.makeTempDir();
  for (const sub of ["input", "output", "scratch"]) await Deno.mkdir(join(dir, sub));
  const module = new URL("../../fixtures/attacks/static_text/evil.ts", import.meta.url).href;
  for (const mode of ["deno", "self"] as const) {
    let error: unknown = null;
    try {
      await (await Sandbox.open(dir, { modules: [module], self: mode === "self" ? selfCommand() : null }))
        .close();
    } catch (e) {
      error = e;
    }
    const stopped = error instanceof Error &&
      /the sandbox refuses the import of \/etc\/passwd from .*evil\.ts: it is outside the tools folder/.test(
        error.message,
      ) && !error.message.includes("\n");
    tally.add(`${mode} static text import`, { stopped, recorded: stopped });
    assert.ok(stopped, String(error));
  }
  await Deno.remove(dir, { recursive: true });
});

Deno.test("the sandbox attack counts", () => {
  console.log(tally.line());
  assert.equal(tally.missed.length, 0, tally.line());
});

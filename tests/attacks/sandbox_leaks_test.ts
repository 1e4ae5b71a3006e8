/**
 * What a tools module can learn without a grant (issue 23), in both ways a sandbox process starts (`deno run`
 * with the grants as flags, and provr started again in the sandbox role, as a compiled provr does): every probe
 * of fixtures/attacks/leaks/probe.ts is called, and nothing it returns, throws or writes may name a path
 * outside the run: the toolkit's folder, the tools folder, the home folder, Deno's cache, the program.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Sandbox } from "../../lib/provrun/sandbox/sandbox.ts";
import { selfCommand } from "../provrun/sandbox/_self.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("sandbox leaks");
const ROOT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
const PROBE = new URL("../../fixtures/attacks/leaks/probe.ts", import.meta.url);

/** What each probe must end in: `value` (it may answer, with nothing forbidden in it) or an error's name. */
const EXPECTED: Record<string, "value" | RegExp> = {
  exec_path: /NotCapable/,
  cwd: "value", // the run folder, which tools are given anyway
  process_cwd: "value",
  meta: "value",
  meta_resolve_package: /TypeError/,
  meta_resolve_relative: "value",
  helper_meta: "value",
  main_module: "value",
  stack: "value",
  package_stack: "value",
  stack_override: "value",
  capture_stack: "value",
  console_trace: "value",
  location: "value",
  args: "value",
  process_argv: "value",
  process_argv0_ways: "value",
  env_home: /NotCapable/,
  node_homedir: /NotCapable|Error/,
  node_tmpdir: /NotCapable|Error/,
  hostname: /NotCapable/,
  proc_exe: /NotCapable/,
  proc_cwd: /NotCapable/,
  proc_cmdline: /NotCapable/,
  internal: "value",
  builtin_module: /NotCapable/,
  import_node_module: /./,
  import_missing: /./,
  import_outside: /./,
  import_commonjs: /./,
  import_commonjs_deep: /./,
  import_esm_of_commonjs: /./,
  nested_worker: /NotCapable/,
  realpath_input: "value",
  runtime: "value",
};

function forbidden(run: string): string[] {
  const words = [ROOT, Deno.execPath(), new URL(".", PROBE).pathname.replace(/\/$/, "")];
  // The folders of the PATH that hold the program the sandbox starts by name (Deno.Command passes the full path
  // it finds as argv[0]).
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    for (const name of ["deno", "provr"]) {
      try {
        Deno.statSync(join(dir, name));
        if (dir && dir !== "/" && !run.startsWith(dir)) words.push(dir);
      } catch {
        // not there
      }
    }
  }
  for (const name of ["HOME", "DENO_DIR", "XDG_CACHE_HOME"]) {
    const value = Deno.env.get(name);
    if (value && value !== "/" && !run.startsWith(value)) words.push(value);
  }
  return words;
}

async function probeAll(mode: "deno" | "self"): Promise<string[]> {
  const dir = await Deno.makeTempDir({ prefix: "provr-leaks-" });
  for (const sub of ["input", "output", "scratch"]) await Deno.mkdir(join(dir, sub));
  const problems: string[] = [];
  const sandbox = await Sandbox.open(dir, {
    modules: [pathToFileURL(PROBE.pathname).href],
    self: mode === "self" ? selfCommand() : null,
    builtins: false,
    toolSeconds: 60,
  });
  try {
    assert.equal(sandbox.mode, mode);
    const words = forbidden(dir);
    for (const [name, expected] of Object.entries(EXPECTED)) {
      let seen: string;
      let error: string | null = null;
      try {
        const out = await sandbox.callWithConsole(name, {});
        seen = JSON.stringify(out);
      } catch (e) {
        error = (e as Error).name;
        seen = `${(e as Error).message} ${JSON.stringify((e as { console?: string }).console ?? "")}`;
      }
      const leaked = words.filter((w) => seen.includes(w));
      const ended = expected === "value" ? error === null : error !== null && expected.test(error);
      const stopped = leaked.length === 0 && ended;
      if (!stopped) {
        problems.push(`${mode} ${name}: ${error ?? "value"} ${seen.slice(0, 300)} (leaks ${leaked})`);
      }
      tally.add(`${mode} ${name}`, { stopped, recorded: true });
    }
  } finally {
    await sandbox.close();
    await Deno.remove(dir, { recursive: true });
  }
  return problems;
}

Deno.test("a tools module learns no path outside the run, run from source (deno run with the grants as flags)", async () => {
  assert.deepEqual(await probeAll("deno"), []);
});

Deno.test("a tools module learns no path outside the run in a compiled provr's sandbox role", async () => {
  assert.deepEqual(await probeAll("self"), []);
});

Deno.test("the sandbox leak counts", () => {
  console.log(tally.line());
  assert.equal(tally.missed.length, 0, tally.line());
});

import assert from "node:assert/strict";
import { denoDir } from "../_children.ts";
import { copyFolder } from "../_files.ts";

/** Runs a `deno task NAME` as deno.json writes it (its own permission flags), with these arguments. */
async function task(name: string, args: string[], env?: Record<string, string>) {
  const config = JSON.parse(await Deno.readTextFile("deno.json"));
  const words = (config.tasks[name] as string).split(" ").slice(1); // drop "deno"
  const out = await new Deno.Command(Deno.execPath(), {
    args: [...words, ...args],
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b).trim();
  return { code: out.code, out: text(out.stdout), err: text(out.stderr) };
}

for (const name of ["prove", "provr"]) {
  Deno.test(`deno task ${name} --help prints the help under the task's own permissions`, async () => {
    const r = await task(name, ["--help"]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^Usage: /);
    assert.doesNotMatch(r.err, /NotCapable/);
  });

  Deno.test(`deno task ${name} with no command prints the help and exits 2, without NotCapable`, async () => {
    const r = await task(name, []);
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, /^Usage: /);
    assert.doesNotMatch(r.err, /NotCapable/);
  });
}

/** A run file whose agent adds 1 and 2 through the fixture's Deno MCP server, started by this command. */
async function mcpRun(dir: string, command: string[]): Promise<string> {
  await Deno.writeTextFile(
    `${dir}/run.yaml`,
    `run: { org: acme, domain: demo, env: dev, actor: ada }
agent:
  name: adder
  backend: agent
  model: "test:"
  mcp: [{ name: calc, command: ${JSON.stringify(command)} }]
  script:
    turns:
      - tool_calls: [{ name: add, args: { a: 1, b: 2 } }]
      - text: "3"
prompt: Add 1 and 2.
`,
  );
  return `${dir}/run.yaml`;
}

async function assertAddedByMcp(runs: string, r: { code: number; out: string; err: string }) {
  assert.equal(r.code, 0, r.err);
  assert.doesNotMatch(r.err, /NotCapable/);
  const events = (await Deno.readTextFile(`${runs}/${r.out}/evidence/events.jsonl`)).trim().split("\n")
    .map((l) => JSON.parse(l));
  const called = events.find((e) => e.type === "tool_called");
  assert.equal(called?.data.executed_by, "mcp:calc");
  assert.equal(called?.data.error, null);
}

const MCP_SERVER = new URL("../../fixtures/mcp/server.ts", import.meta.url).pathname;

Deno.test("deno task provr runs an agent with a Deno MCP server under the task's own permissions", async () => {
  const dir = await Deno.makeTempDir();
  const r = await task("provr", ["--runs", `${dir}/runs`, "run", await mcpRun(dir, [MCP_SERVER])]);
  await assertAddedByMcp(`${dir}/runs`, r);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a Deno MCP server uses provr's module cache (DENO_DIR), not an empty one under its home", async () => {
  // With DENO_DIR set (and a home whose own cache is empty), the server was given only HOME: it looked in
  // that empty cache, fetched every package again, and timed out at a minute on a loaded machine. With
  // --cached-only, a server that looks in the wrong cache fails at once instead of fetching.
  const dir = await Deno.makeTempDir();
  await Deno.mkdir(`${dir}/home`);
  const file = await mcpRun(dir, ["deno", "run", "--cached-only", MCP_SERVER]);
  const r = await task("provr", ["--runs", `${dir}/runs`, "run", file], {
    DENO_DIR: denoDir(),
    HOME: `${dir}/home`,
    XDG_CACHE_HOME: `${dir}/home/.cache`,
  });
  await assertAddedByMcp(`${dir}/runs`, r);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("deno task bench with a name that is no benchmark says so, naming the benchmarks, and exits 2", async () => {
  const r = await task("bench", ["nosuch"]);
  assert.equal(r.code, 2);
  assert.match(r.err, /^bench: no benchmark is named "nosuch"; the benchmarks are .*verify/);
  assert.equal(r.err.split("\n").length, 1);
});

Deno.test("deno task prove, typed in another folder, takes relative paths from that folder", async () => {
  const dir = await Deno.makeTempDir();
  const root = new URL("../../", import.meta.url).pathname;
  await copyFolder(`${root}fixtures/runs`, `${dir}/myruns`);
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "--quiet", "--config", `${root}deno.json`, "prove", "--runs", "myruns", "runs", "--json"],
    cwd: dir,
    // As typed in a shell: a `deno task` that runs these tests has set INIT_CWD already, and a nested
    // `deno task` keeps the outer one's.
    clearEnv: true,
    env: Object.fromEntries(Object.entries(Deno.env.toObject()).filter(([k]) => k !== "INIT_CWD")),
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const rows = JSON.parse(new TextDecoder().decode(out.stdout));
  assert.deepEqual(rows.map((r: { run_id: string }) => r.run_id), ["run-20261129T120000Z-0badc0de"]);
  await Deno.remove(dir, { recursive: true });
});

for (const name of ["prove", "provr"]) {
  Deno.test(`deno task ${name} typed in a folder that is gone or is a file says so in one line`, async () => {
    const dir = await Deno.makeTempDir();
    await Deno.writeTextFile(`${dir}/file`, "");
    for (const [folder, why] of [[`${dir}/gone`, "does not exist"], [`${dir}/file`, "is not a folder"]]) {
      const r = await task(name, ["runs"], { INIT_CWD: folder! });
      assert.equal(r.code, 1, r.err);
      assert.equal(r.err, `${name}: the folder the command was typed in, "${folder}" (INIT_CWD), ${why}`);
    }
    await Deno.remove(dir, { recursive: true });
  });
}

import assert from "node:assert/strict";
import { join } from "node:path";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { checkPermissions, permissionNeeds } from "../../../lib/provrun/runner/permissions.ts";
import { startFakeOpenAI } from "../../../fixtures/providers/fake_openai_server.ts";
import { consoleBlocks } from "../../_console.ts";

function agentYaml(baseUrl: string, extra = ""): string {
  return `
run: { org: acme, domain: demo, env: dev, actor: ada, mode: strict }
agent:
  name: q
  backend: agent
  model: "openai-compatible:fake-4o"
  provider: { base_url: "${baseUrl}" }
${extra}
prompt: What was the revenue growth in Q3?
`;
}

Deno.test("permissionNeeds() lists the runs root, the provider's host, the tools' hosts, the sandbox process, MCP programs and their variables", () => {
  const file = RunFile.parse(
    agentYaml(
      "http://127.0.0.1:8123/v1",
      `  net: ["127.0.0.1:9000"]\n  mcp: [{ name: calc, command: [fixtures/mcp/server.ts] }, { name: web, url: "http://127.0.0.1:9100/mcp" }]`,
    ),
  );
  const flags = permissionNeeds(file, { runs: "/tmp/runs" }).map((n) => n.flag);
  assert.deepEqual(flags, [
    "--allow-read=/tmp/runs",
    "--allow-write=/tmp/runs",
    "--allow-net=127.0.0.1:8123",
    "--allow-net=127.0.0.1:9000",
    "--allow-run=deno",
    "--allow-run=deno",
    "--allow-net=127.0.0.1:9100",
    ...["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "OSTYPE", "NODE_V8_COVERAGE"].map((v) =>
      `--allow-env=${v}`
    ),
  ]);
});

Deno.test("checkPermissions() passes in a process that has what the run needs", async () => {
  await checkPermissions(RunFile.parse(agentYaml("http://127.0.0.1:8123/v1")), { runs: "/tmp/runs" });
});

async function provr(flags: string[], runs: string, file: string) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...flags, "cli/provr.ts", "--runs", runs, "run", file],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

Deno.test("provr without net for the provider's host refuses to start, with one line naming the flag, and writes nothing", async () => {
  await using server = startFakeOpenAI();
  const dir = await Deno.makeTempDir();
  const runs = join(dir, "runs");
  const file = join(dir, "run.yaml");
  await Deno.writeTextFile(file, agentYaml(server.baseUrl));
  const base = ["--allow-read", "--allow-write", "--allow-env", "--allow-sys=hostname"];
  const refused = await provr(base, runs, file);
  assert.equal(refused.code, 1, refused.stderr);
  const lines = refused.stderr.trim().split("\n");
  assert.equal(lines.length, 1, refused.stderr);
  assert.match(
    lines[0]!,
    new RegExp(`^provr: .*lacks --allow-net=${server.host.replace(".", "\\.")}, which the model provider`),
  );
  assert.equal(server.bodies.length, 0);
  assert.deepEqual(await Array.fromAsync(Deno.readDir(runs)).catch(() => []), []);

  // An agent run's tools run in a sandbox process, a Deno child.
  const ran = await provr([...base, `--allow-net=${server.host}`, "--allow-run=deno"], runs, file);
  assert.equal(ran.code, 0, ran.stderr);
  assert.match(ran.stdout, /run-\d{8}T\d{6}Z-[0-9a-f]{8}/);
  assert.equal(server.bodies.length, 1);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("permissionNeeds() names the variable of agent.provider.api_key_env, and cp for a run with inputs", () => {
  const file = RunFile.parse(`
run: { org: acme, domain: demo, env: dev }
agent:
  name: q
  backend: call
  model: "openai-compatible:llama3.1"
  provider: { base_url: "http://127.0.0.1:11434/v1", api_key_env: OLLAMA_KEY }
prompt: hi
inputs: [{ uri: "file:///tmp/revenue.csv" }]
`);
  const needs = permissionNeeds(file, { runs: "/tmp/runs" });
  const key = needs.find((n) => n.flag === "--allow-env=OLLAMA_KEY")!;
  assert.equal(key.why, "agent.provider.api_key_env");
  assert.match(key.hint!, /PROVR_KEY_OLLAMA_KEY, which deno task provr allows/);
  assert.ok(needs.some((n) => n.flag === "--allow-run=cp"));
});

/** Runs `deno task provr` as deno.json writes it (its own flags), in a folder, with these variables. */
async function taskProvr(folder: string, args: string[], env: Record<string, string>) {
  const config = JSON.parse(await Deno.readTextFile("deno.json"));
  const words = (config.tasks.provr as string).split(" ").slice(1);
  const out = await new Deno.Command(Deno.execPath(), {
    args: [...words, ...args],
    env: { ...env, INIT_CWD: folder },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

Deno.test("deno task provr reads an api_key_env of the PROVR_KEY_ family; another name is refused at the start, naming the flag", async () => {
  await using server = startFakeOpenAI();
  const dir = await Deno.makeTempDir();
  const yaml = (name: string) =>
    `run: { org: acme, domain: demo, env: dev }
agent:
  name: q
  backend: call
  model: "openai-compatible:fake-4o"
  provider: { base_url: "${server.baseUrl}", api_key_env: ${name} }
prompt: hi
`;
  await Deno.writeTextFile(join(dir, "family.yaml"), yaml("PROVR_KEY_OLLAMA"));
  await Deno.writeTextFile(join(dir, "other.yaml"), yaml("OLLAMA_KEY"));
  const env = { PROVR_KEY_OLLAMA: "k-1", OLLAMA_KEY: "k-2" };
  const ran = await taskProvr(dir, ["--runs", join(dir, "runs"), "run", "family.yaml"], env);
  assert.equal(ran.code, 0, ran.stderr);
  assert.doesNotMatch(ran.stderr, /NotCapable/);
  const refused = await taskProvr(dir, ["--runs", join(dir, "runs"), "run", "other.yaml"], env);
  assert.equal(refused.code, 1);
  const lines = refused.stderr.trim().split("\n");
  assert.equal(lines.length, 1, refused.stderr);
  assert.match(
    lines[0]!,
    /^provr: the run cannot start: this process lacks --allow-env=OLLAMA_KEY, which agent\.provider\.api_key_env needs; .*or name the variable PROVR_KEY_OLLAMA_KEY/,
  );
  await Deno.remove(dir, { recursive: true });
});

Deno.test("docs/sandbox.md, Narrowing them: the example runs as written, ends in the one-line refusal, then in the missing key", async () => {
  const doc = await Deno.readTextFile("docs/sandbox.md");
  const section = doc.slice(
    doc.indexOf("### Narrowing them"),
    doc.indexOf("\n## ", doc.indexOf("### Narrowing them")),
  );
  const steps = consoleBlocks(section).flatMap((b) => b.steps);
  assert.equal(steps.length, 3, "the run file, the narrowed command and the widened one");
  const home = await Deno.makeTempDir();
  const run = async (command: string) => {
    const out = await new Deno.Command("sh", {
      args: ["-c", command],
      cwd: home,
      env: { HOME: home, DENO_DIR: Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno` },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    return { code: out.code, stderr: new TextDecoder().decode(out.stderr).trim() };
  };
  const cli = (command: string) => command.replace(" cli/provr.ts ", ` ${join(Deno.cwd(), "cli/provr.ts")} `);
  assert.equal((await run(steps[0]!.command)).code, 0);
  const refused = await run(cli(steps[1]!.command));
  assert.equal(refused.code, 1, refused.stderr);
  assert.equal(refused.stderr, steps[1]!.expected.join("\n"));
  const widened = await run(cli(steps[2]!.command));
  assert.equal(widened.code, 1, widened.stderr);
  assert.match(widened.stderr.split("\n").at(-1)!, /OPENAI_API_KEY/);
  await Deno.remove(home, { recursive: true });
});

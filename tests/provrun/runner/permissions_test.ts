import assert from "node:assert/strict";
import { join } from "node:path";
import { checkPermissions, permissionNeeds, RunFile } from "../../../lib/provrun/mod.ts";
import { startFakeOpenAI } from "../../../fixtures/providers/fake_openai_server.ts";

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

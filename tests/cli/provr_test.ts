import assert from "node:assert/strict";
import { join } from "node:path";
import { bufferIo } from "../../cli/_io.ts";
import { provr } from "../../cli/provr.ts";

async function run(args: string[]) {
  const io = bufferIo();
  const code = await provr(args, io);
  return { code, out: io.stdout.join("\n"), err: io.stderr.join("\n") };
}

async function runFileText(text: string): Promise<{ dir: string; path: string }> {
  const dir = await Deno.makeTempDir();
  const path = join(dir, "run.yaml");
  await Deno.writeTextFile(path, text);
  return { dir, path };
}

const GOOD = `run: { org: acme, domain: demo, env: dev, actor: ada }
agent:
  name: q
  backend: call
  model: "test:"
  script: { turns: [{ text: "forty-two" }] }
prompt: What is the answer?
`;

Deno.test("provr run prints the run ID and exits 0; provr verify passes the run", async () => {
  const { dir, path } = await runFileText(GOOD);
  const r = await run(["--runs", join(dir, "runs"), "run", path]);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /^run-\d{8}T\d{6}Z-[0-9a-f]{8}$/);
  const v = await run(["--runs", join(dir, "runs"), "verify", r.out]);
  assert.equal(v.code, 0);
  assert.equal(await Deno.readTextFile(join(dir, "runs", r.out, "output", "answer.txt")), "forty-two");
  await Deno.remove(dir, { recursive: true });
});

Deno.test("provr run exits 1 when the run fails, and says why in one line after the line that names the run", async () => {
  const { dir, path } = await runFileText(
    GOOD.replace('{ text: "forty-two" }', "{ error: { status: 500, message: boom } }"),
  );
  const r = await run(["--runs", join(dir, "runs"), "run", path]);
  assert.equal(r.code, 1);
  assert.match(r.err, /^provr: run (run-\S+) in \S+\/\1\nprovr: run \1 failed: AI_APICallError: boom$/);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("provr run refuses a bad run file in one line, and writes no run", async () => {
  const { dir, path } = await runFileText(GOOD + "colour: red\n");
  const r = await run(["--runs", join(dir, "runs"), "run", path]);
  assert.equal(r.code, 1);
  assert.equal(r.err.split("\n").length, 1);
  assert.match(r.err, /colour \(line 8\): unknown key/);
  await assert.rejects(() => Deno.stat(join(dir, "runs")));
  await Deno.remove(dir, { recursive: true });
});

Deno.test("provr run of a run file that is not there says so as a person would, and where a relative path is taken from", async () => {
  const dir = await Deno.makeTempDir();
  const r = await run(["--runs", join(dir, "runs"), "run", "no-such-run.yaml"]);
  assert.equal(r.code, 1);
  assert.equal(
    r.err,
    `provr: no-such-run.yaml: cannot be read: there is no such file (a relative path is taken from ${Deno.cwd()})`,
  );
  const absolute = await run(["--runs", join(dir, "runs"), "run", join(dir, "gone.yaml")]);
  assert.equal(absolute.err, `provr: ${join(dir, "gone.yaml")}: cannot be read: there is no such file`);
  await assert.rejects(() => Deno.stat(join(dir, "runs")));
  await Deno.remove(dir, { recursive: true });
});

Deno.test("provr run --json prints the outcome", async () => {
  const { dir, path } = await runFileText(GOOD);
  const r = await run(["--runs", join(dir, "runs"), "run", path, "--json"]);
  const outcome = JSON.parse(r.out);
  assert.equal(outcome.status, "completed");
  assert.equal(outcome.manifest.events, 7);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("provr run with only file:/// inputs needs no provcat.yaml, and an empty provcat.yaml is an empty config", async () => {
  const dir = await Deno.makeTempDir();
  await Deno.writeTextFile(join(dir, "data.csv"), "a,b\n1,2\n");
  const path = join(dir, "run.yaml");
  await Deno.writeTextFile(
    path,
    `run: { org: acme, domain: demo, env: dev }
agent: { name: q, backend: call, model: "test:", script: { turns: [{ text: "ok" }] } }
prompt: hi
inputs: [{ uri: "file://${join(dir, "data.csv")}" }]
`,
  );
  // The tests run in the project's folder, which has no provcat.yaml.
  try {
    const r = await run(["--runs", join(dir, "runs"), "run", path]);
    assert.equal(r.code, 0, r.err);
    await Deno.writeTextFile(join(dir, "empty.yaml"), "# nothing yet\n");
    const ls = await run(["catalog", "--config", join(dir, "empty.yaml"), "ls", `file://${dir}`]);
    assert.doesNotMatch(ls.err, /not a mapping/);
    assert.equal(ls.code, 0, ls.err);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("deno task provr run without the model's key refuses before the run starts: one line, exit 1, no run folder", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      join(dir, "run.yaml"),
      `run: { org: acme, domain: demo, env: dev }
agent: { name: q, backend: call, model: "openai:gpt-4o-mini" }
prompt: What was the revenue growth?
`,
    );
    const root = new URL("../../", import.meta.url).pathname;
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "task",
        "--quiet",
        "--config",
        join(root, "deno.json"),
        "provr",
        "--runs",
        "runs",
        "run",
        "run.yaml",
      ],
      cwd: dir,
      clearEnv: true,
      env: {
        HOME: dir,
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        DENO_DIR: Deno.env.get("DENO_DIR") ?? join(Deno.env.get("HOME") ?? "/root", ".cache", "deno"),
      },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 1, stderr);
    assert.equal(
      stderr,
      "provr: the model route openai:gpt-4o-mini needs the variable OPENAI_API_KEY; set it, or use a test: model\n",
    );
    assert.equal(new TextDecoder().decode(out.stdout), "");
    assert.deepEqual(await Array.fromAsync(Deno.readDir(join(dir, "runs"))).catch(() => []), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/**
 * The tasks under a real terminal: a pseudo-terminal made by util-linux `script`, so that Deno would stop at a
 * permission prompt (`Deno requests env access … Allow? [y/n/A]`) if a task asked for more than its flags. Each
 * task passes `--no-prompt`, and reads only the variables it names, so none asks.
 */
import assert from "node:assert/strict";
import { join } from "node:path";

const ROOT = new URL("../../", import.meta.url).pathname;

async function haveScript(): Promise<boolean> {
  try {
    return (await new Deno.Command("script", { args: ["--version"], stdout: "null", stderr: "null" })
      .output())
      .success;
  } catch {
    return false;
  }
}

/** Runs a shell command line in a pseudo-terminal, in a scratch home; returns what the terminal showed. */
async function inTerminal(line: string, home: string): Promise<{ code: number; screen: string }> {
  const denoDir = Deno.env.get("DENO_DIR") ?? join(Deno.env.get("HOME") ?? "/root", ".cache", "deno");
  const out = await new Deno.Command("script", {
    args: ["-qec", line, "/dev/null"],
    clearEnv: true,
    env: {
      HOME: home,
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      TERM: "xterm",
      DENO_DIR: denoDir,
      USER: "ada",
    },
    stdin: "null",
    signal: AbortSignal.timeout(240_000), // a prompt waits for a key: stop it, and show what it asked
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  return { code: out.code, screen: text };
}

const deno = Deno.execPath();

Deno.test("deno task tour and deno task provr run, in a terminal, finish without a permission prompt", async () => {
  if (!(await haveScript())) {
    if (Deno.env.get("CI")) throw new Error("util-linux script is missing: install util-linux");
    console.warn("skipped: util-linux `script` is not installed");
    return;
  }
  const home = await Deno.makeTempDir({ prefix: "no-prompt-" });
  try {
    const tour = await inTerminal(`${deno} task --quiet --config ${ROOT}deno.json tour`, home);
    assert.doesNotMatch(tour.screen, /Deno requests|Allow\?|NotCapable/, tour.screen);
    assert.equal(tour.code, 0, tour.screen);
    assert.match(tour.screen, /the evidence, the outputs and the committed bundle .* verify/);

    await Deno.writeTextFile(
      join(home, "run.yaml"),
      `run: { org: acme, domain: demo, env: dev }
agent: { name: q, backend: call, model: "test:", script: { turns: [{ text: "forty-two" }] } }
prompt: What is six times seven?
outputs: [answer.txt]
`,
    );
    const run = await inTerminal(
      `cd ${home} && ${deno} task --quiet --config ${ROOT}deno.json provr run run.yaml`,
      home,
    );
    assert.doesNotMatch(run.screen, /Deno requests|Allow\?|NotCapable/, run.screen);
    assert.equal(run.code, 0, run.screen);
    assert.match(run.screen, /run-\d{8}T\d{6}Z-[0-9a-f]{8}/);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("every task and the compile task pass --no-prompt to each deno they run", async () => {
  const tasks = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json"))).tasks as Record<string, string>;
  for (const [name, line] of Object.entries(tasks)) {
    for (const m of line.matchAll(/deno (run|compile|test|install)\b[^&]*/g)) {
      assert.match(m[0], /--no-prompt/, `deno task ${name}: ${m[0].slice(0, 60)}… lacks --no-prompt`);
    }
  }
});

Deno.test("every task's line is short: each deno it runs takes a permission set of deno.json, not a list of flags", async () => {
  const config = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json")));
  for (const [name, line] of Object.entries(config.tasks as Record<string, string>)) {
    for (const command of line.split("&&").map((c) => c.trim())) {
      assert.ok(
        command.length <= 160,
        `deno task ${name}: ${command.length} characters: ${command.slice(0, 60)}…`,
      );
      if (/^deno (run|compile)\b/.test(command)) {
        const set = command.match(/ -P=([\w-]+) /)?.[1];
        assert.ok(
          set && config.permissions[set],
          `deno task ${name} names a permission set of deno.json: ${command}`,
        );
        assert.doesNotMatch(command, /--allow-(read|write|env|net|sys)\b/, `deno task ${name}`);
      }
    }
  }
});

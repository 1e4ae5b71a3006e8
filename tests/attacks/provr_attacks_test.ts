/**
 * The sandbox attacks that show at the command line: `provr` started as its task starts it (without
 * `--no-prompt` too), with a tool that loops forever and a tool that writes a fake run ID and terminal escapes
 * to its console. provr exits promptly, its `--json` output is JSON, and the console text is in the record.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { taskRun } from "../_children.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("provr attacks");
const ROOT = new URL("../../", import.meta.url).pathname;

/** The provr task's words, without `--no-prompt` when asked: the sandbox must not depend on them. */
function provrWords(options: { prompt?: boolean } = {}): string[] {
  const words = taskRun("provr");
  return options.prompt ? words.filter((f) => f !== "--no-prompt") : words;
}

async function provr(args: string[], options: { prompt?: boolean; timeout: number }) {
  const child = new Deno.Command(Deno.execPath(), {
    args: [...provrWords(options), ...args],
    cwd: ROOT,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode("y\ny\ny\n")); // what a careless user answers to a prompt
  await writer.close();
  const started = performance.now();
  const timer = setTimeout(() => child.kill("SIGKILL"), options.timeout);
  const out = await child.output();
  clearTimeout(timer);
  return {
    code: out.code,
    seconds: (performance.now() - started) / 1000,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

async function runFile(dir: string, turns: string): Promise<string> {
  const path = join(dir, "run.yaml");
  await Deno.writeTextFile(
    path,
    `run: { org: acme, domain: demo, env: dev, actor: ada }
agent:
  name: attacker
  backend: agent
  model: "test:"
  tools_folder: ${join(ROOT, "fixtures/attacks/tools")}
  limits: { tool_seconds: 1 }
  script:
    turns:
${turns}
      - text: "done"
prompt: Attack.
`,
  );
  return path;
}

Deno.test("provr exits promptly after a run whose tool loops forever, with the call recorded as ToolTimeout", async () => {
  const dir = await Deno.makeTempDir({ prefix: "attack-provr-" });
  const file = await runFile(
    dir,
    `      - tool_calls: [{ id: b1, name: busy_loop }]\n      - tool_calls: [{ id: b2, name: redos }]`,
  );
  const r = await provr(["--runs", join(dir, "runs"), "run", "--json", file], {
    prompt: true,
    timeout: 120_000,
  });
  const outcome = JSON.parse(r.stdout) as { run_id: string; status: string };
  const events = (await Deno.readTextFile(join(dir, "runs", outcome.run_id, "evidence", "events.jsonl")))
    .trim().split(
      "\n",
    )
    .map((l) => JSON.parse(l));
  const timeouts = events.filter((e) => e.type === "tool_called" && e.data.error === "ToolTimeout").length;
  // Two calls of a second each, the process start and the seal: well under 60 s however busy the machine, and a
  // provr that waited on its tools would stay until the test kills it at 120 s.
  const prompt = r.seconds < 60 && r.code === 0;
  tally.add("busy tool (loop and ReDoS), provr exits", { stopped: prompt, recorded: timeouts === 2 });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(timeouts, 2);
  assert.ok(r.seconds < 60, `provr took ${r.seconds} s`);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a tool's console never reaches provr's output: provr run --json stays JSON, and the text is in the record", async () => {
  const dir = await Deno.makeTempDir({ prefix: "attack-provr-" });
  const file = await runFile(
    dir,
    `      - tool_calls: [{ id: c1, name: console_forgery }]\n      - tool_calls: [{ id: c2, name: stdin_read }]`,
  );
  const r = await provr(["--runs", join(dir, "runs"), "run", "--json", file], {
    prompt: true,
    timeout: 60_000,
  });
  assert.equal(r.code, 0, r.stderr);
  let outcome: { run_id: string } | null = null;
  try {
    outcome = JSON.parse(r.stdout);
  } catch {
    outcome = null;
  }
  const clean = outcome !== null && !r.stdout.includes("\x1b") && !r.stderr.includes("deadbeef");
  const events = outcome
    ? (await Deno.readTextFile(join(dir, "runs", outcome.run_id, "evidence", "events.jsonl"))).trim().split(
      "\n",
    )
      .map((l) => JSON.parse(l))
    : [];
  const forged = events.find((e) => e.type === "tool_called" && e.data.tool === "console_forgery");
  const stdin = events.find((e) => e.type === "tool_called" && e.data.tool === "stdin_read");
  tally.add("console forgery at the command line", {
    stopped: clean,
    recorded: String(forged?.data.console).includes("run-20990101T000000Z-deadbeef"),
  });
  tally.add("a tool reads provr's stdin", { stopped: stdin?.data.error === "NotCapable", recorded: !!stdin });
  assert.ok(clean, r.stdout);
  assert.ok(String(forged?.data.console).includes("deadbeef\x1b[2J"));
  assert.equal(stdin?.data.error, "NotCapable");
  await Deno.remove(dir, { recursive: true });
});

Deno.test("the provr attack counts", () => {
  console.log(tally.line());
  assert.equal(tally.missed.length, 0, tally.line());
});

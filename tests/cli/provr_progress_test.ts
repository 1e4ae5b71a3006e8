/**
 * `provr run`'s progress line: on a terminal (a pseudo-terminal made by util-linux `script`) it shows the step,
 * the elapsed time, the tokens and the model's text as it streams, cut to the terminal's width; in a pipe,
 * nothing.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { bufferIo } from "../../cli/_io.ts";
import { runProgress } from "../../cli/_progress.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const deno = Deno.execPath();

async function haveScript(): Promise<boolean> {
  try {
    return (await new Deno.Command("script", { args: ["--version"], stdout: "null", stderr: "null" })
      .output())
      .success;
  } catch {
    return false;
  }
}

const RUN_FILE = `run: { org: acme, domain: demo, env: dev }
agent:
  name: q
  backend: call
  model: "test:"
  stream: true
  script:
    turns:
      - text: "Let me think.\\nThe answer is forty-two, as the book says, and nothing else will do here."
        usage: { input: 7, output: 5 }
        delay_ms: 1500
        piece_ms: 40
prompt: What is six times seven?
outputs: [answer.txt]
`;

function env(home: string): Record<string, string> {
  return {
    HOME: home,
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    TERM: "xterm",
    DENO_DIR: Deno.env.get("DENO_DIR") ?? join(Deno.env.get("HOME") ?? "/root", ".cache", "deno"),
    USER: "ada",
  };
}

Deno.test("provr run on a terminal shows the model's text as it streams, cut to the width; in a pipe nothing", async () => {
  if (!(await haveScript())) {
    if (Deno.env.get("CI")) throw new Error("util-linux script is missing: install util-linux");
    console.warn("skipped: util-linux `script` is not installed");
    return;
  }
  const home = await Deno.makeTempDir({ prefix: "provr-progress-" });
  try {
    await Deno.writeTextFile(join(home, "run.yaml"), RUN_FILE);
    const line =
      `stty cols 60 rows 20; cd ${home} && ${deno} task --quiet --config ${ROOT}deno.json provr run run.yaml`;
    const tty = await new Deno.Command("script", {
      args: ["-qec", line, "/dev/null"],
      clearEnv: true,
      env: env(home),
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(240_000),
    }).output();
    const screen = new TextDecoder().decode(tty.stdout);
    assert.equal(tty.code, 0, screen);
    const frames = screen.split("\r\x1b[2K").slice(1).map((f) => f.split(/\r?\n/)[0]!);
    const texts = frames.filter((f) => f.includes("| "));
    assert.ok(texts.length > 0, `no progress line showed the model's text:\n${JSON.stringify(frames)}`);
    assert.ok(texts.some((f) => /\| (The answer is|…)/.test(f)), JSON.stringify(texts));
    assert.ok(texts.some((f) => / do here\.$/.test(f)), "the end of the streamed line shows");
    assert.ok(frames.some((f) => /step \d+ model_called +12 tokens/.test(f)), JSON.stringify(frames));
    for (const f of frames) assert.ok([...f].length <= 59, `wider than the terminal: ${JSON.stringify(f)}`);
    assert.ok(texts.some((f) => f.includes("| …")), "a long line keeps its end, after …");
    // While the model is silent, the line is redrawn with the same step and a later time.
    const silent = frames.filter((f) => / step \d+ prompt_rendered +0 tokens$/.test(f)).map((f) =>
      f.split("s ")[0]
    );
    assert.ok(
      new Set(silent).size >= 2,
      `the clock did not move while the model was silent: ${JSON.stringify(frames)}`,
    );

    // In a pipe: the run ID on standard error, no progress line.
    const piped = await new Deno.Command(deno, {
      args: ["task", "--quiet", "--config", `${ROOT}deno.json`, "provr", "run", "run.yaml"],
      cwd: home,
      clearEnv: true,
      env: env(home),
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const err = new TextDecoder().decode(piped.stderr);
    assert.equal(piped.code, 0, err);
    assert.ok(!err.includes("\x1b[2K") && !err.includes("The answer"), err);
    assert.match(err, /^provr: run run-\S+ in /);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("the progress line keeps the last line of the streamed text, and clears itself at the end", () => {
  const lines: string[] = [];
  let clock = 0;
  const io = { ...bufferIo(), terminal: true, progress: (l: string) => void lines.push(l) };
  const never = () => () => {};
  const progress = runProgress(io, { now: () => clock, width: undefined, every: never });
  progress.event("model_called", 3, { data: { input_tokens: 10, output_tokens: 2 } });
  clock += 100;
  progress.text("Hello\n\nwor");
  progress.text("ld  again"); // within 50 ms of the last draw: not drawn alone
  clock += 100;
  progress.text("!");
  const narrow = runProgress(io, { now: () => clock, width: 60, every: never });
  narrow.event("model_called", 4, { data: {} });
  clock += 100;
  narrow.text(" the start of a line that is far too long for a terminal sixty columns wide");
  progress.done();
  assert.deepEqual(lines, [
    "provr: 0.0s  step 3 model_called  12 tokens",
    "provr: 0.1s  step 3 model_called  12 tokens  | wor",
    "provr: 0.2s  step 3 model_called  12 tokens  | world again!",
    "provr: 0.0s  step 4 model_called  0 tokens",
    "provr: 0.1s  step 4 model_called  0 tokens  | …columns wide", // 59 columns: the width less one
    "",
  ]);
});

Deno.test("the progress line's clock moves while the model is silent, and stops when the run is done", () => {
  const lines: string[] = [];
  let clock = 0;
  let tick: (() => void) | null = null;
  let stopped = false;
  const io = { ...bufferIo(), terminal: true, progress: (l: string) => void lines.push(l) };
  const progress = runProgress(io, {
    now: () => clock,
    width: undefined,
    every: (t) => {
      tick = t;
      return () => void (stopped = true);
    },
  });
  clock += 300;
  tick!(); // before the first event: nothing shows
  progress.event("prompt_rendered", 3, { data: {} });
  clock += 1500; // the model is thinking: no event, no text
  tick!();
  clock += 1500;
  tick!();
  progress.done();
  assert.ok(stopped, "done() stops the clock");
  assert.deepEqual(lines, [
    "provr: 0.3s  step 3 prompt_rendered  0 tokens",
    "provr: 1.8s  step 3 prompt_rendered  0 tokens",
    "provr: 3.3s  step 3 prompt_rendered  0 tokens",
    "",
  ]);
});

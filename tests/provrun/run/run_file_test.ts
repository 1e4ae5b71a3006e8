import assert from "node:assert/strict";
import { RunFileError } from "../../../lib/provrun/run/errors.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";

const GOOD = `run: { org: acme, domain: demo, env: dev }
agent: { name: q, backend: call, model: "test:answer.yaml" }
prompt: hi
`;

function problems(text: string): string[] {
  try {
    RunFile.parse(text, { path: "/x/run.yaml" });
  } catch (error) {
    assert.ok(error instanceof RunFileError);
    assert.ok(error.message.startsWith("/x/run.yaml: "));
    return error.problems;
  }
  assert.fail("the run file was taken");
}

Deno.test("RunFile.parse() takes a run file and keeps its text", () => {
  const file = RunFile.parse(GOOD, { path: "/x/run.yaml" });
  assert.equal(file.data.agent.model, "test:answer.yaml");
  assert.equal(file.text, GOOD);
  assert.equal(file.folder, "/x");
});

Deno.test("RunFile.parse() refuses an unknown key with its path and line", () => {
  assert.deepEqual(problems(GOOD + "colour: red\n"), [
    "colour (line 4): unknown key; the keys here are run, experiment, agent, prompt, inputs, outputs, telemetry",
  ]);
});

Deno.test("RunFile.parse() refuses a key named twice with its path and line", () => {
  assert.deepEqual(problems(GOOD + "prompt: again\n"), ["prompt (line 4): is named twice"]);
});

Deno.test("RunFile.parse() refuses wrong types, each with its path and line, all at once", () => {
  const text = `run:
  org: acme
  domain: demo
  env: dev
  mode: loose
agent:
  name: q
  backend: call
  model: gpt-4o
  tools: read_file
  limits: { steps: 1.5, seconds: -1 }
prompt: [hi]
inputs:
  - uri: data://acme/demo/dev/x
    as: a/b
`;
  assert.deepEqual(problems(text), [
    "run.mode (line 5): must be one of strict, lenient",
    "agent.model (line 9): must be openai:MODEL, anthropic:MODEL, openai-compatible:MODEL or test:SCRIPT",
    "agent.tools (line 10): must be a list, not a single value",
    "agent.limits.steps (line 11): must be a whole number",
    "agent.limits.seconds (line 11): must be more than 0",
    "prompt (line 12): must be a text",
    "inputs[0].as (line 15): must be a file name",
  ]);
});

Deno.test("RunFile.parse() names a missing required key and a YAML syntax error", () => {
  assert.deepEqual(problems("run: { org: acme, domain: demo, env: dev }\nprompt: hi\n"), [
    'the run file (line 1): lacks the key "agent"',
  ]);
  assert.match(problems("run: [\n")[0]!, /line \d/);
});

Deno.test("RunFile.load() names a file that cannot be read", async () => {
  await assert.rejects(
    () => RunFile.load("/nonexistent/run.yaml"),
    /\/nonexistent\/run\.yaml: cannot be read/,
  );
});

Deno.test("RunFile.parse() refuses an output path or a staged name that leaves its folder", () => {
  const text = `${GOOD}inputs:
  - { uri: data://acme/demo/dev/x, as: .. }
  - { uri: data://acme/demo/dev/y, as: . }
  - { uri: data://acme/demo/dev/z, as: .hidden }
outputs: [../events.jsonl, a/../../b, sub/.., ok/answer.txt, a..b]
`;
  assert.deepEqual(problems(text), [
    "inputs[0].as (line 5): must be a file name",
    "inputs[1].as (line 6): must be a file name",
    "outputs[0] (line 8): must be a path under output/, without a .. segment",
    "outputs[1] (line 8): must be a path under output/, without a .. segment",
    "outputs[2] (line 8): must be a path under output/, without a .. segment",
  ]);
});

Deno.test("RunFile.parse() refuses a tree of aliases that expands too far, as a RunFileError, not a crash", () => {
  const levels = ["    a0: &a0 [x, x, x, x, x, x, x, x, x, x]"];
  for (let i = 1; i < 6; i++) levels.push(`    a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(", ")}]`);
  const text = `run: { org: acme, domain: demo, env: dev }
agent:
  name: q
  backend: call
  model: "test:"
  script:
${levels.join("\n")}
prompt: hi
`;
  const [problem] = problems(text);
  assert.match(problem!, /^cannot be expanded: .*alias.*; use fewer aliases/);
});

Deno.test("RunFile.parse() refuses half of a surrogate pair in any text, key or value, naming its line", () => {
  for (const half of ["\\uD800", "\\uDFFF", "x\\uDC00y"]) {
    const actor = `run: { org: acme, domain: demo, env: dev, actor: "${half}" }\n`;
    assert.deepEqual(problems(actor + GOOD.split("\n").slice(1).join("\n")), [
      `a text (line 1) holds half of a UTF-16 surrogate pair (such as "\\uD800"), which UTF-8 cannot hold: write ` +
      `the whole character, or remove it`,
    ]);
  }
  const key = GOOD.replace("agent: {", `agent: { "k\\uD83D": 1,`);
  assert.match(problems(key).join("\n"), /^a text \(line 2\) holds half of a UTF-16 surrogate pair/);
  // A whole pair (an emoji) is a character like any other.
  assert.equal(RunFile.parse(GOOD.replace("prompt: hi", 'prompt: "hi \\uD83D\\uDE00"')).data.prompt, "hi 😀");
});

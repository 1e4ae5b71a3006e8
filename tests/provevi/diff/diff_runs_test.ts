/**
 * `diffRuns` aligns two recorded runs step by step and names the first divergence and every difference: a
 * model answer, a prompt, a tool's arguments, the number of steps, how each run ended, tokens; the start two runs
 * share is found without parsing it; a streamed run's output tool belongs to the step that asked for it; `jsonDifference` names where two JSON
 * values first differ, whatever the order of their keys.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { RunRecord } from "../../../lib/provevi/evidence/record.ts";
import { diffRuns } from "../../../lib/provevi/diff/diff_runs.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { jsonDifference } from "../../../lib/provevi/diff/json_difference.ts";
import { readRunSteps } from "../../../lib/provevi/diff/run_steps.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";
import { linesOf, sharedStart } from "../../../lib/provevi/diff/run_steps.ts";
import { shownValue } from "../../../lib/provevi/diff/json_difference.ts";

const TURNS = (answer: string, path = "/output/a.txt") =>
  `      - tool_calls: [{ name: write_file, args: { path: ${path}, content: "x" } }]
        usage: { input: 10, output: 2 }
      - tool_calls: [{ name: list_files, args: { path: /output } }]
      - text: "${answer}"
        usage: { input: 20, output: 4 }`;

/** A run file whose scripted model reads its turns from script.yaml beside it: the same spec, any answers. */
function scripted(dir: string, options: { stream?: boolean; prompt?: string; extra?: string } = {}): RunFile {
  return RunFile.parse(
    `run: { org: acme, domain: demo, env: dev, actor: ada, mode: strict }
agent:
  name: analyst
  backend: agent
  model: "test:script.yaml"
  stream: ${options.stream ?? false}
${options.extra ?? ""}
prompt: ${options.prompt ?? "What was the revenue growth in Q3?"}
outputs: [answer.txt]
`,
    { path: join(dir, "run.yaml") },
  );
}

/** Records two runs, each with its turns (and run file), and compares them. */
async function withTwo(
  a: string,
  b: string,
  fn: (a: RunRecord, b: RunRecord, store: FileStore) => Promise<void>,
  files: { a?: Parameters<typeof scripted>[1]; b?: Parameters<typeof scripted>[1] } = {},
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "diff-" });
  const store = new FileStore({ runs: join(dir, "runs") });
  const record = async (turns: string, options: Parameters<typeof scripted>[1]) => {
    await Deno.writeTextFile(join(dir, "script.yaml"), `turns:\n${turns.replace(/^ {4}/gm, "")}\n`);
    return await store.readRun((await runFile(scripted(dir, options), { store })).runId);
  };
  try {
    await fn(await record(a, files.a), await record(b, files.b), store);
  } finally {
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("jsonDifference() names the first place two values differ, keys in sorted order, and null when equal", () => {
  assert.equal(jsonDifference({ b: 1, a: [1, { t: "x" }] }, { a: [1, { t: "x" }], b: 1 }), null);
  assert.deepEqual(jsonDifference({ p: [1, { t: "a" }] }, { p: [1, { t: "b" }] }), {
    path: "p[1].t",
    a: "a",
    b: "b",
  });
  assert.deepEqual(jsonDifference({ a: 1 }, { a: 1, z: undefined, b: 2 }), { path: "b", a: undefined, b: 2 });
  assert.deepEqual(jsonDifference([1, 2], [1]), { path: "[1]", a: 2, b: undefined });
  assert.deepEqual(jsonDifference({ "a b": 1 }, { "a b": "1" }), { path: '["a b"]', a: 1, b: "1" });
  assert.equal(shownValue("x".repeat(100), 10), `"xxxxxxxx…`);
});

Deno.test("two runs of one run file are identical step for step", async () => {
  await withTwo(TURNS("done"), TURNS("done"), async (a, b) => {
    const diff = await diffRuns(a, b);
    assert.ok(diff.identical, JSON.stringify(diff.first));
    assert.equal(diff.first, null);
    assert.deepEqual([diff.a.steps, diff.a.tokens], [3, { input: 30, output: 6 }]);
  });
});

Deno.test("a model answer that differs is the first divergence at its step, with where in the answer", async () => {
  await withTwo(TURNS("Revenue grew 12%."), TURNS("Revenue grew 13%."), async (a, b) => {
    const diff = await diffRuns(a, b);
    assert.equal(diff.identical, false);
    const first = diff.first!;
    assert.deepEqual([first.phase, first.step, first.what, first.path], [
      "step",
      3,
      "model_answer",
      "content[0].text",
    ]);
    assert.match(first.detail, /"Revenue grew 12%\." vs "Revenue grew 13%\."/);
    assert.deepEqual(first.a, { seq: first.a!.seq, type: "model_called" });
    // The answer went to the output too: the end differs as a consequence, listed after it.
    assert.deepEqual(diff.differences.map((d) => d.what), ["model_answer", "output"]);
  });
});

Deno.test("arguments that differ are the divergence at their step; the requests after them differ too", async () => {
  await withTwo(TURNS("done"), TURNS("done", "/output/b.txt"), async (a, b) => {
    const diff = await diffRuns(a, b);
    const [answer, args] = diff.differences;
    assert.deepEqual([answer!.step, answer!.what, answer!.path], [1, "model_answer", "content[0].input"]);
    assert.deepEqual([args!.step, args!.what, args!.path], [1, "arguments", "path"]);
    const step2 = diff.differences.find((d) => d.step === 2)!;
    assert.deepEqual([step2.what, step2.path?.startsWith("params.prompt")], ["prompt", true]);
    assert.ok(
      diff.differences.some((d) => d.what === "output" && /output\/a\.txt is in run A only/.test(d.detail)),
    );
  });
});

Deno.test("a run with fewer steps, and one that failed, differ in steps and verdict", async () => {
  const failing = `      - tool_calls: [{ name: write_file, args: { path: /output/a.txt, content: "x" } }]
        usage: { input: 10, output: 2 }
      - error: { status: 500, message: boom }`;
  await withTwo(TURNS("done"), failing, async (a, b) => {
    const diff = await diffRuns(a, b);
    const whats = diff.differences.map((d) => `${d.phase}:${d.what}`);
    assert.ok(whats.includes("step:model_answer"), whats.join(" "));
    assert.ok(whats.includes("step:steps"), whats.join(" "));
    assert.ok(whats.includes("end:verdict"), whats.join(" "));
    assert.equal(diff.b.status, "failed");
    assert.match(diff.b.error!, /AI_APICallError: boom/);
  });
});

Deno.test("a prompt that differs is the first divergence at the setup, and the first request's prompt", async () => {
  await withTwo(TURNS("done"), TURNS("done"), async (a, b) => {
    const diff = await diffRuns(a, b);
    assert.deepEqual([diff.first?.phase, diff.first?.what], ["setup", "prompt"]);
    assert.match(diff.first!.detail, /line 1: "What was the revenue growth in Q3\?" vs "And in Q4\?"/);
    assert.ok(diff.differences.some((d) => d.step === 1 && d.what === "prompt"));
  }, { b: { prompt: "And in Q4?" } });
});

Deno.test("past the refine budget a difference is told by its hashes alone", async () => {
  await withTwo(TURNS("a"), TURNS("b"), async (a, b) => {
    const diff = await diffRuns(a, b, { refine: 0 });
    assert.deepEqual([diff.first?.what, diff.first?.path], ["model_answer", null]);
  });
});

Deno.test("a streamed run's output tool is in the step that asked for it; the diff reads the record as it is", async () => {
  const final = `      - tool_calls: [{ name: final_answer, args: { answer: "42" } }]`;
  await withTwo(TURNS("done"), final, async (a, b, store) => {
    const steps = await readRunSteps(b);
    assert.equal(steps.steps.length, 1);
    assert.deepEqual(steps.steps[0]!.tools.map((t) => t.data.tool), ["final_answer"]);
    // A token count changed after the run: the diff says so (prove verify says the chain breaks there).
    const path = join(store.runsRoot, a.runId, "evidence", "events.jsonl");
    const text = await Deno.readTextFile(path);
    const before: RunRecord = {
      runId: a.runId,
      folder: a.folder,
      eventsText: () => Promise.resolve(text),
      manifestText: () => a.manifestText(),
      payloadNames: () => a.payloadNames(),
      payloadInfo: (sha) => a.payloadInfo(sha),
      payloadPack: () => a.payloadPack(),
      payload: (sha) => a.payload(sha),
    };
    await Deno.writeTextFile(path, text.replace('"input_tokens":20', '"input_tokens":2000'));
    const diff = await diffRuns(before, await store.readRun(a.runId));
    assert.deepEqual(diff.differences.map((d) => d.what), ["tokens"]);
    assert.equal(diff.b.tokens.input, 2010);
  }, { b: { stream: true, extra: "  tools: [final_answer]" } });
});

Deno.test("sharedStart() finds the start two runs share without parsing it, and the steps after it keep their numbers", async () => {
  await withTwo(TURNS("Revenue grew 12%."), TURNS("Revenue grew 13%."), async (a, b) => {
    const [la, lb] = [linesOf((await a.eventsText())!), linesOf((await b.eventsText())!)];
    const shared = sharedStart(la.lines, lb.lines);
    assert.deepEqual([shared.steps, shared.tokens], [1, { input: 10, output: 2 }]);
    assert.ok(la.lines[shared.lines]!.endsWith(',"type":"model_called"}'));
    assert.ok(la.lines[shared.from]!.endsWith(',"type":"model_called"}') && shared.from < shared.lines);
    const diff = await diffRuns(a, b);
    assert.deepEqual([diff.a.steps, diff.a.events, diff.a.tokens], [3, la.lines.length, {
      input: 30,
      output: 6,
    }]);
    assert.equal(diff.first?.step, 3);
  });
});

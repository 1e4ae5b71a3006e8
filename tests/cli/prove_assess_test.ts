import assert from "node:assert/strict";
import { join } from "node:path";
import { bufferIo } from "../../cli/_io.ts";
import { prove } from "../../cli/prove.ts";
import { SAMPLE_RUN_ID } from "../provevi/_sample_run.ts";
import { copyFolder } from "../_files.ts";

const FIXTURE = new URL(`../../fixtures/runs/${SAMPLE_RUN_ID}`, import.meta.url).pathname;

async function run(args: string[]) {
  const io = bufferIo();
  const code = await prove(args, io);
  return { code, out: io.stdout.join("\n"), err: io.stderr.join("\n") };
}

async function withRuns(fn: (runs: string) => Promise<void>): Promise<void> {
  const runs = await Deno.makeTempDir({ prefix: "prove-assess-" });
  try {
    await copyFolder(FIXTURE, join(runs, SAMPLE_RUN_ID));
    await fn(runs);
  } finally {
    await Deno.remove(runs, { recursive: true });
  }
}

Deno.test("prove assess on the file store keeps the judgement in the run folder; show lists it; verify checks it", () =>
  withRuns(async (runs) => {
    const a = await run(["--runs", runs, "assess", "latest", "correct", "true", "--source", "ada", "--json"]);
    assert.equal(a.code, 0, a.err);
    assert.deepEqual(JSON.parse(a.out).id, 1);
    assert.equal((await run(["--runs", runs, "assess", "latest", "score", "0.5", "--event", "8"])).code, 0);
    const show = await run(["--runs", runs, "show", "latest"]);
    assert.equal(show.code, 0, show.err);
    assert.ok(
      show.out.endsWith("\nassessments:\nrun      correct  true  ada\nevent 8  score    0.5   -"),
      show.out,
    );
    assert.equal((await run(["--runs", runs, "verify", "latest"])).code, 0);
    // A judgement changed by hand: the line after it no longer chains.
    const file = join(runs, SAMPLE_RUN_ID, "assessments.jsonl");
    await Deno.writeTextFile(file, (await Deno.readTextFile(file)).replace('"value":true', '"value":false'));
    const verify = await run(["--runs", runs, "verify", "latest", "--json"]);
    assert.equal(verify.code, 1);
    assert.deepEqual(
      JSON.parse(verify.out).problems.map((
        p: { code: string; file: string; line: number },
      ) => [p.code, p.file, p.line]),
      [["assessments.chain", "assessments.jsonl", 2]],
    );
  }));

Deno.test("prove assess refuses an experiment on the file store (exit 1), and --event or --span with an experiment (exit 2)", () =>
  withRuns(async (runs) => {
    const file = await run([
      "--runs",
      runs,
      "assess",
      "experiment://acme/risk/dev/credit/q",
      "approved",
      "true",
    ]);
    assert.deepEqual([file.code, file.out], [1, ""]);
    assert.match(file.err, /^prove: an assessment of an experiment needs a sqlite store: /);
    const named = await run(["--runs", runs, "assess", "--experiment", "q", "approved", "true"]);
    assert.equal(named.code, 1);
    for (const part of [["--event", "1"], ["--span", "0000000000000001"]]) {
      const r = await run(["--runs", runs, "assess", "--experiment", "q", "approved", "true", ...part]);
      assert.deepEqual([r.code, r.err], [
        2,
        "prove: --event and --span judge a part of a run, not of an experiment",
      ]);
    }
    const branch = await run([
      "--runs",
      runs,
      "assess",
      "experiment://acme/risk/dev/credit/q?at=branch:main",
      "x",
      "1",
    ]);
    assert.equal(branch.code, 1);
    assert.match(branch.err, /a branch moves$/);
  }));

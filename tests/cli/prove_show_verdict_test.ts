import assert from "node:assert/strict";
import { join } from "node:path";
import { bufferIo } from "../../cli/_io.ts";
import { prove } from "../../cli/prove.ts";
import { SAMPLE_RUN_ID } from "../provevi/_sample_run.ts";

const FIXTURES = new URL("../../fixtures/", import.meta.url).pathname;
const RUNS = join(FIXTURES, "runs");
const TAMPERED = join(FIXTURES, "runs-tampered");

async function run(args: string[]) {
  const io = bufferIo();
  const code = await prove(args, io);
  return { code, out: io.stdout.join("\n"), err: io.stderr };
}

Deno.test("prove show on a run that does not verify warns first, in one line, and --json carries the verdict", async () => {
  const r = await run(["--runs", TAMPERED, "show", SAMPLE_RUN_ID]);
  assert.equal(r.code, 0);
  assert.equal(r.err.length, 1, r.err.join("\n"));
  assert.match(
    r.err[0]!,
    new RegExp(
      `^prove: warning: run ${SAMPLE_RUN_ID} does not verify \\(events\\.jsonl line \\d+ .*\\); its events are shown as recorded, not as trustworthy: prove verify ${SAMPLE_RUN_ID} lists every problem$`,
    ),
  );
  assert.match(r.out, / run_completed /);
  const json = JSON.parse((await run(["--runs", TAMPERED, "show", SAMPLE_RUN_ID, "--json"])).out);
  assert.equal(json.verdict.ok, false);
  assert.ok(json.verdict.problems.length > 0);
  assert.equal(json.verdict.run_id, SAMPLE_RUN_ID);
  assert.ok(json.events.length > 0);
});

Deno.test("prove show on a run that verifies says nothing more, and --json says it verifies", async () => {
  const r = await run(["--runs", RUNS, "show", SAMPLE_RUN_ID]);
  assert.equal(r.code, 0);
  assert.deepEqual(r.err, []);
  const json = JSON.parse((await run(["--runs", RUNS, "show", SAMPLE_RUN_ID, "--json"])).out);
  assert.deepEqual([json.verdict.ok, json.verdict.problems], [true, []]);
});

Deno.test("prove verify and prove show --config with a file that is not a catalog config fail, though the run has no bundle", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const notConfig = join(dir, "notes.yaml");
    await Deno.writeTextFile(notConfig, "- a list\n- not a catalog config\n");
    for (const command of ["verify", "show"]) {
      const r = await run(["--runs", RUNS, command, SAMPLE_RUN_ID, "--config", notConfig]);
      assert.equal(r.code, 1, `${command}: ${r.err.join("\n")}`);
      assert.equal(r.out, "");
      assert.equal(r.err.length, 1);
      assert.match(r.err[0]!, /^prove: .*notes\.yaml/);
    }
    const missing = await run(["--runs", RUNS, "verify", SAMPLE_RUN_ID, "--config", join(dir, "none.yaml")]);
    assert.equal(missing.code, 1);
    assert.match(missing.err[0]!, /none\.yaml/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

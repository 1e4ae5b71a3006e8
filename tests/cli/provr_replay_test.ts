/**
 * The commands over recorded runs: `prove diff A B` (text and JSON, exit 0 when identical, 1 when not),
 * `provr replay RUN` (identical, or the divergence and exit 1), `provr run --from RUN --at N` (a fork) and
 * `provr resume RUN`, and their usage errors.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { bufferIo } from "../../cli/_io.ts";
import { prove } from "../../cli/prove.ts";
import { provr } from "../../cli/provr.ts";
import { recorded } from "../provrun/replay/_setup.ts";
import { cutRun } from "../provrun/replay/_runs.ts";

async function cli(program: typeof prove, args: string[]) {
  const io = bufferIo();
  const code = await program(args, io);
  return { code, out: io.stdout.join("\n"), err: io.stderr.join("\n") };
}

Deno.test("prove diff of a run with itself is identical (exit 0); of two runs that differ, the first divergence and each difference (exit 1)", async () => {
  const same = await cli(prove, [
    "--runs",
    "fixtures/runs",
    "diff",
    "run-20261129T120000Z-0badc0de",
    "run-20261129T120000Z-0badc0de",
  ]);
  assert.equal(same.code, 0, same.err);
  assert.match(
    same.out,
    /^run-20261129T120000Z-0badc0de and run-20261129T120000Z-0badc0de are identical step for step \(1 model call, 13 events\)\n/,
  );
  assert.match(same.out, /\n {2}tokens +14 in, 9 out +14 in, 9 out$/);
  await using r = await recorded();
  await Deno.writeTextFile(
    r.file,
    (await Deno.readTextFile(r.file)).replace("Revenue grew 12% in Q3.", "Revenue grew 13%."),
  );
  const two = await cli(provr, ["--runs", r.runs, "run", r.file]);
  assert.equal(two.code, 0, two.err);
  const diff = await cli(prove, ["--runs", r.runs, "diff", r.outcome.runId, two.out]);
  assert.equal(diff.code, 1, diff.err);
  const lines = diff.out.split("\n");
  assert.match(lines[0]!, /differ; first at the setup, run_created \(A seq 0, B seq 0\): settings$/);
  assert.ok(
    lines.some((l) =>
      /^ {2}step 4 +model answer +\d+ +\d+ {2}the answer differs at content\[0\]\.text: "Revenue grew 12% in Q3\." vs "Revenue grew 13%\."$/
        .test(l)
    ),
    diff.out,
  );
  const json = await cli(prove, ["--runs", r.runs, "diff", r.outcome.runId, two.out, "--json"]);
  const parsed = JSON.parse(json.out);
  assert.equal(parsed.identical, false);
  assert.equal(parsed.counts.model_answer, 1);
  assert.deepEqual(parsed.a.tokens, { input: 140, output: 31 });
  const bad = await cli(prove, ["--runs", r.runs, "diff", r.outcome.runId, two.out, "--limit", "0"]);
  assert.deepEqual([bad.code, bad.err], [2, "prove: --limit 0: give a whole number from 1"]);
});

Deno.test("provr replay prints the replay's ID and identical (exit 0); after a change, the divergence (exit 1); --json", async () => {
  await using r = await recorded();
  const same = await cli(provr, ["--runs", r.runs, "replay", r.outcome.runId]);
  assert.equal(same.code, 0, same.err);
  const [id, verdict] = same.out.split("\n");
  assert.match(id!, /^run-\S+$/);
  assert.equal(
    verdict,
    `identical: ${id} replays ${r.outcome.runId} step for step (4 model calls and 4 tool calls served from ${r.outcome.runId}, no tool ran)`,
  );
  await Deno.writeTextFile(r.input, "quarter,revenue\nQ3,1.0\n");
  const changed = await cli(provr, ["--runs", r.runs, "replay", r.outcome.runId]);
  assert.equal(changed.code, 1);
  assert.match(
    changed.out,
    /\ndiverged: .*; first difference at the setup \(input_staged, seq \d+\): inputs\n {2}input revenue\.csv has sha256 /,
  );
  const json = JSON.parse((await cli(provr, ["--runs", r.runs, "replay", r.outcome.runId, "--json"])).out);
  assert.deepEqual([json.identical, json.divergence.what, json.source, json.status], [
    false,
    "inputs",
    r.outcome.runId,
    "completed",
  ]);
  const none = await cli(provr, ["--runs", r.runs, "replay", "run-20991231T000000Z-00000000"]);
  assert.deepEqual([none.code, none.err.split("\n").length], [1, 1]);
});

Deno.test("provr run --from RUN --at N forks; provr resume goes on from a cut run; the usage errors are one line, exit 2", async () => {
  await using r = await recorded();
  const fork = await cli(provr, [
    "--runs",
    r.runs,
    "run",
    "--from",
    r.outcome.runId,
    "--at",
    "4",
    "--set",
    "agent.settings.temperature=0.5",
  ]);
  assert.equal(fork.code, 0, fork.err);
  assert.match(
    fork.out,
    /\nforked: 3 model calls and 4 tool calls served from run-\S+, no tool ran; first difference at the setup \(run_created, seq 0\): settings\n {2}agent\.settings: \(none\) vs \{"temperature":0\.5\}$/,
  );
  const cut = await cutRun(r.runs, r.outcome.runId, 12);
  const resumed = await cli(provr, ["--runs", r.runs, "resume", cut]);
  assert.equal(resumed.code, 0, resumed.err);
  assert.match(
    resumed.out,
    /\nresumed: run-\S+ goes on from run-\S+: \d+ model calls? and \d+ tool calls? served, \d+ tool calls? ran; the two verify as one history$/,
  );
  const verify = await cli(prove, ["--runs", r.runs, "verify", resumed.out.split("\n")[0]!]);
  assert.equal(verify.code, 0, verify.out);
  await Deno.remove(join(r.runs, cut), { recursive: true });
  const broken = await cli(prove, ["--runs", r.runs, "verify", resumed.out.split("\n")[0]!, "--json"]);
  assert.deepEqual(JSON.parse(broken.out).problems.map((p: { code: string }) => p.code), [
    "resume.source_missing",
  ]);
  for (
    const [args, message] of [
      [["run", r.file, "--from", r.outcome.runId], "provr: give a run file, or --from RUN --at N, not both"],
      [["run", "--at", "2"], "provr: --at, --model, --prompt and --set fork a run: add --from RUN"],
      [["run"], "provr: give a run file, or --from RUN --at N to fork a run"],
      [["run", "--from", r.outcome.runId], "provr: --from RUN needs --at N: the first step that runs live"],
      [["run", "--from", r.outcome.runId, "--at", "x"], "provr: --at x: give a step from 1"],
    ] as const
  ) {
    const out = await cli(provr, ["--runs", r.runs, ...args]);
    assert.deepEqual([out.code, out.err], [2, message]);
  }
});

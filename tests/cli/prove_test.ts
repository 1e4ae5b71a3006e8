import assert from "node:assert/strict";
import { join } from "node:path";
import { bufferIo } from "../../cli/_io.ts";
import { prove } from "../../cli/prove.ts";
import { provr } from "../../cli/provr.ts";
import { SAMPLE_RUN_ID } from "../provevi/_sample_run.ts";
import { copyFolder } from "../_files.ts";

const FIXTURES = new URL("../../fixtures/", import.meta.url).pathname;
const RUNS = join(FIXTURES, "runs");
const TAMPERED = join(FIXTURES, "runs-tampered", SAMPLE_RUN_ID);

async function run(args: string[], command = prove) {
  const io = bufferIo();
  const code = await command(args, io);
  return { code, out: io.stdout.join("\n"), err: io.stderr.join("\n") };
}

Deno.test("prove runs prints a table of the runs under the runs root, and --json prints their rows", async () => {
  const r = await run(["--runs", RUNS, "runs"]);
  assert.equal(r.code, 0, r.err);
  assert.equal(
    r.out,
    [
      "RUN                            STATUS     STARTED              DURATION  AGENT             MODEL                             TOKENS  COST  EXPERIMENT",
      `${SAMPLE_RUN_ID}  completed  2026-11-29 12:00:00  18ms      revenue-question  test:fixtures/models/answer.yaml  23      -     -`,
    ].join("\n"),
  );
  const json = await run(["--runs", RUNS, "runs", "--json"]);
  const rows = JSON.parse(json.out);
  assert.deepEqual(rows.map((r: { run_id: string; status: string }) => [r.run_id, r.status]), [
    [SAMPLE_RUN_ID, "completed"],
  ]);
  assert.deepEqual(Object.keys(rows[0]), [
    "run_id",
    "status",
    "started_at",
    "ended_at",
    "duration_ms",
    "agent",
    "agent_version",
    "model",
    "tokens",
    "cost",
    "experiment",
    "last_seq",
  ]);
});

Deno.test("prove runs on a runs root that does not exist is an error, not an empty list", async () => {
  const r = await run(["--runs", "/nonexistent", "runs"]);
  assert.equal(r.code, 1);
  assert.equal(r.out, "");
  assert.match(r.err, /^prove: the runs root \/nonexistent does not exist: check --runs or PROVRUN_RUNS/);
});

Deno.test("prove runs refuses a status, a count or a time it does not know, with exit 2", async () => {
  for (
    const [args, message] of [
      [["--status", "done"], /--status done is not a status: give one of completed, failed, cancelled/],
      [["--limit", "-3"], /--limit -3 is not a count/],
      [["--since", "yesterday"], /--since yesterday is not a time/],
    ] as const
  ) {
    const r = await run(["--runs", RUNS, "runs", ...args]);
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, message);
  }
});

Deno.test("prove takes latest and the start of a run ID wherever it takes a run", async () => {
  for (const ref of ["latest", "run-20261129"]) {
    const r = await run(["--runs", RUNS, "verify", ref]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, new RegExp(`^${SAMPLE_RUN_ID}: the evidence and the outputs verify`));
  }
});

Deno.test("prove verify passes the fixture run with exit 0", async () => {
  const r = await run(["--runs", RUNS, "verify", SAMPLE_RUN_ID]);
  assert.equal(r.code, 0);
  assert.equal(
    r.out,
    `${SAMPLE_RUN_ID}: the evidence and the outputs verify; no committed bundle to compare with\n` +
      "  note: the run is not signed",
  );
});

Deno.test("prove verify fails the tampered copy with exit 1 and names the problem", async () => {
  const r = await run(["verify", TAMPERED]);
  assert.equal(r.code, 1);
  assert.match(r.out, /does not verify \(1 problem\)\n {2}events\.jsonl line 10 \(seq 9\) has prev/);
});

Deno.test("prove verify --require-bundle fails a run with no bundle", async () => {
  const r = await run(["--runs", RUNS, "verify", SAMPLE_RUN_ID, "--require-bundle"]);
  assert.deepEqual(r, {
    code: 1,
    out: "",
    err: "prove: no committed bundle to compare with, and a bundle is required",
  });
});

Deno.test("prove verify of a run that does not exist exits 1 with one line", async () => {
  const r = await run(["--runs", RUNS, "verify", "run-nope"]);
  assert.deepEqual(r, { code: 1, out: "", err: `prove: no run "run-nope" under the runs root ${RUNS}` });
});

Deno.test("prove verify, show and telemetry of a text that is not a run ID exit 1 with one line, no stack", async () => {
  for (const command of ["verify", "show", "telemetry"]) {
    for (const ref of ["foo bar", "..x", "-x"]) {
      const r = await run(["--runs", RUNS, command, "--", ref]);
      assert.equal(r.code, 1, `${command} ${ref}: ${r.err}`);
      assert.equal(r.out, "");
      assert.match(r.err, /^prove: no run ".*": a run ID has only letters, digits, _, \. and -/);
      assert.equal(r.err.split("\n").length, 1);
    }
  }
});

Deno.test("prove show prints one line per event and the run's totals, and --json the events", async () => {
  const r = await run(["--runs", RUNS, "show", SAMPLE_RUN_ID]);
  assert.equal(r.code, 0);
  const lines = r.out.split("\n");
  assert.equal(lines.length, 14);
  // the fixture run is older than price tables: its tokens are counted, its cost is not
  assert.match(
    lines[13]!,
    /^totals: 1 model call, 0 tool calls; tokens 14 in .*, 9 out .*; cost no price table pinned$/,
  );
  assert.match(
    lines[0]!,
    /^ {3}0 2026-11-29T12:00:00\.001500Z run_created {14}RunContext {15}invoke_agent revenue-question 18\.0ms run:\/\/acme/,
  );
  const json = JSON.parse((await run(["--runs", RUNS, "show", SAMPLE_RUN_ID, "--json"])).out);
  assert.equal(json.events.length, 13);
});

Deno.test("prove show exits 2 on a line that is not an event", async () => {
  const dir = await Deno.makeTempDir();
  const folder = join(dir, SAMPLE_RUN_ID);
  await copyFolder(join(RUNS, SAMPLE_RUN_ID), folder);
  await Deno.writeTextFile(join(folder, "evidence", "events.jsonl"), "garbage\n", { append: true });
  const r = await run(["show", folder]);
  assert.equal(r.code, 2);
  assert.match(r.err, /^prove: run "run-20261129T120000Z-0badc0de": events\.jsonl line 14 is not JSON$/);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("prove refuses a run ID that names a link under the runs root", async () => {
  const dir = await Deno.makeTempDir();
  await Deno.symlink(join(RUNS, SAMPLE_RUN_ID), join(dir, "run-link"));
  const r = await run(["--runs", dir, "verify", "run-link"]);
  assert.equal(r.code, 1);
  assert.match(r.err, /is a link/);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("prove exits 2 on a command line it rejects, and on an unknown store", async () => {
  assert.equal((await run(["verify"])).code, 2);
  assert.equal((await run(["frobnicate"])).code, 2);
  const store = await run(["--store", "ftp://x", "runs"]);
  assert.equal(store.code, 1);
  assert.match(store.err, /^prove: store URI "ftp:\/\/x" names no store/);
});

Deno.test("provr verify gives the same answer as prove verify", async () => {
  const a = await run(["verify", TAMPERED], prove);
  const b = await run(["verify", TAMPERED], provr);
  assert.deepEqual(a, b);
});

Deno.test("prove show fits each event to a terminal's width, and --wide (or a pipe) keeps whole lines", async () => {
  const narrow = { ...bufferIo(), width: 60 };
  assert.equal(await prove(["--runs", join(FIXTURES, "runs"), "show", SAMPLE_RUN_ID], narrow), 0);
  const lines = narrow.stdout.filter((l) => l !== "");
  assert.ok(lines.length > 3);
  for (const line of lines) assert.ok([...line].length <= 60, line);
  assert.ok(lines.some((l) => l.endsWith("…")));
  const wide = { ...bufferIo(), width: 60 };
  assert.equal(await prove(["--runs", join(FIXTURES, "runs"), "show", SAMPLE_RUN_ID, "--wide"], wide), 0);
  const pipe = bufferIo();
  assert.equal(await prove(["--runs", join(FIXTURES, "runs"), "show", SAMPLE_RUN_ID], pipe), 0);
  assert.deepEqual(wide.stdout, pipe.stdout);
  assert.ok(pipe.stdout.some((l) => [...l].length > 60 && !l.endsWith("…")));
});

import assert from "node:assert/strict";
import { join } from "node:path";
import { sha256Hex } from "../../../lib/provevi/evidence/hash.ts";
import { buildTrace } from "../../../lib/provtrace/build/build.ts";
import { checkTrace } from "../../../lib/provtrace/build/check.ts";
import { ask, dumpTrace, makeRuns } from "../_runs.ts";
import { makeWritable } from "../../_files.ts";

// The build makes a run's rows from the texts and bytes its check read (one read of each file), and commits
// runs in batches, each run a savepoint: these tests hold what that must not change.

Deno.test("each span's line hash is the SHA-256 of its line in events.jsonl, as the build reads the lines once", async () => {
  await using t = await makeRuns();
  const db = join(t.root, "trace.db");
  await buildTrace({ store: "file", runs: t.runs, db, catalog: t.catalog });
  for (const run of [t.agentRun, t.callRun]) {
    const lines = (await Deno.readTextFile(join(t.runs, run, "evidence", "events.jsonl"))).split("\n");
    const spans = ask(
      db,
      `SELECT seq, line_hash FROM trace_spans WHERE run_id = '${run}' AND line_hash IS NOT NULL`,
    )
      .rows as { seq: number; line_hash: string }[];
    assert.ok(spans.length > 3);
    for (const s of spans) assert.equal(s.line_hash, sha256Hex(lines[s.seq]!), `${run} seq ${s.seq}`);
  }
});

Deno.test("the build refuses a run whose payload changed or became a link, with the problem verify names", async () => {
  for (const change of ["changed", "linked"] as const) {
    await using t = await makeRuns();
    // The run is of format 2: its payloads are records of payloads.pack.
    const path = join(t.runs, t.agentRun, "evidence", "payloads.pack");
    await makeWritable(join(t.runs, t.agentRun));
    if (change === "changed") {
      const pack = await Deno.readFile(path);
      pack[pack.length - 2] = pack[pack.length - 2]! ^ 0x01;
      await Deno.writeFile(path, pack);
    } else {
      await Deno.rename(path, join(t.root, "payloads.pack"));
      await Deno.symlink(join(t.root, "payloads.pack"), path);
    }
    const db = join(t.root, "trace.db");
    const built = await buildTrace({ store: "file", runs: t.runs, db, catalog: t.catalog });
    assert.deepEqual(built.added.map((r) => r.run_id), [t.callRun], change);
    assert.equal(built.refused.length, 1, change);
    assert.equal(built.refused[0]!.run_id, t.agentRun);
    assert.ok(
      built.refused[0]!.problems.some((p) => p.includes("payloads.pack")),
      `${change}: ${built.refused[0]!.problems.join("; ")}`,
    );
  }
});

Deno.test("a build stopped part way keeps the runs it wrote; the next adds the rest, and the file equals one whole build", async () => {
  await using t = await makeRuns();
  const whole = join(t.root, "whole.db");
  await buildTrace({ store: "file", runs: t.runs, db: whole, catalog: t.catalog });
  const db = join(t.root, "trace.db");
  const stop = new Error("stopped by the test");
  await assert.rejects(
    buildTrace({
      store: "file",
      runs: t.runs,
      db,
      catalog: t.catalog,
      onProgress: () => {
        throw stop;
      },
    }),
    (error) => error === stop,
  );
  const kept = ask(db, "SELECT run_id FROM trace_sources").rows.map((r) => r.run_id as string);
  assert.equal(kept.length, 1, "the run written before the stop is committed");
  const rest = await buildTrace({ store: "file", runs: t.runs, db, catalog: t.catalog });
  assert.deepEqual(rest.present, kept);
  assert.equal(rest.added.length, 1);
  assert.deepEqual(dumpTrace(db), dumpTrace(whole));
  const check = await checkTrace(db, { runs: t.runs, catalog: t.catalog });
  assert.deepEqual(check.problems, []);
  assert.ok(check.ok, JSON.stringify(check.runs));
});

import assert from "node:assert/strict";
import { join } from "node:path";
import { buildTrace } from "../../../lib/provtrace/build/build.ts";
import { writeTraceExport } from "../../../lib/provtrace/export/export_file.ts";
import { checkLineage, traceLineage } from "../../../lib/provtrace/export/lineage.ts";
import { bufferIo } from "../../../cli/_io.ts";
import { provtrace } from "../../../cli/provtrace.ts";
import { makeRuns, rewriteRun } from "../_runs.ts";
import { makeWritable } from "../../_files.ts";
import { openTraceDb } from "../../../lib/provtrace/db/trace_db.ts";
import { insertLineRows } from "../../../lib/provtrace/export/_line_rows.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";

Deno.test("lineage: a run lists every export and line it fed, an export its runs; a run removed or changed taints the exports it fed", async () => {
  const t = await makeRuns();
  await using _ = t;
  const db = join(t.root, "trace.db");
  assert.deepEqual((await buildTrace({ store: "file", runs: t.runs, db, catalog: t.catalog })).refused, []);
  const hf = join(t.root, "hf.jsonl"), atif = join(t.root, "atif.jsonl"), calls = join(t.root, "calls.jsonl");
  const a = await writeTraceExport(db, { runs: t.runs, kind: "hf", per: "run", out: hf, catalog: t.catalog });
  const b = await writeTraceExport(db, {
    runs: t.runs,
    kind: "atif",
    out: atif,
    catalog: t.catalog,
    agent: "analyst",
  });
  const c = await writeTraceExport(db, {
    runs: t.runs,
    kind: "openai",
    out: calls,
    catalog: t.catalog,
    agent: "revenue-question",
  });

  const ofAgent = traceLineage(db, t.agentRun);
  assert.equal(ofAgent.of, "run");
  if (ofAgent.of !== "run") return;
  assert.deepEqual(
    ofAgent.exports.map((e) => e.export_id).sort(),
    [a.manifest.export_id, b.manifest.export_id].sort(),
  );
  const inHf = ofAgent.exports.find((e) => e.export_id === a.manifest.export_id)!;
  assert.equal(inHf.path, hf);
  assert.equal(inHf.fed.length, 1, "a line per run: the agent run fed one line of the hf export");
  // An export, by its file or by its ID's first digits, lists its runs.
  for (const target of [hf, a.manifest.export_id.slice(0, 12)]) {
    const ofExport = traceLineage(db, target);
    assert.equal(ofExport.of, "export");
    if (ofExport.of === "export") {
      assert.deepEqual(ofExport.runs.map((r) => r.run_id).sort(), [t.agentRun, t.callRun].sort());
    }
  }
  assert.throws(() => traceLineage(db, "run-20990101T000000Z-00000000"), /has no run or export/);

  assert.equal((await checkLineage(db, { runs: t.runs })).ok, true);
  // The call run is removed from the store (a request to forget it): the exports it fed are named, not the other.
  await makeWritable(join(t.runs, t.callRun));
  await Deno.remove(join(t.runs, t.callRun), { recursive: true });
  let checked = await checkLineage(db, { runs: t.runs });
  assert.equal(checked.ok, false);
  const tainted = (r: typeof checked) =>
    r.exports.filter((e) => e.tainted.length).map((
      e,
    ) => [e.export_id, e.tainted.map((x) => `${x.run_id} ${x.state}`)]);
  assert.deepEqual(
    tainted(checked).sort(),
    [
      [a.manifest.export_id, [`${t.callRun} removed`]],
      [c.manifest.export_id, [`${t.callRun} removed`]],
    ].sort(),
  );
  // The agent run's events and manifest rewritten together: every export it fed is tainted too.
  await rewriteRun(join(t.runs, t.agentRun), (events) => {
    const call = events.find((e) => e.type === "model_called")!;
    call.data = { ...call.data, output_tokens: 999 };
  });
  checked = await checkLineage(db, { runs: t.runs });
  assert.deepEqual(
    checked.exports.find((e) => e.export_id === b.manifest.export_id)!.tainted.map((
      x,
    ) => [x.run_id, x.state]),
    [[t.agentRun, "changed"]],
  );
  const io = bufferIo();
  assert.equal(await provtrace(["lineage", "--db", db, "--check", "--runs", t.runs], io), 1);
  assert.match(io.stdout.join("\n"), new RegExp(`TAINTED by ${t.callRun} \\(removed\\)`));
  assert.match(io.stdout.at(-1)!, /3 exports, 3 tainted$/);
  const listed = bufferIo();
  assert.equal(await provtrace(["lineage", "--db", db, t.agentRun], listed), 0);
  assert.match(listed.stdout[0]!, /^EXPORT\s+FORMAT\s+CREATED\s+LINES\s+FILE$/);
  assert.equal(listed.stdout.length, 3);
});

Deno.test("an export's line rows in the database are its manifest's, every line of every event, in statements of many rows", async () => {
  const dir = await Deno.makeTempDir();
  try {
    using trace = openTraceDb(join(dir, "trace.db"), { write: true });
    // 3 runs of 80 events, each in 2 lines, one listed twice: 479 distinct rows, past two statements' worth.
    const hash = (n: number) => n.toString(16).padStart(64, "0");
    const runs = [0, 1, 2].map((r) => ({
      run_id: `run-20261201T000000Z-0000000${r}`,
      events: Array.from({ length: 80 }, (_, i) => ({
        seq: i + 1,
        line_hash: hash(r * 1000 + i),
        lines: r === 2 && i === 79 ? [r * 100 + i, r * 100 + i] : [r * 100 + i, r * 100 + i + 1],
      })),
    }));
    const expected = runs.flatMap((r) =>
      r.events.flatMap((e) => [...new Set(e.lines)].map((line) => [line, r.run_id, e.seq, e.line_hash]))
    );
    assert.equal(expected.length, 479);
    const id = hash(7);
    trace.db.exec("BEGIN IMMEDIATE");
    insertLineRows(trace.db, { export_id: id, runs });
    trace.db.exec("COMMIT");
    const rows = trace.db.prepare(
      "SELECT line, run_id, seq, line_hash FROM trace_export_lines WHERE export_id = ? ORDER BY run_id, seq, line",
    ).all(id).map((r) => [r.line, r.run_id, r.seq, r.line_hash]);
    assert.deepEqual(rows, expected);
    assert.equal(
      (trace.db.prepare("SELECT count(*) AS n FROM trace_export_lines").get() as { n: number }).n,
      479,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("lineage finds an export by its file when the file is many reads long, and takes a FIFO there for no export", async () => {
  const dir = await Deno.makeTempDir({ prefix: "provtrace-lineage-" });
  try {
    const runs = join(dir, "runs"), db = join(dir, "trace.db"), out = join(dir, "calls.jsonl");
    // A 2.6 MB answer: the export's one line holds it, so its file is read in three chunks of 1 MiB to be hashed.
    const answer = "Revenue grew 12% in Q3. ".repeat(110_000);
    const file = RunFile.parse(JSON.stringify({
      run: { org: "acme", domain: "demo", env: "dev", actor: "ada" },
      agent: { name: "q", backend: "call", model: "test:", script: { turns: [{ text: answer }] } },
      prompt: "What was the revenue growth in Q3?",
    }));
    const run = await runFile(file, { runs });
    assert.equal(run.status, "completed");
    assert.deepEqual((await buildTrace({ store: "file", runs, db })).refused, []);
    const written = await writeTraceExport(db, { runs, kind: "openai", out });
    assert.ok((await Deno.stat(out)).size > 2 * (1 << 20) + 1, "the export spans more than two reads");

    const lineage = traceLineage(db, out);
    assert.equal(lineage.of, "export");
    if (lineage.of === "export") {
      assert.equal(lineage.export.export_id, written.manifest.export_id);
      assert.deepEqual(lineage.runs.map((r) => r.run_id), [run.runId]);
    }
    // Its ID's first digits give the same answer; a byte more, and the file is no export the database records.
    assert.deepEqual(traceLineage(db, written.manifest.export_id.slice(0, 12)), lineage);
    await Deno.writeTextFile(out, "\n", { append: true });
    assert.throws(() => traceLineage(db, out), /has no run or export/);
    // A FIFO at the path, with no writer: taken for no export at once, not waited on.
    const fifo = join(dir, "fifo.jsonl");
    assert.ok((await new Deno.Command("mkfifo", { args: [fifo] }).output()).success);
    assert.throws(() => traceLineage(db, fifo), /has no run or export/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

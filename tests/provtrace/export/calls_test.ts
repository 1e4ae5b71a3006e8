import assert from "node:assert/strict";
import { join } from "node:path";
import { SqliteStore } from "../../../lib/provevi/sqlite/sqlite_store.ts";
import { buildTrace } from "../../../lib/provtrace/build/build.ts";
import { traceRunDigest, type TraceRunTables } from "../../../lib/provtrace/db/run_digest.ts";
import { openTraceDb } from "../../../lib/provtrace/db/trace_db.ts";
import { byRun, CallReader, type CallRow, loadCalls } from "../../../lib/provtrace/export/_calls.ts";
import { makeRuns } from "../_runs.ts";

Deno.test("an export's calls made from the rows its check read are the calls read from the database", async () => {
  await using t = await makeRuns({ store: (root) => `sqlite:///${join(root, "evidence.db")}` });
  {
    await using store = new SqliteStore(join(t.root, "evidence.db"), { runs: t.runs });
    await store.assess(t.agentRun, "reward", 0.9, { source: "grader" });
    await store.assess(t.callRun, "reward", 0.2, { source: "grader" });
  }
  const db = join(t.root, "trace.db");
  const uri = `sqlite:///${join(t.root, "evidence.db")}`;
  assert.deepEqual((await buildTrace({ store: uri, runs: t.runs, db, catalog: t.catalog })).refused, []);
  using trace = openTraceDb(db);
  const rows = trace.db.prepare(`
    SELECT c.run_id, c.span_id, s.seq, s.line_hash, c.model, c.tools, c.error
    FROM trace_model_calls c JOIN trace_spans s ON s.run_id = c.run_id AND s.span_id = c.span_id
    ORDER BY c.run_id, s.seq`).all() as CallRow[];
  const fromDb = loadCalls(trace.db, rows);
  const reader = new CallReader(trace.db);
  for (const [runId, runRows] of byRun(rows)) {
    let tables: TraceRunTables | undefined;
    traceRunDigest(trace.db, runId, { tables: (read) => tables = read });
    assert.ok(tables, `the digest of ${runId} gave its rows`);
    reader.read(runId, runRows, tables);
  }
  const fromTables = reader.inOrder(rows);
  assert.equal(fromTables.length, rows.length);
  assert.deepEqual(fromTables, fromDb);
  // What the comparison covers: messages sent and received, tool calls with their events, assessments.
  assert.ok(fromDb.some((c) => c.sent.length > 1 && c.received.length > 0));
  assert.ok(fromDb.some((c) => c.results.some((r) => r.event !== null)));
  assert.ok(fromDb.every((c) => c.assessments.length > 0));
});

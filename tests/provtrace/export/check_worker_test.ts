import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { buildTrace } from "../../../lib/provtrace/build/build.ts";
import { exportTrace } from "../../../lib/provtrace/export/export.ts";
import { traceRunDigest } from "../../../lib/provtrace/db/run_digest.ts";
import { openTraceDb } from "../../../lib/provtrace/db/trace_db.ts";
import { RowsHasher } from "../../../lib/provtrace/build/_rows_hasher.ts";
import { makeRuns } from "../_runs.ts";

async function built() {
  const t = await makeRuns({ store: (root) => `sqlite:///${join(root, "evidence.db")}` });
  const db = join(t.root, "trace.db");
  const store = `sqlite:///${join(t.root, "evidence.db")}`;
  const keyFile = join(t.root, "rows.key");
  assert.deepEqual((await buildTrace({ store, runs: t.runs, db, catalog: t.catalog, keyFile })).refused, []);
  const options = { stores: [store], runs: t.runs, catalog: t.catalog, keyFile };
  return { t, db, options, [Symbol.asyncDispose]: () => t[Symbol.asyncDispose]() };
}

const runIds = (db: DatabaseSync) =>
  (db.prepare("SELECT run_id FROM trace_sources ORDER BY run_id").all() as { run_id: string }[]).map((r) =>
    r.run_id
  );

Deno.test("the worker hashes each run's rows in the export's snapshot: a write committed after it began is not in its digests", async () => {
  await using w = await built();
  using trace = openTraceDb(w.db);
  trace.db.exec("BEGIN");
  using hasher = await RowsHasher.open(
    w.db,
    trace.db,
    () => trace.db.prepare("SELECT 1 FROM trace_runs").get(),
  );
  assert.ok(hasher, "the worker opened the file");
  const ids = runIds(trace.db);
  // A row rewritten and committed by another connection, once both snapshots are fixed.
  const writer = new DatabaseSync(w.db);
  writer.exec("UPDATE trace_messages SET text = 'FORGED'");
  writer.close();
  hasher.queue(ids);
  const before = new Map<string, string>();
  for (const id of ids) {
    before.set(id, traceRunDigest(trace.db, id).digest);
    assert.equal((await hasher.digest(id)).digest, before.get(id), `the digest of ${id}`);
  }
  trace.db.exec("COMMIT");
  // A worker whose snapshot begins after the write sees it.
  using after = openTraceDb(w.db);
  after.db.exec("BEGIN");
  using again = await RowsHasher.open(
    w.db,
    after.db,
    () => after.db.prepare("SELECT 1 FROM trace_runs").get(),
  );
  again!.queue(ids);
  const digest = (await again!.digest(ids[0]!)).digest;
  assert.equal(digest, traceRunDigest(after.db, ids[0]!).digest);
  assert.notEqual(digest, before.get(ids[0]!));
  after.db.exec("COMMIT");
});

Deno.test("an export whose check hashes on a worker writes the same lines, and refuses a run whose rows changed", async () => {
  await using w = await built();
  const alone = await exportTrace(w.db, { kind: "steps", ...w.options, checkWorker: false });
  const worker = await exportTrace(w.db, { kind: "steps", ...w.options, checkWorker: true });
  assert.ok(alone.lines.length > 0);
  assert.deepEqual(alone.refused, []);
  assert.equal(JSON.stringify(worker), JSON.stringify(alone));
  for (const kind of ["sft", "openai", "atif"] as const) {
    assert.equal(
      JSON.stringify(await exportTrace(w.db, { kind, ...w.options, checkWorker: true })),
      JSON.stringify(await exportTrace(w.db, { kind, ...w.options, checkWorker: false })),
      kind,
    );
  }
  const edit = new DatabaseSync(w.db);
  edit.exec("UPDATE trace_tool_calls SET result = '\"FORGED\"'");
  edit.close();
  const changed = await exportTrace(w.db, { kind: "steps", ...w.options, checkWorker: true });
  assert.ok(!JSON.stringify(changed.lines).includes("FORGED"));
  assert.ok(changed.refused.length > 0);
  assert.ok(
    changed.refused.every((r) => r.state === "rows" && /trace_tool_calls/.test(r.problem)),
    JSON.stringify(changed.refused),
  );
});

Deno.test("an export whose worker cannot line up its snapshot (a writer holds the file) checks every run on its own thread", async () => {
  await using w = await built();
  const alone = await exportTrace(w.db, { kind: "steps", ...w.options, checkWorker: false });
  const writer = new DatabaseSync(w.db);
  writer.exec("BEGIN IMMEDIATE");
  try {
    using trace = openTraceDb(w.db);
    trace.db.exec("BEGIN");
    let began = 0;
    const hasher = await RowsHasher.open(w.db, trace.db, () => began++);
    assert.equal(hasher, null);
    assert.equal(began, 1, "the export's own snapshot is still begun");
    trace.db.exec("COMMIT");
    const held = await exportTrace(w.db, { kind: "steps", ...w.options, checkWorker: true });
    assert.equal(JSON.stringify(held), JSON.stringify(alone));
  } finally {
    writer.exec("ROLLBACK");
    writer.close();
  }
});

/** Each edit made without the key, and the export that would write it. */
const RENAMED_EDITS = [
  {
    kind: "steps" as const,
    sql: "UPDATE trace_tool_calls SET result = '\"FORGED\"'; UPDATE trace_model_calls SET model = 'FORGED'",
  },
  { kind: "atif" as const, sql: "UPDATE trace_runs SET agent = 'FORGED', model = 'FORGED'" },
];

Deno.test("an export's lines are the rows its worker hashed: a file renamed over the database after the export opened it lends no MAC to the rows the export reads", async () => {
  for (const { kind, sql } of RENAMED_EDITS) {
    await using w = await built();
    // The file as built (its MACs hold), kept aside; the database's rows then edited without the key.
    const genuine = join(w.t.root, "genuine.db");
    await Deno.copyFile(w.db, genuine);
    const edit = new DatabaseSync(w.db);
    edit.exec(sql);
    edit.close();
    // The export opens the edited file; the genuine one is renamed over its name before the worker opens it.
    const exported = exportTrace(w.db, { kind, ...w.options, checkWorker: true });
    Deno.renameSync(genuine, w.db);
    const changed = await exported;
    assert.ok(!JSON.stringify(changed.lines).includes("FORGED"), `${kind}: no edited row in a line`);
    assert.ok(changed.refused.length > 0, JSON.stringify(changed.refused));
    assert.ok(
      changed.refused.every((r) => r.state === "rows" && /changed while it was exported/.test(r.problem)),
      JSON.stringify(changed.refused),
    );
  }
});

import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { EventChain } from "../../../lib/provevi/evidence/chain.ts";
import {
  EvidenceError,
  NeedsIndexedStore,
  ProveviError,
  RunNotFound,
} from "../../../lib/provevi/evidence/errors.ts";
import { openStore } from "../../../lib/provevi/runs/open_store.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { SqliteStore } from "../../../lib/provevi/sqlite/sqlite_store.ts";
import { SCHEMA_VERSION } from "../../../lib/provevi/sqlite/sqlite_schema.ts";
import { sqlitePath } from "../../../lib/provevi/store/store_uri.ts";
import { storeContract } from "../store/store_contract.ts";
import { SAMPLE_RUN_ID, writeSampleRun } from "../_sample_run.ts";

storeContract("SqliteStore", async () => {
  const runs = await Deno.makeTempDir({ prefix: "provevi-sqlite-" });
  return { store: new SqliteStore(join(runs, "evidence.db"), { runs }), runs };
});

async function temp(): Promise<{ dir: string; db: string; [Symbol.asyncDispose](): Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "provevi-sqlite-" });
  return {
    dir,
    db: join(dir, "evidence.db"),
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }).catch(() => {}),
  };
}

Deno.test("sqlitePath() reads sqlite:///relative and sqlite:////absolute, expands ~, refuses a query", () => {
  assert.equal(sqlitePath("sqlite:///x/evidence.db", { cwd: "/work" }), "/work/x/evidence.db");
  assert.equal(sqlitePath("sqlite:////abs/evidence.db"), "/abs/evidence.db");
  assert.equal(sqlitePath("sqlite:///~/evidence.db", { home: "/home/ada" }), "/home/ada/evidence.db");
  assert.throws(() => sqlitePath("sqlite:///x.db?mode=ro"), /no query or fragment/);
  assert.throws(() => sqlitePath("sqlite:///x.db#frag"), /no query or fragment/);
  assert.throws(() => sqlitePath("sqlite://host/x.db"), /host/);
  // a password before a host is not repeated in the refusal
  assert.throws(
    () => sqlitePath("sqlite://u:S3cretU@h/x.db"),
    (e: Error) => /host is not allowed/.test(e.message) && !e.message.includes("S3cret"),
  );
  assert.throws(() => sqlitePath("postgres://x"), ProveviError);
});

Deno.test("openStore() opens a sqlite store, and read-only refuses a missing file", async () => {
  await using t = await temp();
  const uri = `sqlite:///${t.db}`;
  await assert.rejects(() => openStore(uri, { runs: t.dir, readOnly: true }), /there is no file/);
  const store = await openStore(uri, { runs: t.dir });
  assert.ok(store instanceof SqliteStore);
  await store.close();
  const ro = await openStore(uri, { runs: t.dir, readOnly: true });
  await assert.rejects(() => ro.openRun("run-x"), /only to read/);
  await ro.close();
});

Deno.test("SqliteStore: a row is committed only with its line, and rows fill from the events", async () => {
  await using t = await temp();
  await using store = new SqliteStore(t.db, { runs: t.dir });
  await writeSampleRun(await store.openRun(SAMPLE_RUN_ID));
  const row = await store.run(SAMPLE_RUN_ID);
  assert.ok(row);
  assert.equal(row.org, "acme");
  assert.equal(row.agent, "acme/demo/dev/revenue-question");
  assert.equal(row.status, "completed");
  assert.equal(row.events, 13);
  assert.match(row.agent_version!, /^[0-9a-f]{64}$/);
  assert.deepEqual(row.params, {
    agent: "revenue-question",
    backend: "call",
    mode: "strict",
    model: "test:fixtures/models/answer.yaml",
  });
  assert.deepEqual(await store.checkRun(SAMPLE_RUN_ID), []);
  const lines = (await Deno.readTextFile(join(t.dir, SAMPLE_RUN_ID, "evidence", "events.jsonl"))).trimEnd()
    .split("\n");
  const stored = store.db.prepare("SELECT line FROM provevi_events WHERE run_id = ? ORDER BY seq").all(
    SAMPLE_RUN_ID,
  ) as { line: string }[];
  assert.deepEqual(stored.map((r) => r.line), lines);
});

Deno.test("SqliteStore: a row that cannot be committed takes its line back", async () => {
  await using t = await temp();
  await using store = new SqliteStore(t.db, { runs: t.dir });
  const writer = await store.openRun("run-a");
  const chain = new EventChain("run-a");
  const first = chain.next({ type: "run_created", component: "RunContext", actor: "me" });
  await writer.append(first.line, first.event);
  chain.accept(first);
  // A row with the same key already exists: the insert fails, so the line must not stay.
  const again = { ...first.event, prev: null };
  await assert.rejects(() => writer.append(first.line, again), EvidenceError);
  const text = await Deno.readTextFile(join(t.dir, "run-a", "evidence", "events.jsonl"));
  assert.equal(text, first.line + "\n");
});

Deno.test("SqliteStore: a run sealed without its ending event has the status incomplete", async () => {
  await using t = await temp();
  await using store = new SqliteStore(t.db, { runs: t.dir });
  const writer = await store.openRun("run-cut");
  const chain = new EventChain("run-cut");
  const next = chain.next({ type: "run_created", component: "RunContext", actor: "me" });
  await writer.append(next.line, next.event);
  await writer.seal();
  assert.equal((await store.run("run-cut"))!.status, "incomplete");
  assert.deepEqual(await store.checkRun("run-cut"), []);
});

Deno.test("SqliteStore(create: false) refuses a file that is not provevi's, not WAL, or of another version", async () => {
  await using t = await temp();
  const other = join(t.dir, "other.db");
  const plain = new DatabaseSync(other);
  plain.exec("PRAGMA journal_mode=WAL; CREATE TABLE x (a)");
  plain.close();
  assert.throws(() => new SqliteStore(other, { create: false }), /holds no provevi evidence/);

  new SqliteStore(t.db).close();
  const db = new DatabaseSync(t.db);
  db.exec("PRAGMA journal_mode=DELETE");
  db.close();
  assert.throws(
    () => new SqliteStore(t.db, { create: false }),
    /the file is in journal mode delete, and provevi needs WAL; open it once to write to convert it/,
  );
  new SqliteStore(t.db).close(); // converts it back
  new SqliteStore(t.db, { create: false }).close();

  const newer = new DatabaseSync(t.db);
  newer.exec(`UPDATE provevi_meta SET value = '${SCHEMA_VERSION + 1}' WHERE key = 'schema_version'`);
  newer.close();
  assert.throws(() => new SqliteStore(t.db, { create: false }), /from a newer provevi/);
  assert.throws(() => new SqliteStore(t.db), /from a newer provevi/);

  const junk = join(t.dir, "junk.db");
  await Deno.writeTextFile(junk, "not a database ".repeat(200));
  assert.throws(() => new SqliteStore(junk, { create: false }), /cannot open store .*junk\.db/);
});

Deno.test("SqliteStore: the schema is checked on open (extra index allowed, trigger and change refused)", async () => {
  await using t = await temp();
  new SqliteStore(t.db).close();
  const db = new DatabaseSync(t.db);
  db.exec("CREATE INDEX my_index ON provevi_events (time)");
  db.exec("CREATE TABLE mlflow_like (a)");
  db.close();
  new SqliteStore(t.db, { create: false }).close();

  const withTrigger = new DatabaseSync(t.db);
  withTrigger.exec(
    "CREATE TRIGGER hide AFTER INSERT ON mlflow_like BEGIN DELETE FROM provevi_events WHERE 0; END",
  );
  withTrigger.close();
  assert.throws(() => new SqliteStore(t.db, { create: false }), /trigger hide on or naming a provevi table/);
  assert.throws(() => new SqliteStore(t.db), /trigger hide/);

  const fix = new DatabaseSync(t.db);
  fix.exec("DROP TRIGGER hide; DROP VIEW provevi_inputs; CREATE VIEW provevi_inputs AS SELECT 1 AS x");
  fix.close();
  assert.throws(() => new SqliteStore(t.db, { create: false }), /view provevi_inputs was changed/);
});

Deno.test("SqliteStore: a trigger named like SQLite's own objects (sqlitex…) is still refused", async () => {
  await using t = await temp();
  new SqliteStore(t.db).close();
  const db = new DatabaseSync(t.db);
  // LIKE 'sqlite_%' matches "sqlitex…", since _ matches any letter.
  db.exec(
    "CREATE TRIGGER sqlitextrg AFTER INSERT ON provevi_events BEGIN UPDATE provevi_runs SET status = 'x'; END",
  );
  db.close();
  assert.throws(
    () => new SqliteStore(t.db, { create: false }),
    /trigger sqlitextrg on or naming a provevi table/,
  );
});

Deno.test("SqliteStore() refuses a file of a newer schema version without writing to it, not even WAL", async () => {
  await using t = await temp();
  const db = new DatabaseSync(t.db);
  db.exec(`CREATE TABLE provevi_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    INSERT INTO provevi_meta VALUES ('schema_version', '99')`);
  db.close();
  const before = await Deno.readFile(t.db);
  assert.throws(() => new SqliteStore(t.db), /schema version 99, from a newer provevi/);
  assert.deepEqual(await Deno.readFile(t.db), before);
});

Deno.test("SqliteStore: a run ID not under the runs root is read at the folder the store records", async () => {
  await using t = await temp();
  const elsewhere = join(t.dir, "elsewhere", SAMPLE_RUN_ID);
  {
    await using store = new SqliteStore(t.db, { runs: join(t.dir, "runs") });
    await writeSampleRun(await store.openRun(SAMPLE_RUN_ID, { folder: elsewhere }));
  }
  await using store = new SqliteStore(t.db, { runs: join(t.dir, "runs"), create: false });
  const record = await store.readRun(SAMPLE_RUN_ID);
  assert.equal(record.folder, elsewhere);
  assert.deepEqual((await verifyRun(record, { store })).problems.map((p) => p.message), []);
  await assert.rejects(() => store.readRun("run-nope"), RunNotFound);
});

Deno.test("SqliteStore: recordBundle is compared with bundle.json by the check", async () => {
  await using t = await temp();
  await using store = new SqliteStore(t.db, { runs: t.dir });
  await writeSampleRun(await store.openRun(SAMPLE_RUN_ID));
  const bundle = {
    uri: `run://acme/demo/dev/${SAMPLE_RUN_ID}`,
    pinned: `run://x?at=commit:${"a".repeat(40)}`,
  };
  await Deno.writeTextFile(join(t.dir, SAMPLE_RUN_ID, "bundle.json"), JSON.stringify(bundle));
  await store.recordBundle(SAMPLE_RUN_ID, bundle);
  assert.deepEqual(await store.checkRun(SAMPLE_RUN_ID), []);
  await Deno.writeTextFile(
    join(t.dir, SAMPLE_RUN_ID, "bundle.json"),
    JSON.stringify({ ...bundle, pinned: "run://x?at=commit:other" }),
  );
  const problems = (await store.checkRun(SAMPLE_RUN_ID)).map((p) => p.message);
  assert.equal(problems.length, 1);
  assert.match(problems[0]!, /provevi_runs \(run_id "run-20261129T120000Z-0badc0de"\): bundle_pinned/);
});

Deno.test("FileStore answers every question across runs, and an experiment's assessment, with NeedsIndexedStore", async () => {
  const { FileStore } = await import("../../../lib/provevi/store/file_store.ts");
  const store = new FileStore({ runs: "/nonexistent" });
  for (
    const ask of [
      () => store.runsReading("x"),
      () => store.runsOfExperiment("x"),
      () => store.experiments(),
      () => store.experiment("x"),
      () => store.runsOfAgent("x"),
      () => store.agents(),
      () => store.agent("x"),
      () => store.run("x"),
      () => store.access("x"),
      () => store.inputs("x"),
      () => store.assess({ experiment: "x" }, "approved", true),
    ]
  ) await assert.rejects(ask, NeedsIndexedStore);
});

/**
 * The sqlite store's log: each seal appends its run in the seal's transaction, a run whose seal reached only its
 * folder is appended when its rows are completed, an older file is upgraded and repaired, and four processes of
 * 50 runs each, let go at once, leave one log with every run once and no fork.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { auditStoreLog } from "../../../lib/provevi/runs/store_log.ts";
import { SqliteStore } from "../../../lib/provevi/sqlite/sqlite_store.ts";
import { repairStoreLog } from "../../../lib/provevi/runs/store_log.ts";
import { DatabaseSync } from "node:sqlite";
import { writeRichRun } from "../_rich_run.ts";
import { killWriter, spawnWriter, writeTogether } from "../_writers.ts";
import { assertWholeLog } from "./_store_logs.ts";
import { SQLITE_BACK_TO_6 } from "../_schema_steps.ts";

const WRITER = new URL("../sqlite/_sqlite_writer.ts", import.meta.url).pathname;

async function tempStore(): Promise<{ db: string; runs: string }> {
  const dir = await Deno.makeTempDir({ prefix: "sqlite-log-" });
  return { db: join(dir, "evidence.db"), runs: join(dir, "runs") };
}

Deno.test("a sqlite store appends each run to its log at the seal, and writes the run's proof", async () => {
  const { db, runs } = await tempStore();
  await using store = new SqliteStore(db, { runs });
  const ids = [
    "run-20261201T000000Z-00000001",
    "run-20261201T000000Z-00000002",
    "run-20261201T000000Z-00000003",
  ];
  for (const id of ids) await writeRichRun(await store.openRun(id));
  await assertWholeLog(store, ids);
  assert.equal(await store.log.indexOf(ids[1]!), 1);
});

Deno.test("a run sealed in its folder but not in its rows is appended to the log when its rows are completed", async () => {
  const { db, runs } = await tempStore();
  await using store = new SqliteStore(db, { runs });
  const id = "run-20261201T000000Z-0000000a";
  await writeRichRun(await store.openRun(id));
  // The seal's transaction lost: the run's seal columns and its leaf are not in the file.
  const raw = new DatabaseSync(db);
  raw.exec(
    `UPDATE provevi_runs SET manifest_sha256 = NULL, last_hash = NULL, sealed_at = NULL WHERE run_id = '${id}';
    DELETE FROM provevi_log_entries; DELETE FROM provevi_log_hashes; DELETE FROM provevi_log_checkpoints;`,
  );
  raw.close();
  await Deno.remove(join(runs, id, "log.tlog-proof"));
  assert.equal(await store.log.indexOf(id), null);
  await store.readRun(id); // completes the rows from the folder
  await assertWholeLog(store, [id]);
});

Deno.test("a file of schema version 5 is upgraded, and the audit --repair appends its sealed runs", async () => {
  const { db, runs } = await tempStore();
  const id = "run-20261201T000000Z-0000000b";
  {
    await using store = new SqliteStore(db, { runs });
    await writeRichRun(await store.openRun(id));
  }
  const raw = new DatabaseSync(db);
  // Step 7 (an experiment's assessments) undone first, then step 6 (the log).
  raw.exec(SQLITE_BACK_TO_6);
  raw.exec(`DROP TABLE provevi_log_key; DROP TABLE provevi_log_entries; DROP TABLE provevi_log_hashes;
    DROP TABLE provevi_log_checkpoints; UPDATE provevi_meta SET value = '5' WHERE key = 'schema_version';`);
  raw.close();
  await using store = new SqliteStore(db, { runs });
  const audit = await auditStoreLog(store);
  assert.deepEqual(audit.missing, [id]);
  assert.deepEqual(audit.problems.map((p) => p.code), ["log.missing"]);
  assert.deepEqual((await repairStoreLog(store, audit.missing)).appended, [id]);
  assert.deepEqual((await auditStoreLog(store)).problems, []);
});

Deno.test("a sqlite store opened only to read reads its log and refuses to append", async () => {
  const { db, runs } = await tempStore();
  const id = "run-20261201T000000Z-0000000c";
  {
    await using store = new SqliteStore(db, { runs });
    await writeRichRun(await store.openRun(id));
  }
  await using reader = new SqliteStore(db, { runs, create: false });
  assert.equal(await reader.log.indexOf(id), 0);
  await assert.rejects(reader.log.append([]), /opened only to read/);
});

Deno.test("four processes let go at once, sealing 50 runs each into one sqlite store, leave one log: every run once, no fork", async () => {
  const { db, runs } = await tempStore();
  { // the file made once, so that the four do not race to make it
    await using _store = new SqliteStore(db, { runs });
  }
  const flags = ["--no-prompt", "--allow-read", "--allow-write", "--allow-env", "--allow-sys"];
  const each = ["a", "b", "c", "d"].map((p) =>
    [db, runs, `run-20261201T000000Z-${p}`, 50, 0] as [string, string, string, number, number]
  );
  const sealed: string[] = [];
  const ended = await writeTogether(
    WRITER,
    flags,
    each,
    (line) => void (line.startsWith("sealed ") && sealed.push(line.slice(7))),
  );
  for (const o of ended) assert.equal(o.code, 0, o.stderr);
  assert.equal(sealed.length, 200);
  await using store = new SqliteStore(db, { runs });
  await assertWholeLog(store, sealed.sort(), { proofs: 40 });
});

Deno.test("a writer killed during its seals leaves a log the next writer goes on with, and the audit agrees", async () => {
  const { db, runs } = await tempStore();
  {
    await using _store = new SqliteStore(db, { runs });
  }
  const flags = ["--no-prompt", "--allow-read", "--allow-write", "--allow-env", "--allow-sys"];
  const killed = await killWriter(
    spawnWriter(WRITER, flags, [db, runs, "run-20261201T000000Z-k", 400, 0]),
    700,
  );
  const next = spawnWriter(WRITER, flags, [db, runs, "run-20261201T000000Z-n", 5, 0]);
  const out = await next.output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  await using store = new SqliteStore(db, { runs });
  const ids = await store.runIds();
  for (const id of ids) await store.readRun(id); // a reader completes a run whose seal reached only its folder
  const audit = await auditStoreLog(store);
  assert.deepEqual(audit.problems.map((p) => p.message), []);
  const inLog: string[] = [];
  for (const id of ids) if (await store.log.indexOf(id) !== null) inLog.push(id);
  for (const id of killed.sealed) assert.ok(inLog.includes(id), `${id} was sealed, and is in the log`);
  await assertWholeLog(store, inLog, { proofs: 0 });
});

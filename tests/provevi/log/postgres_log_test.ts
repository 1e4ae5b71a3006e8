/**
 * The postgres store's log: each seal appends its run in the seal's transaction under the log's advisory lock, a
 * run whose seal reached only its folder is appended when its rows are completed, and four processes of 200
 * runs each leave one log with every run once and no fork.
 */
import assert from "node:assert/strict";
import { PostgresStore } from "../../../lib/provevi/postgres/postgres_store.ts";
import { auditStoreLog } from "../../../lib/provevi/runs/store_log.ts";
import { repairStoreLog } from "../../../lib/provevi/runs/store_log.ts";
import { freshDatabase, onDatabase } from "../postgres/_pg.ts";
import { writeRichRun } from "../_rich_run.ts";
import { killWriter, readLines, spawnWriter } from "../_writers.ts";
import { assertWholeLog } from "./_store_logs.ts";
import { POSTGRES_BACK_TO_6 } from "../_schema_steps.ts";
import { peerTest } from "../../_peers.ts";

const WRITER = new URL("../postgres/_pg_writer.ts", import.meta.url).pathname;
const FLAGS = ["--no-prompt", "--allow-read", "--allow-write", "--allow-env", "--allow-net"];

const pgTest = (name: string, fn: (db: { uri: string; runs: string }) => Promise<void>) =>
  peerTest("postgres", {
    name,
    fn: async () => {
      const runs = await Deno.makeTempDir({ prefix: "pg-log-" });
      const db = await freshDatabase();
      try {
        await fn({ uri: db.uri, runs });
      } finally {
        await db.drop();
        await Deno.remove(runs, { recursive: true });
      }
    },
  });

pgTest(
  "a postgres store appends each run to its log at the seal, and writes the run's proof",
  async ({ uri, runs }) => {
    await using store = await PostgresStore.open(uri, { runs });
    const ids = [
      "run-20261201T000000Z-00000001",
      "run-20261201T000000Z-00000002",
      "run-20261201T000000Z-00000003",
    ];
    for (const id of ids) await writeRichRun(await store.openRun(id));
    await assertWholeLog(store, ids);
    await using reader = await PostgresStore.open(uri, { runs, create: false });
    assert.equal(await reader.log.indexOf(ids[2]!), 2);
    await assert.rejects(reader.log.append([]), /opened only to read/);
  },
);

pgTest(
  "a postgres run sealed in its folder but not in its rows is appended when its rows are completed",
  async ({ uri, runs }) => {
    await using store = await PostgresStore.open(uri, { runs });
    const id = "run-20261201T000000Z-0000000a";
    await writeRichRun(await store.openRun(id));
    await onDatabase(
      uri,
      (sql) =>
        sql.unsafe(`UPDATE provevi_runs SET manifest_sha256 = NULL, last_hash = NULL, sealed_at = NULL;
      DELETE FROM provevi_log_entries; DELETE FROM provevi_log_hashes; DELETE FROM provevi_log_checkpoints;`),
    );
    assert.equal(await store.log.indexOf(id), null);
    await store.readRun(id);
    await assertWholeLog(store, [id]);
  },
);

pgTest(
  "a postgres database of schema version 5 is upgraded, and the audit --repair appends its sealed runs",
  async ({ uri, runs }) => {
    const id = "run-20261201T000000Z-0000000b";
    {
      await using store = await PostgresStore.open(uri, { runs });
      await writeRichRun(await store.openRun(id));
    }
    await onDatabase(uri, (sql) =>
      sql.unsafe(
        // Step 7 (an experiment's assessments) undone first, then step 6 (the log).
        POSTGRES_BACK_TO_6 +
          `DROP TABLE provevi_log_key, provevi_log_entries, provevi_log_hashes, provevi_log_checkpoints;
      UPDATE provevi_meta SET value = '5' WHERE key = 'schema_version';`,
      ));
    await using store = await PostgresStore.open(uri, { runs });
    const audit = await auditStoreLog(store);
    assert.deepEqual(
      audit.problems.map((p) => p.code),
      ["log.missing"],
    );
    assert.deepEqual((await repairStoreLog(store, audit.missing)).appended, [id]);
    assert.deepEqual((await auditStoreLog(store)).problems, []);
  },
);

pgTest(
  "four processes sealing 200 runs each into one postgres store leave one log: every run once, no fork",
  async ({ uri, runs }) => {
    await (await PostgresStore.open(uri, { runs })).close();
    const children = ["a", "b", "c", "d"].map((p) =>
      spawnWriter(WRITER, FLAGS, [uri, runs, `run-20261201T000000Z-${p}`, 200, 0])
    );
    const sealed: string[] = [];
    await Promise.all(children.map(async (child) => {
      const stderr = new Response(child.stderr).text();
      await readLines(
        child.stdout,
        (line) => void (line.startsWith("sealed ") && sealed.push(line.slice(7))),
      );
      assert.equal((await child.status).code, 0, await stderr);
    }));
    assert.equal(sealed.length, 800);
    await using store = await PostgresStore.open(uri, { runs, max: 8 });
    await assertWholeLog(store, sealed.sort(), { proofs: 40 });
  },
);

pgTest(
  "a postgres writer killed during its seals leaves a log the next writer goes on with, and the audit agrees",
  async ({ uri, runs }) => {
    await (await PostgresStore.open(uri, { runs })).close();
    const killed = await killWriter(
      spawnWriter(WRITER, FLAGS, [uri, runs, "run-20261201T000000Z-k", 400, 0]),
      700,
    );
    const next = await spawnWriter(WRITER, FLAGS, [uri, runs, "run-20261201T000000Z-n", 5, 0]).output();
    assert.equal(next.code, 0, new TextDecoder().decode(next.stderr));
    await using store = await PostgresStore.open(uri, { runs });
    const ids = await store.runIds();
    for (const id of ids) await store.readRun(id);
    assert.deepEqual((await auditStoreLog(store)).problems.map((p) => p.message), []);
    const inLog: string[] = [];
    for (const id of ids) if (await store.log.indexOf(id) !== null) inLog.push(id);
    for (const id of killed.sealed) assert.ok(inLog.includes(id), `${id} was sealed, and is in the log`);
    await assertWholeLog(store, inLog, { proofs: 0 });
  },
);

/**
 * Attacks on the log of an indexed store (sqlite and postgres), by someone who can write its database: a run's
 * row removed, a leaf rewritten, a tile hash rewritten, the log rolled back, a second leaf for a run, a leaf for a
 * run the store never held, the log's key replaced, the log's table changed to take a second leaf. Each is named
 * by the audit, refused by the schema, refused by `prove verify --log-key`, or refused by a witness. The same
 * attacks run on both stores.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { DatabaseSync } from "node:sqlite";
import type { EvidenceStore } from "../../lib/provevi/store/store.ts";
import { logVerifier } from "../../lib/provevi/log/trust_policy.ts";
import { PostgresStore } from "../../lib/provevi/postgres/postgres_store.ts";
import { findRun } from "../../lib/provevi/runs/find_run.ts";
import { auditStoreLog } from "../../lib/provevi/runs/store_log.ts";
import { verifyRun } from "../../lib/provevi/runs/verify_run.ts";
import { SqliteStore } from "../../lib/provevi/sqlite/sqlite_store.ts";
import type { RowsLog } from "../../lib/provevi/log/rows_log.ts";
import { Witness } from "../../lib/provevi/log/witness.ts";
import { newKeyFile } from "../../lib/provevi/log/log_key.ts";
import { leafBytes } from "../../lib/provevi/log/run_leaf.ts";
import { addCheckpointBody } from "../../lib/provevi/log/witness.ts";
import { writeRichRun } from "../provevi/_rich_run.ts";
import { freshDatabase, onDatabase } from "../provevi/postgres/_pg.ts";
import { Tally } from "./_tally.ts";
import { type PeerName, peerTest } from "../_peers.ts";

const tally = new Tally("log rows attacks");
const IDS = [0, 1, 2].map((i) => `run-20261201T000000Z-0000000${i}`);

/** A store of three sealed runs, a way to run SQL on its database as an attacker would, and to open it again. */
interface Kind {
  name: string;
  peer: PeerName | null;
  make(): Promise<{
    open(): Promise<EvidenceStore & { log: RowsLog }>;
    sql(text: string): Promise<void>;
    done(): Promise<void>;
  }>;
}

const KINDS: Kind[] = [
  {
    name: "sqlite",
    peer: null,
    make: async () => {
      const dir = await Deno.makeTempDir({ prefix: "log-rows-attack-" });
      const db = join(dir, "evidence.db");
      const runs = join(dir, "runs");
      // Async, so that a refusal is a rejection, as postgres' is.
      const open = async () => await Promise.resolve(new SqliteStore(db, { runs }));
      return {
        open,
        sql: async (text) => {
          const raw = new DatabaseSync(db);
          try {
            await Promise.resolve(raw.exec(text));
          } finally {
            raw.close();
          }
        },
        done: () => Deno.remove(dir, { recursive: true }),
      };
    },
  },
  {
    name: "postgres",
    peer: "postgres",
    make: async () => {
      const runs = await Deno.makeTempDir({ prefix: "log-rows-attack-pg-" });
      const db = await freshDatabase();
      return {
        open: () => PostgresStore.open(db.uri, { runs }),
        sql: (text) => onDatabase(db.uri, async (sql) => void await sql.unsafe(text)),
        done: async () => {
          await db.drop();
          await Deno.remove(runs, { recursive: true });
        },
      };
    },
  },
];

function attack(
  title: string,
  fn: (
    c: Awaited<ReturnType<Kind["make"]>>,
    store: EvidenceStore & { log: RowsLog },
    kind: string,
  ) => Promise<void>,
): void {
  for (const kind of KINDS) {
    peerTest(kind.peer, {
      name: `${kind.name}: ${title}`,
      fn: async () => {
        const c = await kind.make();
        try {
          {
            await using store = await c.open();
            for (const id of IDS) await writeRichRun(await store.openRun(id));
          }
          await using store = await c.open();
          assert.deepEqual((await auditStoreLog(store)).problems, []);
          await fn(c, store, kind.name);
        } finally {
          await c.done();
        }
      },
    });
  }
}

const codes = async (store: EvidenceStore, options: Parameters<typeof auditStoreLog>[1] = {}) =>
  (await auditStoreLog(store, { verify: false, ...options })).problems.map((p) => p.code);

attack("a run's rows removed are named by the audit (log.added)", async (c, store, kind) => {
  await c.sql(
    `DELETE FROM provevi_events WHERE run_id = '${IDS[1]}'; DELETE FROM provevi_runs WHERE run_id = '${
      IDS[1]
    }'`,
  );
  const found = await codes(store);
  tally.add(`${kind}: run removed`, { stopped: found.includes("log.added"), recorded: true });
  assert.deepEqual(found, ["log.added"]);
});

attack("a leaf rewritten in its row is named by the audit (log.tree_mismatch)", async (c, store, kind) => {
  const leaf = new TextDecoder().decode(leafBytes({
    run_id: IDS[1]!,
    manifest_sha256: "0".repeat(64),
    last_hash: "1".repeat(64),
    attestation_sha256: null,
  }));
  const blob = kind === "sqlite" ? `CAST('${leaf}' AS BLOB)` : `convert_to('${leaf}', 'UTF8')`;
  await c.sql(`UPDATE provevi_log_entries SET entry = ${blob} WHERE idx = 1`);
  const found = await codes(store);
  tally.add(`${kind}: leaf rewritten`, { stopped: found.includes("log.tree_mismatch"), recorded: true });
  assert.ok(found.includes("log.tree_mismatch"), found.join());
});

attack(
  "a tree hash rewritten in its row is named by the audit (log.tree_mismatch)",
  async (c, store, kind) => {
    const zero = kind === "sqlite" ? "zeroblob(32)" : "decode(repeat('00', 32), 'hex')";
    await c.sql(`UPDATE provevi_log_hashes SET hash = ${zero} WHERE level = 0 AND n = 2`);
    const found = await codes(store);
    tally.add(`${kind}: hash rewritten`, { stopped: found.includes("log.tree_mismatch"), recorded: true });
    assert.ok(found.includes("log.tree_mismatch"), found.join());
  },
);

attack(
  "a log rolled back is named by the audit --since and refused by a witness (409)",
  async (c, store, kind) => {
    const seen = (await store.log.checkpoint())!;
    const key = (await store.log.key())!;
    const state = await Deno.makeTempDir({ prefix: "log-rows-witness-" });
    const w = new Witness({
      name: "witness.test/r",
      seed: new Uint8Array(randomBytes(32)),
      state,
      logs: [key.verifier],
    });
    assert.equal((await w.addCheckpoint(addCheckpointBody(0, [], seen))).status, 200);
    await c.sql(
      `DELETE FROM provevi_log_checkpoints WHERE size = 3; DELETE FROM provevi_log_entries WHERE idx = 2;
    DELETE FROM provevi_log_hashes WHERE level = 0 AND n = 2`,
    );
    const found = await codes(store, { since: seen });
    const older = (await store.log.checkpoint())!;
    const answer = await w.addCheckpoint(addCheckpointBody(2, [], older));
    tally.add(`${kind}: rolled back`, {
      stopped: found.includes("log.rolled_back") && answer.status === 409,
      recorded: true,
    });
    assert.ok(found.includes("log.rolled_back"), found.join());
    assert.equal(answer.status, 409);
  },
);

attack("a second leaf for a run is refused by the table's key", async (c, _store, kind) => {
  const blob = kind === "sqlite" ? "CAST('x' AS BLOB)" : "convert_to('x', 'UTF8')";
  const refused = await c.sql(
    `INSERT INTO provevi_log_entries (idx, run_id, entry) VALUES (3, '${IDS[0]}', ${blob})`,
  )
    .then(() => null, (e) => String(e));
  tally.add(`${kind}: second leaf`, { stopped: refused !== null, recorded: true });
  assert.match(refused ?? "", /UNIQUE|unique|duplicate/);
});

attack("a leaf of a run the store never held is named by the audit (log.added)", async (_c, store, kind) => {
  await store.log.append([{
    run_id: "run-20261201T000000Z-0000000f",
    manifest_sha256: "2".repeat(64),
    last_hash: "3".repeat(64),
    attestation_sha256: null,
  }]);
  const found = await codes(store);
  tally.add(`${kind}: leaf for no run`, { stopped: found.includes("log.added"), recorded: true });
  assert.deepEqual(found, ["log.added"]);
});

attack(
  "the log's key replaced is refused by prove verify --log-key (log.untrusted) and the audit",
  async (c, store, kind) => {
    const key = (await store.log.key())!;
    const policy = { logs: [logVerifier(key.verifier.vkey)], witnesses: [], quorum: 0 };
    const other = JSON.stringify(newKeyFile()).replaceAll("'", "''");
    await c.sql(`UPDATE provevi_log_key SET key = '${other}'`);
    await using again = await c.open(); // a writer that reads the replaced key
    await writeRichRun(await again.openRun("run-20261201T000000Z-00000009"));
    const record = await findRun("run-20261201T000000Z-00000009", { store: again });
    const verified = (await verifyRun(record, { log: policy })).problems.map((p) => p.code);
    const audited = await codes(again, { policy });
    tally.add(`${kind}: key replaced`, {
      stopped: verified.includes("log.untrusted") && audited.includes("log.untrusted"),
      recorded: true,
    });
    assert.deepEqual(verified, ["log.untrusted"]);
    assert.ok(audited.includes("log.untrusted"), audited.join());
    void store;
  },
);

attack(
  "the log's table changed to take a second leaf for a run is refused at the next open",
  async (c, _store, kind) => {
    await c.sql(
      kind === "sqlite"
        ? `CREATE TABLE t AS SELECT * FROM provevi_log_entries; DROP TABLE provevi_log_entries;
         CREATE TABLE provevi_log_entries (idx INTEGER PRIMARY KEY, run_id TEXT NOT NULL, entry BLOB NOT NULL);
         INSERT INTO provevi_log_entries SELECT * FROM t; DROP TABLE t;`
        : `ALTER TABLE provevi_log_entries DROP CONSTRAINT provevi_log_entries_run_id_key`,
    );
    const refused = await c.open().then(async (s) => (await s.close(), null), (e) => String(e));
    tally.add(`${kind}: table changed`, { stopped: refused !== null, recorded: true });
    assert.match(refused ?? "", /provevi_log_entries/);
  },
);

Deno.test("the log rows attack tally", () => {
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});

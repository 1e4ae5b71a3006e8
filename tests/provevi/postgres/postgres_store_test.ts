import assert from "node:assert/strict";
import { join } from "node:path";
import { ProveviError, RunNotFound } from "../../../lib/provevi/evidence/errors.ts";
import { PostgresStore } from "../../../lib/provevi/postgres/postgres_store.ts";
import { openStore } from "../../../lib/provevi/runs/open_store.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import {
  POSTGRES_SCHEMA_STEPS,
  POSTGRES_SCHEMA_VERSION,
} from "../../../lib/provevi/postgres/postgres_schema.ts";
import { postgresTarget } from "../../../lib/provevi/postgres/postgres_uri.ts";
import { SCHEMA_STEPS, SCHEMA_VERSION } from "../../../lib/provevi/sqlite/sqlite_schema.ts";
import { storeContract } from "../store/store_contract.ts";
import { questionsContract } from "../store/questions_contract.ts";
import { SAMPLE_RUN_ID, writeSampleRun } from "../_sample_run.ts";
import { freshDatabase, onDatabase, PG_URL } from "./_pg.ts";
import { POSTGRES_BACK_TO_6 } from "../_schema_steps.ts";
import { peerTest } from "../../_peers.ts";

storeContract("PostgresStore", async () => {
  const runs = await Deno.makeTempDir({ prefix: "provevi-pg-" });
  const db = await freshDatabase();
  return { store: await PostgresStore.open(db.uri, { runs }), runs, cleanup: db.drop };
}, { peer: "postgres" });

/** A fresh database and runs root, removed at the end of the block. */
async function temp() {
  const dir = await Deno.makeTempDir({ prefix: "provevi-pg-" });
  const db = await freshDatabase();
  return {
    dir,
    uri: db.uri,
    [Symbol.asyncDispose]: async () => {
      await db.drop();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

const pgTest = (name: string, fn: () => Promise<void>) => peerTest("postgres", { name, fn });

Deno.test("postgresTarget() reads the URI, the PG variables and ~/.pgpass, and names no password", async () => {
  const none = () => undefined;
  const t = postgresTarget("postgresql://ada:s3cr%40t@db.internal:5433/evidence", { env: none });
  assert.deepEqual(
    { ...t },
    {
      host: "db.internal",
      port: 5433,
      database: "evidence",
      user: "ada",
      password: "s3cr@t",
      sslmode: "prefer",
      sslrootcert: null,
      hostaddr: null,
      uri: "postgresql://ada@db.internal:5433/evidence",
    },
  );
  const env = (vars: Record<string, string>) => (name: string) => vars[name];
  const fromEnv = postgresTarget("postgres://db.internal/evidence", {
    env: env({ PGUSER: "bob", PGPORT: "6543", PGPASSWORD: "pw" }),
  });
  assert.equal(fromEnv.uri, "postgresql://bob@db.internal:6543/evidence");
  assert.equal(fromEnv.password, "pw");
  const home = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      join(home, ".pgpass"),
      "# comment\nother:*:*:*:no\ndb.internal:5432:evidence:ada:from\\:file\n",
      { mode: 0o600 },
    );
    await Deno.chmod(join(home, ".pgpass"), 0o600);
    const fromFile = postgresTarget("postgresql://ada@db.internal/evidence", { env: none, home });
    assert.equal(fromFile.password, "from:file");
    await Deno.chmod(join(home, ".pgpass"), 0o644); // others can read it: ignored, as libpq ignores it
    assert.equal(postgresTarget("postgresql://ada@db.internal/evidence", { env: none, home }).password, null);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
  assert.throws(
    () => postgresTarget("postgresql://ada:s3cret@h/db?options=x", { env: none }),
    (e: Error) =>
      e instanceof ProveviError && /"options" is not supported/.test(e.message) && !/s3cret/.test(e.message),
  );
  assert.throws(() => postgresTarget("postgresql://ada@h/db#x", { env: none }), /no fragment/);
});

Deno.test("the postgres store has every schema step of the sqlite store, with the same version and description", () => {
  // The postgres steps may run ahead of a branch's sqlite steps (step 3 came with the listing of runs); a
  // sqlite step without its postgres twin fails here.
  for (const step of SCHEMA_STEPS) {
    assert.equal(
      POSTGRES_SCHEMA_STEPS[step.version - 1]?.description,
      step.description,
      `step ${step.version}`,
    );
  }
  assert.ok(POSTGRES_SCHEMA_VERSION >= SCHEMA_VERSION);
});

pgTest(
  "openStore() opens a postgres store; an error names the host and database, never the password",
  async () => {
    await using t = await temp();
    const store = await openStore(t.uri, { runs: t.dir });
    assert.ok(store instanceof PostgresStore);
    assert.doesNotMatch(store.uri, /:[^/@]*@.*:[^/@]*@/);
    await store.close();
    const url = new URL(t.uri);
    const closed = `postgresql://ada:hunter2@127.0.0.1:1/${url.pathname.slice(1)}`;
    await assert.rejects(() => openStore(closed, { runs: t.dir }), (e: Error) => {
      assert.ok(e instanceof ProveviError);
      assert.match(
        e.message,
        /cannot open store "postgresql:\/\/ada@127\.0\.0\.1:1\/provevi_test_\w+": cannot connect/,
      );
      assert.doesNotMatch(e.message, /hunter2/);
      return true;
    });
    url.pathname = "/provevi_no_such_database";
    await assert.rejects(
      () => openStore(url.href, { runs: t.dir }),
      /has no database "provevi_no_such_database"/,
    );
  },
);

pgTest("PostgresStore: read-only refuses a database without provevi tables and writes nothing", async () => {
  await using t = await temp();
  await assert.rejects(() => openStore(t.uri, { runs: t.dir, readOnly: true }), /holds no provevi evidence/);
  const tables = await onDatabase(
    t.uri,
    (sql) => sql`SELECT count(*)::int AS n FROM pg_tables WHERE tablename LIKE 'provevi%'`,
  );
  assert.equal(tables[0]!.n, 0);
  await (await openStore(t.uri, { runs: t.dir })).close();
  const ro = await openStore(t.uri, { runs: t.dir, readOnly: true });
  await assert.rejects(() => ro.openRun("run-x"), /only to read/);
  await ro.close();
});

pgTest("PostgresStore: a database of a newer schema is refused before anything is written", async () => {
  await using t = await temp();
  await (await PostgresStore.open(t.uri, { runs: t.dir })).close();
  await onDatabase(t.uri, (sql) => sql`UPDATE provevi_meta SET value = '99' WHERE key = 'schema_version'`);
  await assert.rejects(
    () => PostgresStore.open(t.uri, { runs: t.dir }),
    /schema version 99, from a newer provevi/,
  );
  await assert.rejects(
    () => PostgresStore.open(t.uri, { runs: t.dir, create: false }),
    /schema version 99, from a newer provevi/,
  );
  const meta = await onDatabase(t.uri, (sql) => sql`SELECT value FROM provevi_meta`);
  assert.deepEqual(meta.map((r) => r.value), ["99"]);
});

pgTest(
  "PostgresStore: a database at version 1 is upgraded step by step, its runs' agent rows filled from their lines",
  async () => {
    await using t = await temp();
    {
      await using store = await PostgresStore.open(t.uri, { runs: t.dir });
      await writeSampleRun(await store.openRun(SAMPLE_RUN_ID));
    }
    // Take the database back to what version 1 held: the run's row and events, no agent tables.
    await onDatabase(t.uri, async (sql) => {
      await sql.unsafe(POSTGRES_BACK_TO_6);
      await sql.unsafe(`
      DROP TABLE provevi_log_key, provevi_log_entries, provevi_log_hashes, provevi_log_checkpoints;
      DROP TABLE provevi_agents, provevi_agent_versions, provevi_experiment_versions, provevi_experiments;
      DROP INDEX provevi_runs_agent_status, provevi_runs_experiment_status, provevi_runs_pin_status,
        provevi_events_cancelled, provevi_runs_unsealed;
      DROP INDEX provevi_runs_status, provevi_runs_started, provevi_events_failed;
      DROP INDEX provevi_runs_agent, provevi_runs_parent, provevi_events_span;
      ALTER TABLE provevi_runs DROP COLUMN agent_version, DROP COLUMN experiment, DROP COLUMN experiment_pin,
        DROP COLUMN experiment_sha256;
      ALTER TABLE provevi_runs RENAME COLUMN agent TO experiment;
      CREATE INDEX provevi_runs_experiment ON provevi_runs (experiment);
      CREATE TABLE provevi_experiments (
        experiment TEXT COLLATE "C" PRIMARY KEY, org TEXT COLLATE "C" NOT NULL, domain TEXT COLLATE "C" NOT NULL,
        env TEXT COLLATE "C" NOT NULL, name TEXT COLLATE "C" NOT NULL, first_run TEXT COLLATE "C" NOT NULL);
      INSERT INTO provevi_experiments VALUES ('acme/demo/dev/revenue-question', 'acme', 'demo', 'dev',
        'revenue-question', '${SAMPLE_RUN_ID}');
      UPDATE provevi_meta SET value = '1';
    `);
    });
    await assert.rejects(
      () => PostgresStore.open(t.uri, { runs: t.dir, create: false }),
      /open it once to write/,
    );
    await using store = await PostgresStore.open(t.uri, { runs: t.dir });
    const row = await store.run(SAMPLE_RUN_ID);
    assert.equal(row?.agent, "acme/demo/dev/revenue-question");
    assert.match(row?.agent_version ?? "", /^[0-9a-f]{64}$/);
    assert.deepEqual(await store.checkRun(SAMPLE_RUN_ID), []);
  },
);

pgTest(
  "PostgresStore: a row that missed its run's seal is completed from the folder when the run is read",
  async () => {
    await using t = await temp();
    await using store = await PostgresStore.open(t.uri, { runs: t.dir });
    await writeSampleRun(await store.openRun(SAMPLE_RUN_ID));
    const sealed = await store.run(SAMPLE_RUN_ID);
    await onDatabase(
      t.uri,
      (sql) =>
        sql.unsafe("UPDATE provevi_runs SET last_hash = NULL, manifest_sha256 = NULL, sealed_at = NULL"),
    );
    assert.equal((await store.run(SAMPLE_RUN_ID))?.manifest_sha256, null);
    await store.readRun(SAMPLE_RUN_ID);
    assert.deepEqual(await store.checkRun(SAMPLE_RUN_ID), []);
    assert.deepEqual(await store.run(SAMPLE_RUN_ID), sealed);
  },
);

pgTest(
  "PostgresStore: rows its writer could not write before the folder's seal (the last events, the payloads) are completed from the folder when the run is read or checked",
  async () => {
    await using t = await temp();
    await using store = await PostgresStore.open(t.uri, { runs: t.dir });
    await writeSampleRun(await store.openRun(SAMPLE_RUN_ID));
    const tables = [
      "provevi_runs",
      "provevi_events",
      "provevi_event_refs",
      "provevi_payloads",
      "provevi_run_params",
    ];
    const dump = () =>
      onDatabase(
        t.uri,
        (sql) => Promise.all(tables.map((n) => sql.unsafe(`SELECT * FROM ${n} ORDER BY 1, 2`))),
      );
    const whole = JSON.stringify(await dump());
    const lose = `DELETE FROM provevi_events WHERE seq >= 0; DELETE FROM provevi_event_refs;
      DELETE FROM provevi_payloads; DELETE FROM provevi_run_params;
      UPDATE provevi_runs SET last_hash = NULL, manifest_sha256 = NULL, sealed_at = NULL, status = 'running'`;
    for (const read of ["readRun", "checkRun"] as const) {
      await onDatabase(t.uri, (sql) => sql.unsafe(lose));
      if (read === "readRun") await store.readRun(SAMPLE_RUN_ID);
      assert.deepEqual(await store.checkRun(SAMPLE_RUN_ID), [], read);
      assert.equal(JSON.stringify(await dump()), whole, read);
    }
  },
);

pgTest(
  "prove verify against a postgres store catches a changed row, a deleted row and a trigger",
  async () => {
    await using t = await temp();
    await using store = await PostgresStore.open(t.uri, { runs: t.dir });
    await writeSampleRun(await store.openRun(SAMPLE_RUN_ID));
    const check = async () =>
      (await verifyRun(await store.readRun(SAMPLE_RUN_ID), { store })).problems.map((p) => p.message);
    assert.deepEqual(await check(), []);
    await onDatabase(
      t.uri,
      (sql) => sql`UPDATE provevi_events SET actor = 'mallory' WHERE run_id = ${SAMPLE_RUN_ID} AND seq = 2`,
    );
    assert.ok(
      (await check()).some((p) =>
        /provevi_events \(run_id "[^"]+", seq 2\): column actor is "mallory"/.test(p)
      ),
    );
    await onDatabase(
      t.uri,
      (sql) => sql`UPDATE provevi_events SET actor = 'ada' WHERE run_id = ${SAMPLE_RUN_ID} AND seq = 2`,
    );
    await onDatabase(
      t.uri,
      (sql) => sql`DELETE FROM provevi_events WHERE run_id = ${SAMPLE_RUN_ID} AND seq = 12`,
    );
    assert.ok(
      (await check()).some((p) => /lines 13–13 are not in the store/.test(p)),
      String(await check()),
    );
    await onDatabase(t.uri, (sql) => sql`DELETE FROM provevi_payloads WHERE run_id = ${SAMPLE_RUN_ID}`);
    assert.ok(
      (await check()).some((p) =>
        /provevi_payloads \(run_id "[^"]+", sha256 [0-9a-f]{64}\) is missing/.test(p)
      ),
    );
    await onDatabase(t.uri, (sql) =>
      sql.unsafe(
        `CREATE FUNCTION provevi_hide() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
      CREATE TRIGGER hide BEFORE INSERT ON provevi_events FOR EACH ROW EXECUTE FUNCTION provevi_hide();`,
      ));
    assert.ok((await check()).some((p) => /store: the schema has a trigger hide on provevi_events/.test(p)));
    await assert.rejects(() => PostgresStore.open(t.uri, { runs: t.dir }), /the schema was changed/);
  },
);

pgTest(
  "PostgresStore: a run made on another machine is found by its rows and verified from a copy of its folder",
  async () => {
    await using t = await temp();
    await using store = await PostgresStore.open(t.uri, { runs: join(t.dir, "a") });
    await writeSampleRun(await store.openRun(SAMPLE_RUN_ID));
    const copy = join(t.dir, "c", SAMPLE_RUN_ID);
    await Deno.mkdir(join(t.dir, "c"));
    await Deno.rename(join(t.dir, "a", SAMPLE_RUN_ID), copy);
    await assert.rejects(
      () => store.readRun(SAMPLE_RUN_ID),
      (e: Error) =>
        e instanceof RunNotFound &&
        /not on this machine; it has no committed bundle: copy its folder here/.test(e.message),
    );
    const { findRun } = await import("../../../lib/provevi/runs/find_run.ts");
    const check = await verifyRun(await findRun(copy), { store });
    assert.deepEqual(check.problems.map((p) => p.message), []);
    await Deno.writeTextFile(join(copy, "evidence", "events.jsonl"), "\n", { append: true });
    assert.notDeepEqual((await verifyRun(await findRun(copy), { store })).problems.map((p) => p.message), []);
  },
);

questionsContract("PostgresStore", async () => {
  const runs = await Deno.makeTempDir({ prefix: "provevi-pg-q-" });
  const db = await freshDatabase();
  return { store: await PostgresStore.open(db.uri, { runs }), runs, cleanup: db.drop };
}, { indexed: true, peer: "postgres" });

pgTest(
  "PostgresStore refuses to write to a database whose encoding cannot hold every character",
  async () => {
    const name = `provevi_test_latin1_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
    const server = new URL(PG_URL!);
    await onDatabase(
      server.href,
      (sql) =>
        sql.unsafe(
          `CREATE DATABASE ${name} ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0`,
        ),
    );
    try {
      server.pathname = `/${name}`;
      await assert.rejects(
        PostgresStore.open(server.href, { runs: "/tmp/unused-runs" }),
        (error: Error) => {
          assert.ok(error instanceof ProveviError);
          assert.match(
            error.message,
            /encoding is LATIN1, which cannot hold every character .*createdb -E UTF8/,
          );
          return true;
        },
      );
      // Nothing was written: the database holds no provevi table.
      const [row] = await onDatabase(
        server.href,
        (sql) => sql`SELECT count(*)::int AS n FROM pg_class WHERE relname LIKE 'provevi\_%'`,
      );
      assert.equal(row!.n, 0);
    } finally {
      server.pathname = "/postgres";
      await onDatabase(server.href, (sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    }
  },
);

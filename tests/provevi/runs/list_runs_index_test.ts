/**
 * Schema step 4 (the indexes of filtered pages of runs) in both indexed stores: a store of version 3 is
 * upgraded when opened to write and keeps every row, its runs still verify; and the queries that `listRuns`
 * makes for each filter are planned on the new indexes (asserted on EXPLAIN's output, not on timings).
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import type postgres from "postgres";
import type { ListRunsOptions } from "../../../lib/provevi/runs/list_runs.ts";
import { PostgresStore } from "../../../lib/provevi/postgres/postgres_store.ts";
import { listRuns } from "../../../lib/provevi/runs/list_runs.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { SqliteStore } from "../../../lib/provevi/sqlite/sqlite_store.ts";
import { POSTGRES_SCHEMA_VERSION } from "../../../lib/provevi/postgres/postgres_schema.ts";
import { SCHEMA_VERSION, schemaVersion } from "../../../lib/provevi/sqlite/sqlite_schema.ts";
import { writeSampleRun } from "../_sample_run.ts";
import { POSTGRES_BACK_TO_6, SQLITE_BACK_TO_6 } from "../_schema_steps.ts";
import { freshDatabase, onDatabase } from "../postgres/_pg.ts";
import { peerTest } from "../../_peers.ts";

const RUNS = [
  "run-20261129T120000Z-0000000a",
  "run-20261129T120100Z-0000000b",
  "run-20261129T120200Z-0000000c",
];
const TABLES = [
  "provevi_runs",
  "provevi_events",
  "provevi_event_refs",
  "provevi_payloads",
  "provevi_run_params",
  "provevi_agents",
  "provevi_agent_versions",
  "provevi_experiments",
  "provevi_experiment_versions",
  "provevi_assessments",
];

/**
 * What version 3 held that step 4 changes: its indexes go, and the two it dropped come back; the log of step 6
 * goes too (step 5 redoes what it makes).
 */
const BACK_TO_3 = `
DROP TABLE provevi_log_key;
DROP TABLE provevi_log_entries;
DROP TABLE provevi_log_hashes;
DROP TABLE provevi_log_checkpoints;
DROP INDEX provevi_runs_agent_status;
DROP INDEX provevi_runs_experiment_status;
DROP INDEX provevi_runs_pin_status;
DROP INDEX provevi_events_cancelled;
DROP INDEX provevi_runs_unsealed;
CREATE INDEX provevi_runs_experiment ON provevi_runs (experiment);
CREATE INDEX provevi_runs_experiment_pin ON provevi_runs (experiment_pin);
UPDATE provevi_meta SET value = '3' WHERE key = 'schema_version';
`;

/** The filters whose page must be read from an index, and the index each must read. */
const FILTERED: [ListRunsOptions, RegExp][] = [
  [{ agent: "revenue-question", status: "failed" }, /provevi_runs_agent_status/],
  [{ agent: "acme/demo/dev/revenue-question", status: "completed" }, /provevi_runs_agent_status/],
  // Without a status, either index of the agent will do: the agent's runs are then sorted.
  [{ agent: "revenue-question" }, /provevi_runs_agent(_status)? /],
  [{ experiment: "experiment://acme/demo/dev/q", status: "completed" }, /provevi_runs_experiment_status/],
  [{ experiment: "experiment://acme/demo/dev/q?at=v1", status: "failed" }, /provevi_runs_pin_status/],
  [{ status: "cancelled" }, /provevi_events_cancelled/],
  [{ status: "cut" }, /provevi_runs_unsealed/],
];

Deno.test("sqlite: a store of schema version 3 is upgraded when opened to write, every row kept, its runs verified", async () => {
  const dir = await Deno.makeTempDir({ prefix: "provevi-step4-" });
  try {
    const path = join(dir, "e.db");
    const count = (db: DatabaseSync) =>
      TABLES.map((t) => [t, (db.prepare(`SELECT count(*) AS n FROM ${t}`).get() as { n: number }).n]);
    let before;
    {
      await using store = new SqliteStore(path, { runs: dir });
      for (const id of RUNS) await writeSampleRun(await store.openRun(id));
      before = count(store.db);
      store.db.exec(SQLITE_BACK_TO_6);
      store.db.exec(BACK_TO_3);
      assert.equal(schemaVersion(store.db), 3);
    }
    assert.throws(
      () => new SqliteStore(path, { runs: dir, create: false }),
      new RegExp(
        `schema version 3, and this provevi reads ${SCHEMA_VERSION}; open it once to write to upgrade it`,
      ),
    );
    {
      await using store = new SqliteStore(path, { runs: dir });
      assert.equal(schemaVersion(store.db), SCHEMA_VERSION);
    }
    await using store = new SqliteStore(path, { runs: dir, create: false });
    assert.deepEqual(count(store.db), before);
    for (const id of RUNS) {
      const check = await verifyRun(await store.readRun(id), { store });
      assert.deepEqual(check.problems, [], id);
    }
    assert.deepEqual(
      (await listRuns(store, { agent: "revenue-question" })).runs.map((r) => r.run_id),
      [
        ...RUNS,
      ].reverse(),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sqlite: listRuns' filtered pages are planned on the indexes of step 4, never a scan of every run", async () => {
  const dir = await Deno.makeTempDir({ prefix: "provevi-step4-" });
  try {
    await using store = new SqliteStore(join(dir, "e.db"), { runs: dir });
    for (const id of RUNS) await writeSampleRun(await store.openRun(id));
    const db = store.db;
    const seen: string[] = [];
    const prepare = db.prepare.bind(db);
    db.prepare = (sql: string) => {
      seen.push(sql);
      return prepare(sql);
    };
    for (const [options, index] of FILTERED) {
      seen.length = 0;
      await listRuns(store, { ...options, limit: 50, offset: 50 });
      const page = seen.filter((sql) => /^(WITH page|SELECT count)/.test(sql.trim()));
      assert.ok(page.length > 0, `no page query for ${JSON.stringify(options)}`);
      for (const sql of page) {
        const plan = (prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[])
          .map((r) => r.detail).join("\n");
        assert.match(plan, index, `${JSON.stringify(options)}:\n${plan}`);
        assert.doesNotMatch(plan, /SCAN r\b/, `${JSON.stringify(options)}:\n${plan}`);
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

peerTest("postgres", {
  name:
    "postgres: a store of schema version 3 is upgraded when opened to write, every row kept, its runs verified",
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "provevi-step4-" });
    const db = await freshDatabase();
    try {
      const count = (sql: postgres.Sql) =>
        Promise.all(
          TABLES.map(async (t) => [t, (await sql.unsafe(`SELECT count(*)::int AS n FROM ${t}`))[0]!.n]),
        );
      let before;
      {
        await using store = await PostgresStore.open(db.uri, { runs: dir });
        for (const id of RUNS) await writeSampleRun(await store.openRun(id));
        before = await count(store.sql);
      }
      await onDatabase(db.uri, (sql) => sql.unsafe(POSTGRES_BACK_TO_6 + BACK_TO_3));
      await assert.rejects(
        () => PostgresStore.open(db.uri, { runs: dir, create: false }),
        /open it once to write/,
      );
      {
        await using store = await PostgresStore.open(db.uri, { runs: dir });
        const [meta] = await store.sql.unsafe("SELECT value FROM provevi_meta WHERE key = 'schema_version'");
        assert.equal(Number(meta!.value), POSTGRES_SCHEMA_VERSION);
      }
      await using store = await PostgresStore.open(db.uri, { runs: dir, create: false });
      assert.deepEqual(await count(store.sql), before);
      for (const id of RUNS) {
        const check = await verifyRun(await store.readRun(id), { store });
        assert.deepEqual(check.problems, [], id);
      }
    } finally {
      await db.drop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

peerTest("postgres", {
  name:
    "postgres: listRuns' filtered pages and the questions by agent and experiment are planned on step 4's indexes",
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "provevi-step4-" });
    const db = await freshDatabase();
    try {
      await using store = await PostgresStore.open(db.uri, { runs: dir });
      for (const id of RUNS) await writeSampleRun(await store.openRun(id));
      const sql = store.sql;
      // An experiment that the question can name (the sample runs name none; the plan is the same).
      await sql.unsafe("INSERT INTO provevi_experiments (experiment, first_run) VALUES ($1, $2)", [
        "experiment://acme/demo/dev/q",
        RUNS[0]!,
      ]);
      const seen: [string, unknown[]][] = [];
      const unsafe = sql.unsafe;
      // deno-lint-ignore no-explicit-any
      (sql as any).unsafe = (text: string, params?: unknown[], options?: unknown) => {
        seen.push([text, params ?? []]);
        // deno-lint-ignore no-explicit-any
        return (unsafe as any)(text, params, options);
      };
      // With three runs the planner would rightly read the table itself; without sequential scans it shows
      // which index the query's shape can use.
      const plan = (text: string, params: unknown[]) =>
        sql.begin(async (tx) => {
          await tx.unsafe("SET LOCAL enable_seqscan = off");
          // deno-lint-ignore no-explicit-any
          const rows = await tx.unsafe(`EXPLAIN ${text}`, params as any[]);
          return rows.map((r) => String(r["QUERY PLAN"])).join("\n");
        });
      const cases: [() => Promise<unknown>, RegExp][] = [
        ...FILTERED.map(([options, index]) =>
          [() => listRuns(store, { ...options, limit: 50, offset: 50 }), index] as [
            () => Promise<unknown>,
            RegExp,
          ]
        ),
        [
          () => store.runsOfAgent("revenue-question"),
          /Index (Only )?Scan (using|on) provevi_runs_agent_status/,
        ],
        [
          () => store.runsOfExperiment("experiment://acme/demo/dev/q"),
          /Index (Only )?Scan (using|on) provevi_runs_experiment_status/,
        ],
      ];
      for (const [call, index] of cases) {
        seen.length = 0;
        await call();
        const queries = seen.filter(([text]) => /provevi_runs r/.test(text));
        assert.ok(queries.length > 0, String(call));
        for (const [text, params] of queries) {
          const shown = await plan(text, params);
          assert.match(shown, index, `${call}:\n${shown}`);
          assert.doesNotMatch(shown, /Seq Scan on provevi_runs/, `${call}:\n${shown}`);
        }
      }
    } finally {
      await db.drop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

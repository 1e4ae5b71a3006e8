/**
 * The check of an indexed store's rows (`prove verify` with a store, the viewer, `store.checkRun`) against a
 * tampered store: for each table it reads of a run, 300,000 junk rows of the run, and a few rows holding a
 * text of 100 MiB. It read each table's rows of the run at once (2.6 GB and 23 s for two million), and so did
 * the completion of a run whose rows missed its seal. Now the rows come as they are read, no more than the run
 * implies and 1,000 more, a row of more than 32 MiB of text (a folder past 4,096 bytes) is refused by its size before it leaves the store, and the check
 * stops after 1,000 problems: each stop is one problem naming the table. The sqlite store is read through
 * node:sqlite, the postgres store from the server of `.ci/peers/postgres.sh`.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import postgres from "postgres";
import { DatabaseSync } from "node:sqlite";
import { SqliteStore } from "../../lib/provevi/sqlite/sqlite_store.ts";
import { PostgresStore } from "../../lib/provevi/postgres/postgres_store.ts";
import { bufferIo } from "../../cli/_io.ts";
import { prove } from "../../cli/prove.ts";
import { writeRichRun } from "../provevi/_rich_run.ts";
import { freshDatabase } from "../provevi/postgres/_pg.ts";
import { peerTest } from "../_peers.ts";
import { measuredInChild } from "./_setup.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("row check attacks");
const MiB = 1024 * 1024;
const RUN = "run-20261203T000000Z-0000c4ec";
/** Enough junk rows that reading them whole takes some 440 MiB (2,000,000 took 2.9 GB before the bounds). */
const JUNK = 300_000;

/** The junk rows' numbers, 1,000 to 1,000 + JUNK - 1, as each store's SQL makes them (`k.i`). */
const ROWS = {
  sqlite: `(WITH RECURSIVE k(i) AS (SELECT 1000 UNION ALL SELECT i + 1 FROM k WHERE i < ${
    JUNK + 999
  }) SELECT i FROM k) AS k`,
  postgres: `generate_series(1000, ${JUNK + 999}) AS k(i)`,
};
/** A text of 100 MiB, in each store's SQL. */
const HUGE = {
  sqlite: `'"' || hex(zeroblob(${50 * MiB})) || '"'`,
  postgres: `'"' || repeat('0', ${100 * MiB}) || '"'`,
};

/** The one problem that says the check stopped reading a table: past its bound, or at 1,000 problems. */
const stopped = (code: string, table: string) =>
  new RegExp(
    `^rows\\.${code} ${table}(: the check of run "${RUN}" stops at 1000 problems: the rest of its rows is not read| holds more rows of run "${RUN}" than .+ imply \\(\\d+\\): the rest of them is not read)$`,
  );
/** The one problem of a row holding a text too wide to read. */
const wide = (code: string, key: string) =>
  new RegExp(
    `^rows\\.${code} ${key} holds more text than a row of the run may \\(33554432 bytes, a path 4096\\): it is not read$`,
  );

type Dialect = "sqlite" | "postgres";
/**
 * Each attack: its statements in a store's SQL (`$RUN` is the run ID's placeholder), and the answer; `only`, the
 * store whose columns can hold it (a postgres integer column holds no text); `grows`, the memory it may take, when
 * not 64 MiB.
 */
const SHAPES: Record<
  string,
  { sql: (d: Dialect) => string[]; answer: RegExp; verify?: RegExp; only?: Dialect; grows?: number }
> = {
  "300,000 junk event rows after its events": {
    sql: (d) => [
      `INSERT INTO provevi_events (run_id, seq, time, type, component, actor, confidence, line)
        SELECT $RUN, i, '', '', '', '', '', '' FROM ${ROWS[d]}`,
    ],
    answer: stopped("event_differs", "provevi_events"),
  },
  "300,000 junk URIs of its first event": {
    sql: (
      d,
    ) => [`INSERT INTO provevi_event_refs (run_id, seq, n, uri) SELECT $RUN, 0, i, 'junk' FROM ${ROWS[d]}`],
    answer: stopped("refs_differ", "provevi_event_refs"),
  },
  "300,000 junk payload rows": {
    sql: (d) => [
      `INSERT INTO provevi_payloads (run_id, sha256, size, place) SELECT $RUN, 'junk' || i, 1, 'x' FROM ${
        ROWS[d]
      }`,
    ],
    answer: stopped("payload_differs", "provevi_payloads"),
  },
  "300,000 junk settings": {
    sql: (
      d,
    ) => [
      `INSERT INTO provevi_run_params (run_id, key, value) SELECT $RUN, 'junk' || i, '1' FROM ${ROWS[d]}`,
    ],
    answer: stopped("settings_differ", "provevi_run_params"),
  },
  "300,000 junk assessments": {
    sql: (d) => [
      `INSERT INTO provevi_assessments (run_id, seq, name, value, created_at)
        SELECT $RUN, 999999, 'junk', '1', '' FROM ${ROWS[d]}`,
    ],
    answer: stopped("assessment_differs", "provevi_assessments"),
  },
  "300,000 junk agent classes naming it as their first run": {
    sql: (d) => [
      `INSERT INTO provevi_agents (agent, org, domain, env, name, first_run)
        SELECT 'junk' || i, '', '', '', '', $RUN FROM ${ROWS[d]}`,
    ],
    answer: stopped("settings_differ", "provevi_agents"),
  },
  "its row unsealed, to be completed, and 300,000 junk event rows": {
    sql: (d) => [
      `UPDATE provevi_runs SET manifest_sha256 = NULL WHERE run_id = $RUN`,
      `INSERT INTO provevi_events (run_id, seq, time, type, component, actor, confidence, line)
        SELECT $RUN, i, '', '', '', '', '', '' FROM ${ROWS[d]}`,
    ],
    answer: stopped("event_differs", "provevi_events"),
  },
  "an event row whose line is 100 MiB": {
    sql: (d) => [`UPDATE provevi_events SET line = ${HUGE[d]} WHERE run_id = $RUN AND seq = 2`],
    answer: wide("event_differs", `provevi_events \\(run_id "${RUN}", seq 2\\)`),
  },
  "its row unsealed, to be completed, and an event row whose line is 100 MiB": {
    sql: (d) => [
      `UPDATE provevi_runs SET manifest_sha256 = NULL WHERE run_id = $RUN`,
      `UPDATE provevi_events SET line = ${HUGE[d]} WHERE run_id = $RUN AND seq = 2`,
    ],
    answer: wide("event_differs", `provevi_events \\(run_id "${RUN}", seq 2\\)`),
  },
  "a setting whose value is 100 MiB": {
    sql: (
      d,
    ) => [`UPDATE provevi_run_params SET value = ${HUGE[d]} WHERE run_id = $RUN AND key = 'model'`],
    answer: wide("settings_differ", `provevi_run_params \\(run_id "${RUN}", key model\\)`),
  },
  "its run row's org of 100 MiB": {
    sql: (d) => [`UPDATE provevi_runs SET org = ${HUGE[d]} WHERE run_id = $RUN`],
    answer: wide("run_differs", `provevi_runs \\(run_id "${RUN}"\\)`),
  },
  "its run row's folder of 100 MiB": {
    sql: (d) => [`UPDATE provevi_runs SET folder = ${HUGE[d]} WHERE run_id = $RUN`],
    answer: wide("run_differs", `provevi_runs \\(run_id "${RUN}"\\)`),
    // prove verify reads the run at its folder first: its one line
    verify: new RegExp(
      `^prove: the row of run "${RUN}" in store \\S+ holds a folder longer than 4096 bytes, longer than any path: it is not a run's$`,
    ),
  },
  "its agent version's tools of 100 MiB": {
    sql: (d) => [`UPDATE provevi_agent_versions SET tools = ${HUGE[d]} WHERE first_run = $RUN`],
    answer: wide("settings_differ", `provevi_agent_versions \\(agent \\S+, version [0-9a-f]{64}\\)`),
  },
  "an assessment whose value is 100 MiB": {
    sql: (d) => [
      `INSERT INTO provevi_assessments (run_id, seq, name, value, created_at) SELECT $RUN, 1, 'big', ${
        HUGE[d]
      }, ''`,
    ],
    answer: wide("assessment_differs", `provevi_assessments \\(id \\d+, run_id "${RUN}"\\)`),
  },
  // the check kept the line of each event row it read (a row's up to 32 MiB): a row past the file's lines keeps none
  "512 junk event rows after its events, each line 1 MiB": {
    sql: (d) => [
      `INSERT INTO provevi_events (run_id, seq, time, type, component, actor, confidence, line)
        SELECT $RUN, i, '', '', '', '', '', ${
        d === "sqlite" ? `hex(zeroblob(${MiB / 2}))` : `repeat('0', ${MiB})`
      }
        FROM ${
        d === "sqlite"
          ? ROWS.sqlite.replace(String(JUNK + 999), "1511")
          : "generate_series(1000, 1511) AS k(i)"
      }`,
    ],
    answer: /^rows\.event_differs provevi_events \(run_id "[^"]+", seq 10\d\d\)/,
    // each row read is garbage once checked, which the heap collects late: 512 MiB kept took some 540 MiB
    grows: 192 * MiB,
  },
  // a postgres cursor fetched 512 rows at once, each up to 32 MiB: 64 of 4 MiB took 396 MiB
  "64 junk event rows after its events, each line 4 MiB": {
    sql: (d) => [
      `INSERT INTO provevi_events (run_id, seq, time, type, component, actor, confidence, line)
        SELECT $RUN, i, '', '', '', '', '', ${
        d === "sqlite" ? `hex(zeroblob(${2 * MiB}))` : `repeat('0', ${4 * MiB})`
      }
        FROM ${
        d === "sqlite"
          ? ROWS.sqlite.replace(String(JUNK + 999), "1063")
          : "generate_series(1000, 1063) AS k(i)"
      }`,
    ],
    answer: /^rows\.event_differs provevi_events \(run_id "[^"]+", seq 10\d\d\)/,
    // as above, each row garbage once checked: 256 MiB read took some 140-190 MiB
    grows: 192 * MiB,
  },

  // sqlite keeps a text that is not a number as it is, in an integer column: the columns read whole
  "an event row whose seq is a text of 100 MiB": {
    sql: (d) => [`UPDATE provevi_events SET seq = ${HUGE[d]} WHERE run_id = $RUN AND seq = 2`],
    answer: wide("event_differs", `provevi_events \\(run_id "${RUN}", seq null\\)`),
    only: "sqlite",
  },
  "every event row's seq a text of 24 MiB": {
    sql:
      () => [`UPDATE provevi_events SET seq = seq || '-' || hex(zeroblob(${12 * MiB})) WHERE run_id = $RUN`],
    answer: wide("event_differs", `provevi_events \\(run_id "${RUN}", seq null\\)`),
    only: "sqlite",
  },
  "a payload row whose size is a text of 100 MiB": {
    sql: (d) => [`UPDATE provevi_payloads SET size = ${HUGE[d]} WHERE run_id = $RUN`],
    answer: wide("payload_differs", `provevi_payloads \\(run_id "${RUN}", sha256 [0-9a-f]{64}\\)`),
    only: "sqlite",
  },
};

interface Store {
  uri: string;
  open: (runs: string) => Promise<SqliteStore | PostgresStore>;
  tamper: (statements: string[]) => Promise<void>;
  drop: () => Promise<void>;
}

function sqliteStore(dir: string): Store {
  const path = join(dir, "evidence.db");
  return {
    uri: `sqlite:///${path}`,
    open: (runs) => Promise.resolve(new SqliteStore(path, { runs })),
    tamper: (statements) => {
      const db = new DatabaseSync(path);
      try {
        for (const s of statements) db.prepare(s.replaceAll("$RUN", "?1")).run(RUN);
      } finally {
        db.close();
      }
      return Promise.resolve();
    },
    drop: () => Promise.resolve(),
  };
}

async function postgresStore(): Promise<Store> {
  const db = await freshDatabase();
  return {
    uri: db.uri,
    open: (runs) => PostgresStore.open(db.uri, { runs }),
    tamper: async (statements) => {
      const raw = postgres(db.uri, { max: 1, onnotice: () => {} });
      try {
        for (const s of statements) await raw.unsafe(s.replaceAll("$RUN", "$1::text"), [RUN]);
      } finally {
        await raw.end();
      }
    },
    drop: db.drop,
  };
}

for (const kind of ["sqlite", "postgres"] as const) {
  for (const [shape, attack] of Object.entries(SHAPES)) {
    if (attack.only !== undefined && attack.only !== kind) continue;
    peerTest(kind === "postgres" ? "postgres" : null, {
      name:
        `a ${kind} store's run with ${shape}: the check of its rows answers in bounded memory, in one line`,
      fn: async () => {
        const dir = await Deno.makeTempDir({ prefix: "attack-row-check-" });
        const store = kind === "sqlite" ? sqliteStore(dir) : await postgresStore();
        try {
          const runs = join(dir, "runs");
          {
            await using writing = await store.open(runs);
            await writeRichRun(await writing.openRun(RUN));
          }
          await store.tamper(attack.sql(kind));
          // measured in a process of its own: this one's RSS counts what the files running beside it hold
          const { grew, ms, got } = await measuredInChild<
            { count: number; match: string | null; first: string[] } & { threw?: string }
          >("./_row_check_work.ts", "checkRun", store.uri, runs, RUN, attack.answer.source);
          console.log(
            `${kind}, ${shape}: ${Math.round(grew / MiB)} MiB more memory, ${ms} ms, ${got.count} problems: ${
              got.match ?? got.threw ?? JSON.stringify(got.first)
            }`,
          );
          // prove verify: the problem among its lines on stdout, no stack
          const io = bufferIo();
          const code = await prove(["--store", store.uri, "--runs", runs, "verify", RUN], io);
          const said = [...io.stdout, ...io.stderr].join("\n");
          // the check's one line, as verify prints it
          const message = (got.match ?? "").slice((got.match ?? "").indexOf(" ") + 1);
          const told = said.split("\n").some((l) =>
            attack.verify ? attack.verify.test(l) : message !== "" && l.includes(message)
          );
          tally.add(`${kind}: ${shape}`, {
            stopped: grew < (attack.grows ?? 64 * MiB) && got.count <= 1002,
            recorded: got.match !== null && !got.match.includes("\n") && got.threw === undefined && told,
          });
          assert.equal(got.threw, undefined, got.threw);
          assert.ok(grew < (attack.grows ?? 64 * MiB), `the check took ${Math.round(grew / MiB)} MiB`);
          assert.ok(got.count <= 1002, `${got.count} problems`);
          assert.match(got.match ?? JSON.stringify(got.first), attack.answer);
          assert.notEqual(code, 0);
          assert.ok(!said.includes("    at "), said.slice(0, 2000));
          assert.ok(said.split("\n").length < 1100, `${said.split("\n").length} lines`);
          assert.ok(told, said.slice(0, 2000));
        } finally {
          await store.drop();
          await Deno.remove(dir, { recursive: true });
        }
      },
    });
  }
}

Deno.test("row check attacks: the tally", () => {
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});

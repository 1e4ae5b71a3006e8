/**
 * The attacks of `events_size_attacks_test.ts` on an indexed store's rows, which `prove show`, the viewer and
 * provtrace build read a run's events from (`eventsText`): a tampered row whose line is 100 MiB, and two million
 * rows of empty lines after a run's events. Each store read every row at once, a line of any size whole: now a
 * line past 16 MiB is refused by its size, before its text leaves the store, in one line naming it, and the rows
 * come one at a time, so that the reading of their lines stops after 1,000 that are not events, as a file's.
 * The sqlite store is read through node:sqlite, the postgres store from the server of `.ci/peers/postgres.sh`.
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

const tally = new Tally("rows events size attacks");
const MiB = 1024 * 1024;
const RUN = "run-20261202T000000Z-0000e0e0";

interface Store {
  uri: string;
  open: (runs: string) => Promise<{ eventsText(id: string): Promise<string | null> } & AsyncDisposable>;
  /** Runs one statement of tampering; `$1` is the run ID. */
  tamper: (sql: string) => Promise<void>;
  drop: () => Promise<void>;
}

/** The statements of each attack, in each store's SQL, and the answer they must get. */
const SHAPES: Record<string, { sqlite: string; postgres: string; answer: RegExp }> = {
  "a row whose line is 100 MiB": {
    sqlite: `UPDATE provevi_events SET line = '"' || hex(zeroblob(${
      50 * MiB
    })) || '"' WHERE run_id = ?1 AND seq = 2`,
    postgres: `UPDATE provevi_events SET line = '"' || repeat('0', ${
      100 * MiB
    }) || '"' WHERE run_id = $1 AND seq = 2`,
    answer: /^\S+ run \S+ line 3 holds more than 16777216 bytes, more than any line of it may$/,
  },
  "two million rows of empty lines after the events": {
    sqlite: `INSERT INTO provevi_events (run_id, seq, time, type, component, actor, confidence, line)
      WITH RECURSIVE k(i) AS (SELECT 1000 UNION ALL SELECT i + 1 FROM k WHERE i < 2000999)
      SELECT ?1, i, '', '', '', '', '', '' FROM k`,
    postgres: `INSERT INTO provevi_events (run_id, seq, time, type, component, actor, confidence, line)
      SELECT $1, i, '', '', '', '', '', '' FROM generate_series(1000, 2000999) AS i`,
    answer: /^events\.unreadable events\.jsonl has 1000 problems by line \d+: the rest of it is not read$/,
  },
};

function sqliteStore(dir: string): Promise<Store> {
  const path = join(dir, "evidence.db");
  return Promise.resolve({
    uri: `sqlite://${path}`,
    open: (runs) => Promise.resolve(new SqliteStore(path, { runs })),
    tamper: (sql) => {
      const db = new DatabaseSync(path);
      try {
        db.prepare(sql).run(RUN);
      } finally {
        db.close();
      }
      return Promise.resolve();
    },
    drop: () => Promise.resolve(),
  });
}

async function postgresStore(): Promise<Store> {
  const db = await freshDatabase();
  return {
    uri: db.uri,
    open: (runs) => PostgresStore.open(db.uri, { runs }),
    tamper: async (sql) => {
      const raw = postgres(db.uri, { max: 1, onnotice: () => {} });
      try {
        await raw.unsafe(sql, [RUN]);
      } finally {
        await raw.end();
      }
    },
    drop: db.drop,
  };
}

for (const kind of ["sqlite", "postgres"] as const) {
  for (const [shape, statements] of Object.entries(SHAPES)) {
    peerTest(kind === "postgres" ? "postgres" : null, {
      name: `a ${kind} store's run with ${shape}: its events are read in bounded memory, in one line`,
      fn: async () => {
        const dir = await Deno.makeTempDir({ prefix: "attack-rows-events-" });
        const store = kind === "sqlite" ? await sqliteStore(dir) : await postgresStore();
        try {
          const runs = join(dir, "runs");
          {
            await using writing = await store.open(runs);
            await writeRichRun(await (writing as unknown as SqliteStore).openRun(RUN));
          }
          await store.tamper(statements[kind]);
          // measured in a process of its own: this one's RSS counts what the files running beside it hold
          const { grew, ms, got: found } = await measuredInChild<string>(
            "./_rows_events_size_work.ts",
            "readEvents",
            store.uri,
            runs,
            RUN,
            statements.answer.source,
          );
          console.log(
            `${kind}, ${shape}: ${Math.round(grew / MiB)} MiB more memory, ${ms} ms: ${found.slice(0, 160)}`,
          );
          // prove show: one line on stderr, no stack
          const io = bufferIo();
          const code = await prove(["--store", store.uri, "--runs", runs, "show", RUN], io);
          const said = io.stderr.join("\n");
          tally.add(`${kind}: ${shape}`, {
            stopped: grew < 64 * MiB,
            recorded: statements.answer.test(found) && !found.includes("\n"),
          });
          assert.ok(grew < 64 * MiB, `the reading took ${Math.round(grew / MiB)} MiB`);
          assert.match(found, statements.answer);
          assert.notEqual(code, 0);
          assert.ok(!said.includes("    at "), said);
        } finally {
          await store.drop();
          await Deno.remove(dir, { recursive: true });
        }
      },
    });
  }
}

// The readers of a run folder's events.jsonl beside the record: the check of a store's rows against the folder,
// and the seal's columns of a row that missed its seal (`sealRowOfFolder`), read it whole.
Deno.test("the check of a sqlite store's rows, and the seal's columns of a row, read a sparse events.jsonl in bounded memory", async () => {
  const dir = await Deno.makeTempDir({ prefix: "attack-rows-events-" });
  try {
    const runs = join(dir, "runs");
    {
      await using store = new SqliteStore(join(dir, "evidence.db"), { runs });
      await writeRichRun(await store.openRun(RUN));
    }
    await Deno.truncate(join(runs, RUN, "evidence", "events.jsonl"), 512 * MiB - 4096);
    const work = "./_rows_events_size_work.ts";
    const check = await measuredInChild<string[]>(work, "checkRun", join(dir, "evidence.db"), runs, RUN);
    const found = check.got.find((f) => f.startsWith("rows.unreadable"));
    console.log(`the check of the rows: ${Math.round(check.grew / MiB)} MiB more memory: ${found}`);
    const seal = await measuredInChild<unknown>(work, "sealRow", runs, RUN);
    console.log(`the seal's columns: ${Math.round(seal.grew / MiB)} MiB more memory`);
    const said = /^rows\.unreadable \S+ cannot be read: \S+ line 4 holds more than 16777216 bytes/;
    tally.add("the check of a store's rows, a sparse events.jsonl", {
      stopped: check.grew < 64 * MiB,
      recorded: said.test(found ?? "") && !found!.includes("\n"),
    });
    tally.add("the seal's columns of a row, a sparse events.jsonl", {
      stopped: seal.grew < 64 * MiB,
      recorded: seal.got === null,
    });
    assert.ok(check.grew < 64 * MiB, `the check took ${Math.round(check.grew / MiB)} MiB`);
    assert.match(found ?? "", said);
    assert.ok(seal.grew < 64 * MiB, `the seal's columns took ${Math.round(seal.grew / MiB)} MiB`);
    assert.equal(seal.got, null);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("rows events size attacks: the tally", () => {
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});

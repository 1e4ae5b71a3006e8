/**
 * The completion of a run's rows from its folder (after a restart or a kill between the folder's seal and the
 * rows') must never launder a change: it fills rows only for a run whose row is unsealed, from the folder that
 * row records, when that folder's evidence verifies and the rows hold its lines from the start, unchanged and
 * without a hole. Each attack changes the rows or the folder of an unsealed run (or of a sealed one) and
 * reads the run as `prove verify --store` does; the check must still fail, and the rows stay as the attacker
 * left them.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { RunRecord } from "../../lib/provevi/evidence/record.ts";
import { PostgresStore } from "../../lib/provevi/postgres/postgres_store.ts";
import { findRun } from "../../lib/provevi/runs/find_run.ts";
import { verifyRun } from "../../lib/provevi/runs/verify_run.ts";
import { SqliteStore } from "../../lib/provevi/sqlite/sqlite_store.ts";
import { SAMPLE_RUN_ID, writeSampleRun } from "../provevi/_sample_run.ts";
import { eventsPath, rechain } from "../provevi/_tamper.ts";
import { freshDatabase, onDatabase } from "../provevi/postgres/_pg.ts";
import { copyFolder } from "../_files.ts";
import { Tally } from "./_tally.ts";
import { peerTest } from "../_peers.ts";

const tally = new Tally("row completion");

/** A store holding the sample run, and SQL of the attacker's own against its tables. */
interface Subject {
  store: SqliteStore | PostgresStore;
  folder: string;
  dir: string;
  exec(sql: string): Promise<void>;
  unsealed(): Promise<boolean>;
  close(): Promise<void>;
}

async function sqliteSubject(): Promise<Subject> {
  const dir = await Deno.makeTempDir({ prefix: "attack-complete-sqlite-" });
  const store = new SqliteStore(join(dir, "evidence.db"), { runs: dir });
  await writeSampleRun(await store.openRun(SAMPLE_RUN_ID));
  return {
    store,
    dir,
    folder: join(dir, SAMPLE_RUN_ID),
    exec: (sql) => Promise.resolve(store.db.exec(sql)),
    unsealed: () =>
      Promise.resolve(
        (store.db.prepare("SELECT manifest_sha256 FROM provevi_runs").get() as { manifest_sha256: null })
          .manifest_sha256 === null,
      ),
    close: async () => {
      await store.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

async function postgresSubject(): Promise<Subject> {
  const dir = await Deno.makeTempDir({ prefix: "attack-complete-pg-" });
  const db = await freshDatabase();
  const store = await PostgresStore.open(db.uri, { runs: dir });
  await writeSampleRun(await store.openRun(SAMPLE_RUN_ID));
  return {
    store,
    dir,
    folder: join(dir, SAMPLE_RUN_ID),
    exec: (sql) => onDatabase(db.uri, async (s) => void await s.unsafe(sql)),
    unsealed: async () => (await store.run(SAMPLE_RUN_ID))?.manifest_sha256 === null,
    close: async () => {
      await store.close();
      await db.drop();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** The rows lose their seal, as a writer stopped before recording it leaves them. */
const UNSEAL = "UPDATE provevi_runs SET last_hash = NULL, manifest_sha256 = NULL, sealed_at = NULL;";
/** The rows lose their last two events, as a server away for the end of a run leaves them. */
const CUT = "DELETE FROM provevi_events WHERE seq >= 7; DELETE FROM provevi_event_refs WHERE seq >= 7;";

/** Each attack: what it does, and whether the folder to compare is a copy the caller gives. */
const ATTACKS: { name: string; act: (s: Subject) => Promise<void>; copy?: boolean; sealed?: boolean }[] = [
  {
    name: "a hole: a middle event row deleted from an unsealed run",
    act: (s) => s.exec(`${UNSEAL} DELETE FROM provevi_events WHERE seq = 3;`),
  },
  {
    name: "a row's line changed in an unsealed run",
    act: (s) => s.exec(`${UNSEAL} ${CUT} UPDATE provevi_events SET line = line || ' ' WHERE seq = 1;`),
  },
  {
    name: "the folder forged over a line the rows hold, re-chained and its manifest remade",
    act: async (s) => {
      await s.exec(`${UNSEAL} ${CUT}`);
      await rechain(s.folder, (events) => events.map((e, i) => i === 2 ? { ...e, component: "Forger" } : e));
    },
  },
  {
    name: "a line added to the folder after its seal",
    act: async (s) => {
      await s.exec(`${UNSEAL} ${CUT}`);
      const lines = (await Deno.readTextFile(eventsPath(s.folder))).trimEnd().split("\n");
      await Deno.writeTextFile(eventsPath(s.folder), [...lines, lines[0]].join("\n") + "\n");
    },
  },
  {
    name: "a payload row's size changed in an unsealed run",
    act: (s) => s.exec(`${UNSEAL} ${CUT} UPDATE provevi_payloads SET size = size + 1;`),
  },
  {
    name: "a payload row the folder lacks, in an unsealed run",
    act: (s) =>
      s.exec(
        `${UNSEAL} INSERT INTO provevi_payloads (run_id, sha256, size, place)
         VALUES ('${SAMPLE_RUN_ID}', '${"a".repeat(64)}', 1, 'evidence/payloads/${"a".repeat(64)}');`,
      ),
  },
  {
    name: "rows deleted from a sealed run",
    act: (s) => s.exec(CUT),
    sealed: true,
  },
  {
    name: "an unsealed run compared with a copy of its folder that the caller gives",
    act: (s) => s.exec(`${UNSEAL} ${CUT}`),
    copy: true,
  },
];

async function attack(label: string, open: () => Promise<Subject>): Promise<string[]> {
  const failures: string[] = [];
  for (const a of ATTACKS) {
    const what = `${a.name} (${label})`;
    const s = await open();
    try {
      await a.act(s);
      // The copy is made before the run is read, so that no read completes the rows from the original.
      let record: RunRecord | null = a.copy ? null : await s.store.readRun(SAMPLE_RUN_ID);
      if (a.copy) {
        const copy = join(s.dir, "copy", SAMPLE_RUN_ID);
        await Deno.mkdir(join(s.dir, "copy"));
        await copyFolder(s.folder, copy);
        record = await findRun(copy);
      }
      const check = await verifyRun(record!, { store: s.store });
      const untouched = a.sealed === true ? true : await s.unsealed();
      if (check.ok) failures.push(`${what}: the run verifies`);
      if (!untouched) failures.push(`${what}: the rows were completed`);
      tally.add(what, { stopped: !check.ok, recorded: untouched });
    } finally {
      await s.close();
    }
  }
  return failures;
}

Deno.test("the sqlite store completes no rows from a folder that disagrees with them, nor from a copy", async () => {
  assert.deepEqual(await attack("sqlite", sqliteSubject), []);
});

peerTest("postgres", {
  name: "the postgres store completes no rows from a folder that disagrees with them, nor from a copy",
  fn: async () => {
    assert.deepEqual(await attack("postgres", postgresSubject), []);
  },
});

Deno.test("the row completion counts", () => {
  console.log(tally.line({ stopped: "fail the check", recorded: "rows left as they were" }));
  assert.equal(tally.missed.length, 0, tally.line());
});

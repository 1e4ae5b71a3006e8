import assert from "node:assert/strict";
import { join } from "node:path";
import type { EvidenceStore } from "../../../lib/provevi/store/store.ts";
import type { StoreQuestions } from "../../../lib/provevi/store/store_questions.ts";
import { ProveviError } from "../../../lib/provevi/evidence/errors.ts";
import { PostgresStore } from "../../../lib/provevi/postgres/postgres_store.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { SqliteStore } from "../../../lib/provevi/sqlite/sqlite_store.ts";
import { SCHEMA_VERSION, schemaVersion } from "../../../lib/provevi/sqlite/sqlite_schema.ts";
import { writeRichRun } from "../_rich_run.ts";
import { POSTGRES_BACK_TO_6, SQLITE_BACK_TO_6 } from "../_schema_steps.ts";
import { freshDatabase, onDatabase } from "../postgres/_pg.ts";
import { peerTest } from "../../_peers.ts";

const EXP = "experiment://acme/risk/dev/credit/q";
const OTHER = "experiment://acme/risk/dev/retail/q";
const PIN1 = `${EXP}?at=commit:${"1".repeat(40)}`;
const PIN2 = `${EXP}?at=commit:${"2".repeat(40)}`;

type Store = EvidenceStore & StoreQuestions;

/**
 * The problems of a run but the one these runs have by design: their experiment is named, and no catalog is at
 * hand to read it (`catalog.missing`). The store's check of its rows is among them.
 */
async function rowProblems(store: EvidenceStore, runId: string): Promise<string[]> {
  const check = await verifyRun(await store.readRun(runId), { store });
  return check.problems.filter((p) => p.code !== "catalog.missing").map((p) => p.message);
}

const STORES: [
  string,
  (dir: string) => Promise<{ store: Store; drop?: () => Promise<void>; uri?: string }>,
][] = [
  ["sqlite", (dir) => Promise.resolve({ store: new SqliteStore(join(dir, "e.db"), { runs: dir }) })],
  ["postgres", async (dir) => {
    const db = await freshDatabase();
    return { store: await PostgresStore.open(db.uri, { runs: dir }), drop: db.drop, uri: db.uri };
  }],
];

async function writeRuns(store: EvidenceStore): Promise<void> {
  await writeRichRun(await store.openRun("run-1"), { experiment: EXP, experimentPin: PIN1 });
  await writeRichRun(await store.openRun("run-2"), { experiment: EXP, experimentPin: PIN2 });
  await writeRichRun(await store.openRun("run-3"), { experiment: OTHER });
}

for (const [kind, open] of STORES) {
  const peer = kind === "postgres" ? "postgres" : null;
  const withStore = async (fn: (store: Store) => Promise<void>) => {
    const dir = await Deno.makeTempDir({ prefix: "exp-assess-" });
    const opened = await open(dir);
    try {
      await writeRuns(opened.store);
      await fn(opened.store);
    } finally {
      await opened.store.close();
      await opened.drop?.();
      await Deno.remove(dir, { recursive: true });
    }
  };

  peerTest(peer, {
    name:
      `${kind}: an experiment, or one version of it, is assessed by its URI or its name, and its runs are not`,
    fn: () =>
      withStore(async (store) => {
        const whole = await store.assess({ experiment: "credit/q" }, "approved", true, { source: "ada" });
        assert.deepEqual([whole.run_id, whole.seq, whole.span_id, whole.experiment], [null, null, null, EXP]);
        const version = await store.assess(PIN1, "score", 0.7, { rationale: "the first version" });
        assert.equal(version.experiment, PIN1);
        await store.assess({ experiment: OTHER }, "approved", false);
        await store.assess("run-1", "correct", true);
        const names = (list: { name: string; experiment: string | null }[]) =>
          list.map((a) => `${a.name} ${a.experiment}`);
        assert.deepEqual(names(await store.experimentAssessments(EXP)), [`approved ${EXP}`, `score ${PIN1}`]);
        assert.deepEqual(names(await store.experimentAssessments("credit/q")), [
          `approved ${EXP}`,
          `score ${PIN1}`,
        ]);
        // A version's: the experiment's as a whole, and that version's, not another's.
        assert.deepEqual(names(await store.experimentAssessments(PIN1)), [
          `approved ${EXP}`,
          `score ${PIN1}`,
        ]);
        assert.deepEqual(names(await store.experimentAssessments(PIN2)), [`approved ${EXP}`]);
        assert.deepEqual(names(await store.experimentAssessments("retail/q")), [`approved ${OTHER}`]);
        assert.deepEqual(await store.experimentAssessments("nothing"), []);
        await assert.rejects(() => store.experimentAssessments("q"), /names 2 experiments/);
        // A run's assessments are its own.
        assert.deepEqual(names(await store.assessments("run-1")), ["correct null"]);
        assert.deepEqual(await rowProblems(store, "run-1"), []);
      }),
  });

  peerTest(peer, {
    name:
      `${kind}: an assessment of an experiment no run named, of a version no run used, or of a name two share is refused`,
    fn: () =>
      withStore(async (store) => {
        await assert.rejects(
          () => store.assess({ experiment: "nothing" }, "x", 1),
          (e: Error) =>
            e instanceof ProveviError && /no run in store .* named the experiment nothing/.test(e.message),
        );
        await assert.rejects(
          () => store.assess({ experiment: "q" }, "x", 1),
          /names 2 experiments .* pass the whole URI/,
        );
        await assert.rejects(
          () => store.assess(`${EXP}?at=commit:${"9".repeat(40)}`, "x", 1),
          /no run in store .* used the version/,
        );
        await assert.rejects(() => store.assess(`${EXP}?at=branch:main`, "x", 1), /a branch moves/);
        await assert.rejects(() => store.assess("experiment://a b", "x", 1), /is not an experiment/);
        await assert.rejects(
          () => store.assess({ experiment: "data://acme/x/y/z" }, "x", 1),
          /starts with experiment:\/\//,
        );
        assert.deepEqual(await store.experimentAssessments(EXP), []);
      }),
  });
}

Deno.test("sqlite: a store of version 6 is upgraded to 7 when opened to write, its run assessments kept, and takes an experiment's", async () => {
  const dir = await Deno.makeTempDir({ prefix: "exp-assess-" });
  try {
    const path = join(dir, "e.db");
    {
      await using store = new SqliteStore(path, { runs: dir });
      await writeRuns(store);
      await store.assess("run-1#1", "score", 0.5);
      store.db.exec(SQLITE_BACK_TO_6);
      assert.equal(schemaVersion(store.db), 6);
    }
    await using store = new SqliteStore(path, { runs: dir });
    assert.equal(schemaVersion(store.db), SCHEMA_VERSION);
    const [kept] = await store.assessments("run-1");
    assert.deepEqual([kept!.id, kept!.seq, kept!.name, kept!.experiment], [1, 1, "score", null]);
    assert.equal((await store.assess({ experiment: EXP }, "approved", true)).id, 2);
    assert.deepEqual(await rowProblems(store, "run-1"), []);
    // One target or the other, never both or neither.
    assert.throws(() =>
      store.db.exec(`INSERT INTO provevi_assessments (run_id, experiment, name, value, created_at)
        VALUES ('run-1', '${EXP}', 'x', '1', 't')`)
    );
    assert.throws(() =>
      store.db.exec(`INSERT INTO provevi_assessments (name, value, created_at) VALUES ('x', '1', 't')`)
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

peerTest("postgres", {
  name: "postgres: a store of version 6 is upgraded to 7 when opened to write, its run assessments kept",
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "exp-assess-" });
    const db = await freshDatabase();
    try {
      {
        await using store = await PostgresStore.open(db.uri, { runs: dir });
        await writeRuns(store);
        await store.assess("run-1#1", "score", 0.5);
      }
      await onDatabase(db.uri, (sql) => sql.unsafe(POSTGRES_BACK_TO_6));
      await using store = await PostgresStore.open(db.uri, { runs: dir });
      const [kept] = await store.assessments("run-1");
      assert.deepEqual([kept!.seq, kept!.name, kept!.experiment], [1, "score", null]);
      await store.assess({ experiment: EXP }, "approved", true);
      assert.equal((await store.experimentAssessments(EXP)).length, 1);
      assert.deepEqual(await rowProblems(store, "run-1"), []);
      await assert.rejects(() =>
        onDatabase(
          db.uri,
          (sql) =>
            sql.unsafe(`INSERT INTO provevi_assessments (run_id, experiment, name, value, created_at)
            VALUES ('run-1', '${EXP}', 'x', '1', 't')`),
        )
      );
    } finally {
      await db.drop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

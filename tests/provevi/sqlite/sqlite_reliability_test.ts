import assert from "node:assert/strict";
import { join } from "node:path";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { SqliteStore } from "../../../lib/provevi/sqlite/sqlite_store.ts";
import { assertCutRun, killWriter, seeded, spawnWriter, writeTogether } from "../_writers.ts";

const WRITER = new URL("./_sqlite_writer.ts", import.meta.url).pathname;
const FLAGS = ["--allow-read", "--allow-write", "--allow-env"];

Deno.test("a writer killed at random points leaves a file that opens, sealed runs that verify, and a cut run that says how far it got", async () => {
  const dir = await Deno.makeTempDir({ prefix: "provevi-kill-" });
  const random = seeded(20261129);
  const db = join(dir, "evidence.db");
  try {
    for (let round = 0; round < 5; round++) {
      const child = spawnWriter(WRITER, FLAGS, [db, dir, `run-k${round}`, 10_000, 3]);
      const { opened, sealed } = await killWriter(child, 20 + Math.floor(random() * 400));

      await using store = new SqliteStore(db, { runs: dir });
      for (const id of sealed) {
        const check = await verifyRun(await store.readRun(id), { store });
        assert.deepEqual(check.problems.map((p) => p.message), [], id);
      }
      const cut = opened.filter((id) => !sealed.includes(id));
      assert.ok(cut.length <= 1);
      for (const id of cut) await assertCutRun(store, dir, id);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("four processes let go at once write 50 runs each into one file: every event is there and every run verifies", async () => {
  const dir = await Deno.makeTempDir({ prefix: "provevi-many-" });
  const db = join(dir, "evidence.db");
  try {
    new SqliteStore(db, { runs: dir }).close();
    const each = [0, 1, 2, 3].map((p) =>
      [db, dir, `run-p${p}`, 50, 0] as [string, string, string, number, number]
    );
    for (const o of await writeTogether(WRITER, FLAGS, each, () => {})) assert.equal(o.code, 0, o.stderr);
    await using store = new SqliteStore(db, { runs: dir, create: false });
    const ids = await store.runIds();
    assert.equal(ids.length, 200);
    const rows = store.db.prepare("SELECT count(*) AS n FROM provevi_events").get() as { n: number };
    let lines = 0;
    for (const id of ids) {
      lines +=
        (await Deno.readTextFile(join(dir, id, "evidence", "events.jsonl"))).split("\n").filter(Boolean)
          .length;
      const check = await verifyRun(await store.readRun(id), { store });
      assert.deepEqual(check.problems.map((p) => p.message), [], id);
    }
    assert.equal(rows.n, lines);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("two workers and the main thread write one file at once", async () => {
  const dir = await Deno.makeTempDir({ prefix: "provevi-workers-" });
  const db = join(dir, "evidence.db");
  try {
    new SqliteStore(db, { runs: dir }).close();
    const results = [0, 1].map((w) => {
      const worker = new Worker(new URL("./_sqlite_writer.ts", import.meta.url).href, { type: "module" });
      return new Promise<{ sealed: string[]; error?: string }>((resolve) => {
        worker.onmessage = (e) => {
          worker.terminate();
          resolve(e.data);
        };
        worker.postMessage({ db, runs: dir, prefix: `run-w${w}`, count: 25, notes: 2 });
      });
    });
    const { writeRuns } = await import("./_sqlite_writer.ts");
    await writeRuns({ db, runs: dir, prefix: "run-main", count: 25, notes: 2 }, () => {});
    for (const r of await Promise.all(results)) {
      assert.equal(r.error, undefined);
      assert.equal(r.sealed.length, 25);
    }
    await using store = new SqliteStore(db, { runs: dir, create: false });
    const ids = await store.runIds();
    assert.equal(ids.length, 75);
    for (const id of ids) {
      assert.deepEqual(
        (await verifyRun(await store.readRun(id), { store })).problems.map((p) => p.message),
        [],
        id,
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

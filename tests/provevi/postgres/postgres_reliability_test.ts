import assert from "node:assert/strict";
import { join } from "node:path";
import { EvidenceRecorder } from "../../../lib/provrun/run/recorder.ts";
import { EventChain } from "../../../lib/provevi/evidence/chain.ts";
import { verify } from "../../../lib/provevi/evidence/verify.ts";
import { PostgresStore } from "../../../lib/provevi/postgres/postgres_store.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { freshDatabase, onDatabase, PG_RESTART } from "./_pg.ts";
import { assertCutRun, killWriter, lineCount, spawnWriter } from "../_writers.ts";
import { writeRichRun } from "../_rich_run.ts";
import { bufferIo } from "../../../cli/_io.ts";
import { prove } from "../../../cli/prove.ts";
import { peerTest } from "../../_peers.ts";

const WRITER = new URL("./_pg_writer.ts", import.meta.url).pathname;
const FLAGS = ["--allow-read", "--allow-write", "--allow-env", "--allow-net"];

const pgTest = (name: string, fn: () => Promise<void>) => peerTest("postgres", { name, fn });

pgTest(
  "four processes write 200 runs each into one postgres database: every event is there and every run verifies",
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "provevi-pg-many-" });
    const db = await freshDatabase();
    try {
      await (await PostgresStore.open(db.uri, { runs: dir })).close();
      const children = [0, 1, 2, 3].map((p) =>
        spawnWriter(WRITER, FLAGS, [db.uri, dir, `run-p${p}`, 200, 0])
      );
      const outputs = await Promise.all(children.map((c) => c.output()));
      for (const o of outputs) assert.equal(o.code, 0, new TextDecoder().decode(o.stderr));
      await using store = await PostgresStore.open(db.uri, { runs: dir, create: false, max: 8 });
      const ids = await store.runIds();
      assert.equal(ids.length, 800);
      const [rows] = await store.sql`SELECT count(*)::int AS n FROM provevi_events`;
      let lines = 0;
      // Eight checks at a time: each is a few round trips to the server.
      const queue = [...ids];
      await Promise.all(Array.from({ length: 8 }, async () => {
        for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
          const n = await lineCount(join(dir, id, "evidence", "events.jsonl")); // read, then add: no lost update
          lines += n;
          const check = await verifyRun(await store.readRun(id), { store });
          assert.deepEqual(check.problems.map((p) => p.message), [], id);
        }
      }));
      assert.equal(rows!.n, lines);
    } finally {
      await db.drop();
      await Deno.remove(dir, { recursive: true });
    }
  },
);

pgTest("a postgres writer killed mid-run leaves its run cut and nothing else damaged", async () => {
  const dir = await Deno.makeTempDir({ prefix: "provevi-pg-kill-" });
  const db = await freshDatabase();
  try {
    for (const [round, wait] of [[0, 50], [1, 300], [2, 700]] as const) {
      const child = spawnWriter(WRITER, FLAGS, [db.uri, dir, `run-k${round}`, 10_000, 3]);
      const { opened, sealed } = await killWriter(child, wait);

      await using store = await PostgresStore.open(db.uri, { runs: dir });
      for (const id of sealed) {
        assert.deepEqual(
          (await verifyRun(await store.readRun(id), { store })).problems.map((p) => p.message),
          [],
          id,
        );
      }
      const cut = opened.filter((id) => !sealed.includes(id));
      assert.ok(cut.length <= 1);
      for (const id of cut) await assertCutRun(store, dir, id);
      // Another writer carries on in the same database.
      await using after = await PostgresStore.open(db.uri, { runs: dir });
      const writer = await after.openRun(`run-after-${round}`);
      const chain = new EventChain(writer.runId);
      const next = chain.next({ type: "run_created", component: "RunContext", actor: "me" });
      await writer.append(next.line, next.event);
      await writer.seal();
      assert.deepEqual(
        (await verifyRun(await after.readRun(writer.runId), { store: after })).problems.map((p) => p.message),
        [],
      );
    }
  } finally {
    await db.drop();
    await Deno.remove(dir, { recursive: true });
  }
});

async function pgCtl(action: "stop" | "start"): Promise<void> {
  const out = await new Deno.Command(PG_RESTART!.ctl, {
    args: action === "stop" ? ["stop", "-m", "fast"] : ["start"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
}

/** Writes a run through the recorder with the server stopped and started again between two events. */
async function runAcrossRestart(mode: "strict" | "lenient") {
  const dir = await Deno.makeTempDir({ prefix: "provevi-pg-restart-" });
  const db = await freshDatabase(PG_RESTART!.url);
  const store = await PostgresStore.open(db.uri, { runs: dir });
  const writer = await store.openRun(`run-restart-${mode}`);
  const recorder = new EvidenceRecorder(writer, { actor: "ada", mode });
  await recorder.record({ type: "run_created", component: "RunContext", data: { org: "acme", mode } });
  await recorder.record({ type: "note_added", component: "test", data: { n: 1 } });
  await pgCtl("stop");
  let failure: unknown = null;
  try {
    await recorder.record({ type: "note_added", component: "test", data: { n: 2 } });
  } catch (error) {
    failure = error;
  } finally {
    await pgCtl("start");
  }
  let after: unknown = null;
  try {
    await recorder.record({ type: "run_completed", component: "RunContext", data: { status: "completed" } });
  } catch (error) {
    after = error;
  }
  const manifest = await recorder.seal().catch((e) => e);
  return { dir, db, store, writer, failure, after, manifest };
}

peerTest("postgres-restart", {
  name: "postgres restarted mid-run, lenient: the lost event is counted in the manifest and the run verifies",
  fn: async () => {
    const r = await runAcrossRestart("lenient");
    try {
      assert.equal(r.failure, null);
      assert.equal(r.after, null);
      assert.equal(r.manifest.lost.length, 1);
      assert.equal(r.manifest.lost[0].type, "note_added");
      assert.match(r.manifest.lost[0].error, /cannot write event 2 of run "run-restart-lenient"/);
      assert.equal(r.manifest.events, 3);
      assert.equal(r.manifest.status, "completed");
      const check = await verifyRun(await r.store.readRun(r.writer.runId), { store: r.store });
      assert.deepEqual(check.problems.map((p) => p.message), []);
    } finally {
      await r.store.close();
      await r.db.drop();
      await Deno.remove(r.dir, { recursive: true });
    }
  },
});

peerTest("postgres-restart", {
  name:
    "postgres restarted mid-run, strict: the run fails sealed, its folder whole and its rows as far as it got",
  fn: async () => {
    const r = await runAcrossRestart("strict");
    try {
      assert.ok(r.failure instanceof Error && r.failure.name === "EvidenceError", String(r.failure));
      assert.match((r.failure as Error).message, /connection to the server was lost|cannot write event 2/);
      assert.ok(r.after instanceof Error, "a strict run takes no event after a lost one");
      assert.equal(r.manifest.status, "incomplete");
      assert.equal(r.manifest.events, 2);
      const record = await r.store.readRun(r.writer.runId);
      assert.deepEqual((await verify(record)).problems.map((p) => p.message), []);
      assert.deepEqual((await verifyRun(record, { store: r.store })).problems.map((p) => p.message), []);
      const [rows] = await onDatabase(
        r.db.uri,
        (sql) => sql`SELECT count(*)::int AS n FROM provevi_events WHERE run_id = ${r.writer.runId}`,
      );
      assert.equal(rows!.n, 2);
      assert.equal((await r.store.run(r.writer.runId))?.status, "incomplete");
    } finally {
      await r.store.close();
      await r.db.drop();
      await Deno.remove(r.dir, { recursive: true });
    }
  },
});

pgTest(
  "two, and sixteen, first writers at once on an empty postgres database all make it a store and write their runs",
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "provevi-pg-first-" });
    try {
      // Each round a new, empty database: the writers race to make its tables.
      for (const [round, writers] of [[0, 2], [1, 2], [2, 2], [3, 16], [4, 16]] as const) {
        const db = await freshDatabase();
        try {
          const opened = await Promise.allSettled(
            Array.from({ length: writers }, async (_, i) => {
              await using store = await PostgresStore.open(db.uri, { runs: dir, max: 2 });
              const writer = await store.openRun(`run-first-${round}-${i}`);
              await writeRichRun(writer, { notes: 1 });
              return (await verifyRun(await store.readRun(writer.runId), { store })).problems;
            }),
          );
          const failed = opened.flatMap((o) => o.status === "rejected" ? [String(o.reason)] : []);
          assert.deepEqual(failed, [], `round ${round}, ${writers} writers`);
          for (const o of opened) {
            assert.deepEqual((o as PromiseFulfilledResult<{ message: string }[]>).value, []);
          }
          await using store = await PostgresStore.open(db.uri, { runs: dir, create: false });
          assert.equal((await store.runIds()).length, writers);
        } finally {
          await db.drop();
        }
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

/**
 * Writes a strict run through the recorder with the server stopped before one write (a payload, an event, or
 * the seal), started again before the seal or only after it; then checks the run as a user would, with
 * `prove verify --store`, once the server is back.
 */
async function restartAt(when: "payload" | "event" | "seal", back: "before the seal" | "after the seal") {
  const dir = await Deno.makeTempDir({ prefix: "provevi-pg-restart-at-" });
  const db = await freshDatabase(PG_RESTART!.url);
  const runId = `run-restart-${when}-${back.startsWith("before") ? "b" : "a"}`;
  try {
    await using store = await PostgresStore.open(db.uri, { runs: dir });
    const recorder = new EvidenceRecorder(await store.openRun(runId), { actor: "ada", mode: "strict" });
    await recorder.record({
      type: "run_created",
      component: "RunContext",
      data: { org: "acme", mode: "strict" },
    });
    const first = await recorder.payload("the first reply");
    await recorder.record({ type: "model_called", component: "test", payload: first, data: { n: 1 } });
    await pgCtl("stop");
    let failure: unknown = null;
    try {
      if (when === "payload") await recorder.payload("the second reply, during the restart");
      if (when === "event") await recorder.record({ type: "note_added", component: "test", data: { n: 2 } });
    } catch (error) {
      failure = error;
    }
    if (back === "before the seal") await pgCtl("start");
    const sealed = await recorder.seal().then((m) => m, (e: Error) => e);
    if (back === "after the seal") await pgCtl("start");
    return { dir, db, runId, failure, sealed };
  } catch (error) {
    await pgCtl("start").catch(() => {});
    await db.drop();
    await Deno.remove(dir, { recursive: true });
    throw error;
  }
}

peerTest("postgres-restart", {
  name:
    "postgres restarted during a payload's write, an event's write or the seal, strict: once the server is back, prove verify --store passes, the rows completed from the folder",
  fn: async () => {
    const cases = [
      ["payload", "before the seal"],
      ["payload", "after the seal"],
      ["event", "before the seal"],
      ["event", "after the seal"],
      ["seal", "after the seal"],
    ] as const;
    for (const [when, back] of cases) {
      const what = `a restart at the ${when}, back ${back}`;
      const r = await restartAt(when, back);
      try {
        if (when !== "seal") {
          assert.ok(r.failure instanceof Error && r.failure.name === "EvidenceError", what);
        }
        if (back === "after the seal") {
          assert.ok(r.sealed instanceof Error, `${what}: the seal says the rows were not recorded`);
          assert.match(r.sealed.message, /is sealed in its folder .*but its seal cannot be recorded/, what);
        }
        const io = bufferIo();
        const code = await prove(["--store", r.db.uri, "--runs", r.dir, "verify", r.runId], io);
        assert.equal(code, 0, `${what}: ${[...io.stdout, ...io.stderr].join("\n")}`);
        await using store = await PostgresStore.open(r.db.uri, { runs: r.dir, create: false });
        assert.deepEqual(await store.checkRun(r.runId), [], what);
        const manifest = JSON.parse(
          await Deno.readTextFile(join(r.dir, r.runId, "evidence", "manifest.json")),
        );
        const [rows] = await onDatabase(
          r.db.uri,
          (sql) =>
            sql`SELECT (SELECT count(*)::int FROM provevi_events WHERE run_id = ${r.runId}) AS events,
                       (SELECT count(*)::int FROM provevi_payloads WHERE run_id = ${r.runId}) AS payloads`,
        );
        assert.deepEqual(rows, { events: manifest.events, payloads: manifest.payloads.length }, what);
        assert.equal((await store.run(r.runId))?.status, "incomplete", what);
      } finally {
        await r.db.drop();
        await Deno.remove(r.dir, { recursive: true });
      }
    }
  },
});

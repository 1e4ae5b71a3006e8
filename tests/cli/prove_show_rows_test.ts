import assert from "node:assert/strict";
import { join } from "node:path";
import { bufferIo } from "../../cli/_io.ts";
import { prove } from "../../cli/prove.ts";
import { PostgresStore } from "../../lib/provevi/postgres/postgres_store.ts";
import { SqliteStore } from "../../lib/provevi/sqlite/sqlite_store.ts";
import { SAMPLE_RUN_ID, writeSampleRun } from "../provevi/_sample_run.ts";
import { freshDatabase } from "../provevi/postgres/_pg.ts";
import { peerTest } from "../_peers.ts";

async function show(store: string, runs: string, ...more: string[]) {
  const io = bufferIo();
  const code = await prove(["--store", store, "--runs", runs, "show", SAMPLE_RUN_ID, ...more], io);
  return { code, out: io.stdout, err: io.stderr };
}

/** Writes the sample run through the store, moves its folder away, and shows it. */
async function movedFolder(
  uri: string,
  open: (runs: string) => Promise<SqliteStore | PostgresStore>,
  dir: string,
) {
  const runs = join(dir, "runs");
  {
    await using store = await open(runs);
    await writeSampleRun(await store.openRun(SAMPLE_RUN_ID));
  }
  const lines = (await Deno.readTextFile(join(runs, SAMPLE_RUN_ID, "evidence", "events.jsonl"))).trimEnd()
    .split("\n");
  await Deno.rename(runs, join(dir, "moved"));
  const text = await show(uri, runs);
  assert.equal(text.code, 0, text.err.join("\n"));
  // Each event, then the run's totals.
  assert.equal(text.out.length, lines.length + 1, text.out.join("\n"));
  assert.match(text.out.at(-2)!, /run_completed/);
  assert.match(text.out.at(-1)!, /^totals: 1 model call,/);
  assert.equal(text.err.length, 1, text.err.join("\n"));
  assert.match(text.err[0]!, /^prove: warning: run \S+ does not verify \(.*events\.jsonl is missing/);
  const json = JSON.parse((await show(uri, runs, "--json")).out.join("\n"));
  assert.deepEqual(json.events.map((e: { seq: number }) => e.seq), lines.map((_, i) => i));
  assert.equal(json.verdict.ok, false);
}

Deno.test("prove show reads a sqlite store's rows: a run whose folder moved is shown whole, with the warning that it does not verify", async () => {
  const dir = await Deno.makeTempDir({ prefix: "prove-show-rows-" });
  try {
    const db = join(dir, "evidence.db");
    await movedFolder(`sqlite:///${db}`, (runs) => Promise.resolve(new SqliteStore(db, { runs })), dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

peerTest("postgres", {
  name:
    "prove show reads a postgres store's rows: a run whose folder is not on this machine is shown whole, with the warning that it does not verify",
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "prove-show-rows-pg-" });
    const db = await freshDatabase();
    try {
      await movedFolder(db.uri, (runs) => PostgresStore.open(db.uri, { runs }), dir);
    } finally {
      await db.drop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("prove show prints the rows' lines, not the folder's: a line changed in the folder is shown as the store holds it, and the run is told not to verify", async () => {
  const dir = await Deno.makeTempDir({ prefix: "prove-show-rows-" });
  try {
    const runs = join(dir, "runs"), db = join(dir, "evidence.db");
    {
      await using store = new SqliteStore(db, { runs });
      await writeSampleRun(await store.openRun(SAMPLE_RUN_ID));
    }
    const events = join(runs, SAMPLE_RUN_ID, "evidence", "events.jsonl");
    const text = await Deno.readTextFile(events);
    await Deno.writeTextFile(events, text.replace('"RunContext"', '"Forged"'));
    const r = await show(`sqlite:///${db}`, runs, "--json");
    assert.equal(r.code, 0);
    const json = JSON.parse(r.out.join("\n"));
    assert.equal(json.events[0].component, "RunContext");
    assert.equal(json.verdict.ok, false);
    // A run folder's path is shown from that folder.
    const io = bufferIo();
    assert.equal(
      await prove(["--store", `sqlite:///${db}`, "show", join(runs, SAMPLE_RUN_ID), "--json"], io),
      0,
    );
    assert.equal(JSON.parse(io.stdout.join("\n")).events[0].component, "Forged");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

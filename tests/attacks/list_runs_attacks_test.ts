/**
 * `prove runs` lists an indexed store's runs from its rows: a changed store's row may hold a text of any size
 * where the listing shows a name, a time or a folder (sqlite keeps a text of any size, in any column). Agent and
 * experiment columns of 300 MiB each took the listing to 2.5 GB and a RangeError with its stack. The listing
 * reads no text longer than a run's line (16 MiB): it refuses, in one line that names the run and says the store
 * was changed.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import postgres from "postgres";
import { bufferIo } from "../../cli/_io.ts";
import { prove } from "../../cli/prove.ts";
import { PostgresStore } from "../../lib/provevi/postgres/postgres_store.ts";
import { SqliteStore } from "../../lib/provevi/sqlite/sqlite_store.ts";
import { freshDatabase } from "../provevi/postgres/_pg.ts";
import { writeRichRun } from "../provevi/_rich_run.ts";
import { peerTest } from "../_peers.ts";

const MiB = 1024 * 1024;
const RUN = "run-20261203T000000Z-0000115c";

/** Each change of a run's rows, in each store's SQL (`$RUN` the run): a text far past any name. */
const CHANGES: { name: string; sqlite: string; postgres: string | null }[] = [
  {
    name: "the agent and the experiment, 100 MiB each",
    sqlite: `UPDATE provevi_runs SET agent = hex(zeroblob(${50 * MiB})), experiment = hex(zeroblob(${
      50 * MiB
    })) WHERE run_id = $RUN`,
    postgres: null, // postgres indexes both columns, and refuses such a text (an index row holds 8 KiB at most)
  },
  {
    name: "the folder, 20 MiB",
    sqlite: `UPDATE provevi_runs SET folder = hex(zeroblob(${10 * MiB})) WHERE run_id = $RUN`,
    postgres: `UPDATE provevi_runs SET folder = repeat('f', ${20 * MiB}) WHERE run_id = $RUN`,
  },
  {
    name: "the model of run_created's line, 20 MiB",
    sqlite: `UPDATE provevi_events SET line = json_set(line, '$.data.model', hex(zeroblob(${
      10 * MiB
    }))) WHERE run_id = $RUN AND seq = 0`,
    postgres: null, // a postgres line is the run's JSON text: the same change, in its own SQL, is below
  },
  {
    name: "the last event's seq, a text of 20 MiB (an integer column, in sqlite)",
    sqlite: `UPDATE provevi_events SET seq = 'x' || hex(zeroblob(${10 * MiB}))
      WHERE run_id = $RUN AND seq = (SELECT max(seq) FROM provevi_events WHERE run_id = $RUN)`,
    postgres: null, // a postgres integer column holds no text
  },
];

/** `prove runs` of the store, in this process: its exit code and its lines. */
async function listed(uri: string, runs: string): Promise<{ code: number; lines: string[] }> {
  const io = bufferIo();
  const code = await prove(["--store", uri, "--runs", runs, "runs"], io);
  return { code, lines: [...io.stdout, ...io.stderr] };
}

function assertRefused(got: { code: number; lines: string[] }, what: string): void {
  assert.equal(got.code, 1, `${what}: ${got.lines.join("\n").slice(0, 400)}`);
  const said = got.lines.join("\n");
  assert.equal(got.lines.length, 1, `${what}: ${said.slice(0, 400)}`);
  assert.match(
    said,
    new RegExp(
      `^prove: store \\S+: the rows of run "${RUN}" hold a text longer than 16777216 bytes where a listing shows a name, a time or a folder, longer than any line of a run: the store was changed; check the run with prove verify$`,
    ),
    what,
  );
}

Deno.test("a sqlite store's run whose rows hold a text far past any name: prove runs refuses in one line", async () => {
  for (const change of CHANGES) {
    const dir = await Deno.makeTempDir({ prefix: "attack-list-runs-" });
    try {
      const path = join(dir, "evidence.db");
      {
        await using store = new SqliteStore(path, { runs: dir });
        await writeRichRun(await store.openRun(RUN));
      }
      assert.equal((await listed(`sqlite:///${path}`, dir)).code, 0);
      {
        await using store = new SqliteStore(path, { runs: dir });
        store.db.exec(change.sqlite.replaceAll("$RUN", `'${RUN}'`));
      }
      assertRefused(await listed(`sqlite:///${path}`, dir), change.name);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  }
});

peerTest("postgres", {
  name: "a postgres store's run whose rows hold a text far past any name: prove runs refuses in one line",
  async fn() {
    const changes = [
      ...CHANGES.filter((c) => c.postgres !== null).map((c) => ({ name: c.name, sql: c.postgres! })),
      {
        name: "the model of run_created's line, 20 MiB",
        sql: `UPDATE provevi_events SET line = jsonb_set(line::jsonb, '{data,model}', to_jsonb(repeat('m', ${
          20 * MiB
        })))::text WHERE run_id = $RUN AND seq = 0`,
      },
    ];
    for (const change of changes) {
      const dir = await Deno.makeTempDir({ prefix: "attack-list-runs-" });
      const db = await freshDatabase();
      try {
        {
          const store = await PostgresStore.open(db.uri, { runs: dir });
          try {
            await writeRichRun(await store.openRun(RUN));
          } finally {
            await store.close();
          }
        }
        assert.equal((await listed(db.uri, dir)).code, 0);
        const sql = postgres(db.uri, { max: 1, onnotice: () => {} });
        try {
          await sql.unsafe(change.sql.replaceAll("$RUN", `'${RUN}'`));
        } finally {
          await sql.end();
        }
        assertRefused(await listed(db.uri, dir), change.name);
      } finally {
        await db.drop();
        await Deno.remove(dir, { recursive: true });
      }
    }
  },
});

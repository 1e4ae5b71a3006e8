/**
 * The work of question_rows_attacks_test.ts: the sample run in a sqlite store, whose rows the attack then
 * changes (a grant's or an input's line made 16 MiB, and the event given many refs, each a row of the view), and
 * the store's questions of one run (`access`, `inputs`), measured in a process of their own (`measuredInChild`).
 * @module
 */
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { SqliteStore } from "../../lib/provevi/sqlite/sqlite_store.ts";
import { PostgresStore } from "../../lib/provevi/postgres/postgres_store.ts";
import { sqlitePath } from "../../lib/provevi/store/store_uri.ts";
import { onDatabase } from "../provevi/postgres/_pg.ts";
import { SAMPLE_RUN_ID, writeSampleRun } from "../provevi/_sample_run.ts";

/** What the attack changes of the sample run's rows. */
export interface RowChange {
  /** The event: 2 is the grant, 5 the staged input. */
  seq: number;
  /** The field of its data made long (the view gives it on each row), and the line's length then. */
  field: string;
  bytes: number;
  /** How many refs the event then has, each a URI of `uriBytes`. */
  refs: number;
  uriBytes: number;
}

/**
 * Writes the sample run into a new store (sqlite: a file in `dir`; else the postgres database `store`), then
 * changes its rows as `change` says.
 *
 * @returns The store's URI.
 */
export async function tamperedStore(
  dir: string,
  store: "sqlite" | string,
  change: RowChange,
): Promise<string> {
  const runs = join(dir, "runs");
  const uri = store === "sqlite" ? `sqlite:///${join(dir, "evidence.db")}` : store;
  {
    await using opened = await openStore(uri, runs);
    await writeSampleRun(await opened.openRun(SAMPLE_RUN_ID));
  }
  const refs = Array.from({ length: change.refs }, (_, n) => {
    const uri = `data+table://acme/demo/dev/evals/${n}/`;
    return uri + "x".repeat(Math.max(0, change.uriBytes - uri.length));
  });
  if (store === "sqlite") {
    const db = new DatabaseSync(join(dir, "evidence.db"));
    try {
      const { line } = db.prepare("SELECT line FROM provevi_events WHERE run_id = ? AND seq = ?")
        .get(SAMPLE_RUN_ID, change.seq) as { line: string };
      db.prepare("UPDATE provevi_events SET line = ? WHERE run_id = ? AND seq = ?")
        .run(longer(line, change), SAMPLE_RUN_ID, change.seq);
      const add = db.prepare("INSERT OR REPLACE INTO provevi_event_refs VALUES (?, ?, ?, ?)");
      refs.forEach((ref, n) => add.run(SAMPLE_RUN_ID, change.seq, n, ref));
    } finally {
      db.close();
    }
  } else {
    await onDatabase(store, async (sql) => {
      const [{ line }] = await sql.unsafe("SELECT line FROM provevi_events WHERE run_id = $1 AND seq = $2", [
        SAMPLE_RUN_ID,
        change.seq,
      ]) as unknown as [{ line: string }];
      await sql.unsafe("UPDATE provevi_events SET line = $1 WHERE run_id = $2 AND seq = $3", [
        longer(line, change),
        SAMPLE_RUN_ID,
        change.seq,
      ]);
      for (const [n, ref] of refs.entries()) {
        await sql.unsafe(
          `INSERT INTO provevi_event_refs VALUES ($1, $2, $3, $4)
           ON CONFLICT (run_id, seq, n) DO UPDATE SET uri = EXCLUDED.uri`,
          [SAMPLE_RUN_ID, change.seq, n, ref],
        );
      }
    });
  }
  return uri;
}

/** The line with its data's field made long enough that the line is `change.bytes` long. */
function longer(line: string, change: RowChange): string {
  const event = JSON.parse(line);
  event.data[change.field] = "";
  event.data[change.field] = "x".repeat(Math.max(0, change.bytes - JSON.stringify(event).length));
  return JSON.stringify(event);
}

async function openStore(uri: string, runs: string): Promise<SqliteStore | PostgresStore> {
  return uri.startsWith("sqlite:///")
    ? new SqliteStore(sqlitePath(uri), { runs })
    : await PostgresStore.open(uri, { runs });
}

/**
 * Opens the store, unmeasured; then, measured, asks it one question of the sample run: how many rows it gave,
 * or the error it threw (its name and message).
 */
export async function askRun(uri: string, runs: string, question: "access" | "inputs") {
  const store = await openStore(uri, runs);
  return async () => {
    try {
      return { rows: (await store[question](SAMPLE_RUN_ID)).length };
    } catch (error) {
      return { threw: `${(error as Error).name}: ${(error as Error).message}`.slice(0, 500) };
    } finally {
      await store.close();
    }
  };
}

/**
 * Writes the sample run into a new store, then makes its JSON columns (the agent version's tools and limits,
 * each of the run's settings) nest 100,000 deep; gives what the store's questions of them gave.
 *
 * @returns For each question, `ok` or the error it threw (its name and message).
 */
export async function deepColumns(dir: string, store: "sqlite" | string): Promise<Record<string, string>> {
  const uri = await tamperedStore(dir, store, { seq: 2, field: "mode", bytes: 0, refs: 0, uriBytes: 0 });
  const deep = "[".repeat(100_000) + "]".repeat(100_000);
  const statements = [
    "UPDATE provevi_agent_versions SET tools = ?, limits = ?",
    "UPDATE provevi_run_params SET value = ?",
  ];
  if (store === "sqlite") {
    const db = new DatabaseSync(sqlitePath(uri));
    try {
      db.prepare(statements[0]!).run(deep, deep);
      db.prepare(statements[1]!).run(deep);
    } finally {
      db.close();
    }
  } else {
    await onDatabase(store, async (sql) => {
      await sql.unsafe("UPDATE provevi_agent_versions SET tools = $1, limits = $2", [deep, deep]);
      await sql.unsafe("UPDATE provevi_run_params SET value = $1", [deep]);
    });
  }
  await using opened = await openStore(uri, join(dir, "runs"));
  const said = async (work: () => Promise<unknown>) => {
    try {
      // as prove prints it: --json, which walks the value
      JSON.stringify(await work(), null, 2);
      return "ok";
    } catch (error) {
      return `${(error as Error).name}: ${(error as Error).message}`.slice(0, 300);
    }
  };
  return {
    agent: await said(() => opened.agent("revenue-question")),
    run: await said(() => opened.run(SAMPLE_RUN_ID)),
  };
}

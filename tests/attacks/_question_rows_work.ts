/**
 * The work of question_rows_attacks_test.ts: the sample run in a sqlite store, whose rows the attack then
 * changes (a grant's or an input's line made 16 MiB, and the event given many refs, each a row of the view), and
 * the store's questions of one run (`access`, `inputs`), measured in a process of their own (`measuredInChild`).
 * @module
 */
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { SqliteStore } from "../../lib/provevi/sqlite/sqlite_store.ts";
import { SAMPLE_RUN_ID, writeSampleRun } from "../provevi/_sample_run.ts";

/**
 * Writes the sample run into a new sqlite store in `dir`, then gives event `seq` (of `type`) a line of `bytes`
 * (its data padded) and `refs` refs, each a URI of `uriBytes`.
 *
 * @returns The store's file.
 */
export async function tamperedStore(
  dir: string,
  change: { seq: number; bytes: number; refs: number; uriBytes: number },
): Promise<string> {
  const path = join(dir, "evidence.db");
  {
    await using store = new SqliteStore(path, { runs: join(dir, "runs") });
    await writeSampleRun(await store.openRun(SAMPLE_RUN_ID));
  }
  const db = new DatabaseSync(path);
  try {
    const { line } = db.prepare("SELECT line FROM provevi_events WHERE run_id = ? AND seq = ?")
      .get(SAMPLE_RUN_ID, change.seq) as { line: string };
    const event = JSON.parse(line);
    event.data.pad = "";
    event.data.pad = "x".repeat(Math.max(0, change.bytes - JSON.stringify(event).length));
    db.prepare("UPDATE provevi_events SET line = ? WHERE run_id = ? AND seq = ?")
      .run(JSON.stringify(event), SAMPLE_RUN_ID, change.seq);
    const add = db.prepare("INSERT OR REPLACE INTO provevi_event_refs VALUES (?, ?, ?, ?)");
    for (let n = 0; n < change.refs; n++) {
      const uri = `data+table://acme/demo/dev/evals/${n}/`;
      add.run(SAMPLE_RUN_ID, change.seq, n, uri + "x".repeat(Math.max(0, change.uriBytes - uri.length)));
    }
  } finally {
    db.close();
  }
  return path;
}

/**
 * Opens the store, unmeasured; then, measured, asks it one question of the sample run: how many rows it gave,
 * or the error it threw (its name and message).
 */
export function askRun(path: string, runs: string, question: "access" | "inputs") {
  const store = new SqliteStore(path, { runs });
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

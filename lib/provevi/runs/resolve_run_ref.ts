/**
 * What a user may type for a run: `latest`, a whole run ID, or the start of one that no other run shares.
 * @module
 */
import { ProveviError, RunNotFound } from "../evidence/errors.ts";
import type { EvidenceStore } from "../store/store.ts";
import { SqliteStore } from "../sqlite/sqlite_store.ts";
import { parseWeighed } from "../evidence/json_depth.ts";
import { firstLine } from "./_run_lines.ts";
import { join } from "node:path";

/**
 * The run ID that `ref` names in `store`: `latest` is the newest run (run IDs begin with their time to the
 * second; of runs begun in one second, the one whose first event is the latest); a run ID the store holds is
 * itself; else the one run whose ID starts with `ref`. A path (with a `/`) is not resolved here:
 * {@linkcode findRun} takes it as a run folder.
 *
 * @param store The store to look in.
 * @param ref What the user typed.
 * @returns The run ID.
 * @throws RunNotFound when no run matches; ProveviError when the start names more than one run.
 * @example
 * ```ts
 * import { FileStore } from "../store/file_store.ts";
 * import { resolveRunRef } from "./resolve_run_ref.ts";
 * await using store = new FileStore({ runs: "fixtures/runs" });
 * await resolveRunRef(store, "latest"); // "run-20261129T120000Z-0badc0de"
 * await resolveRunRef(store, "run-20261031"); // the one run of that day
 * ```
 */
export async function resolveRunRef(store: EvidenceStore, ref: string): Promise<string> {
  if (store instanceof SqliteStore) {
    const db = store.db;
    if (ref === "latest") {
      const row = db.prepare("SELECT max(run_id) AS id FROM provevi_runs").get() as { id: string | null };
      if (row.id === null) throw new RunNotFound(`there is no latest run: store ${store.uri} holds no runs`);
      const second = row.id.match(SECOND)?.[0];
      if (second === undefined) return row.id;
      return (db.prepare(
        "SELECT run_id FROM provevi_runs WHERE run_id >= ? AND run_id < ? ORDER BY started_at DESC, run_id DESC LIMIT 1",
      ).get(second, `${second}\uffff`) as { run_id: string }).run_id;
    }
    if (db.prepare("SELECT 1 FROM provevi_runs WHERE run_id = ?").get(ref)) return ref;
    // run_id >= ref AND run_id < ref + U+FFFF: the primary key's range, not a LIKE that would scan.
    const found = (db.prepare(
      "SELECT run_id FROM provevi_runs WHERE run_id >= ? AND run_id < ? ORDER BY run_id LIMIT 6",
    ).all(ref, `${ref}\uffff`) as { run_id: string }[]).map((r) => r.run_id);
    return pick(ref, found, store);
  }
  const ids = await store.runIds();
  if (ref === "latest") {
    const last = ids[ids.length - 1];
    if (last === undefined) {
      throw new RunNotFound(`there is no latest run: the runs root ${store.runsRoot} holds no runs`);
    }
    return await newestOfItsSecond(store, ids, last);
  }
  if (ids.includes(ref)) return ref;
  return pick(ref, ids.filter((id) => id.startsWith(ref)), store);
}

/** The start of a run ID made by provr: the run's time to the second, then 8 random hex digits. */
const SECOND = /^run-\d{8}T\d{6}Z-/;

/**
 * The newest run: the last ID, unless other runs began in its second, whose random ends do not order them;
 * then the one whose first event is the latest (two runs in one second made `latest` the older one by chance).
 */
async function newestOfItsSecond(store: EvidenceStore, ids: string[], last: string): Promise<string> {
  const second = last.match(SECOND)?.[0];
  const same = second === undefined ? [] : ids.filter((id) => id.startsWith(second));
  if (same.length < 2) return last;
  let newest = last;
  let newestTime = "";
  for (const id of same) {
    const time = await startTime(store, id);
    if (time >= newestTime) [newest, newestTime] = [id, time];
  }
  return newest;
}

/**
 * The time of a run's first event, or "" when it cannot be read: of a run read from its folder, the first line
 * of its events.jsonl alone (up to 16 MiB, weighed before it is parsed), not the whole file.
 */
async function startTime(store: EvidenceStore, id: string): Promise<string> {
  try {
    const record = await store.readRun(id);
    let line: string | null;
    if (record.folder !== null && record.readsFolder) {
      line = await firstLine(join(record.folder, "evidence", "events.jsonl"));
    } else {
      const text = (await record.eventsText()) ?? "";
      const end = text.indexOf("\n");
      line = end < 0 ? text : text.slice(0, end);
    }
    const time = (parseWeighed(line ?? "") as { time?: unknown } | null)?.time;
    return typeof time === "string" ? time : "";
  } catch {
    return "";
  }
}

function pick(ref: string, found: string[], store: EvidenceStore): string {
  if (found.length === 1) return found[0]!;
  if (found.length === 0 || ref === "") return ref; // the store's own lookup says that there is no such run
  const shown = found.slice(0, 5).join(", ") + (found.length > 5 ? ", …" : "");
  throw new ProveviError(
    `"${ref}" starts more than one run in ${
      store.uri === "file" ? store.runsRoot : store.uri
    } (${shown}); write more of the run ID`,
  );
}

/**
 * What a user may type for a run: `latest`, a whole run ID, or the start of one that no other run shares.
 * @module
 */
import { ProveviError, RunNotFound } from "../evidence/errors.ts";
import type { EvidenceStore } from "../store/store.ts";
import { SqliteStore } from "../sqlite/sqlite_store.ts";

/**
 * The run ID that `ref` names in `store`: `latest` is the newest run (run IDs begin with their time); a run ID
 * the store holds is itself; else the one run whose ID starts with `ref`. A path (with a `/`) is not resolved
 * here: {@linkcode findRun} takes it as a run folder.
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
      return row.id;
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
    return last;
  }
  if (ids.includes(ref)) return ref;
  return pick(ref, ids.filter((id) => id.startsWith(ref)), store);
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

/**
 * The worker of {@linkcode RowsHasher} (`_rows_hasher.ts`): it opens the trace database read-only, begins a read
 * in the snapshot its caller holds the file still for, and for each run it is sent, reads the run's rows and
 * gives their digest (format 2), as the check on the main thread makes it (the same functions, on the same rows).
 *
 * Messages in: `{ op: "open", path }`, then `{ op: "runs", runs }` (run IDs, in the order they are checked), and
 * `{ op: "close" }` at the end. Out:
 * `{ op: "open", error? }`, then `{ op: "digests", results }`, a few runs at a time, each `{ run_id, digest }`
 * (null when the digest failed: the export then hashes the run itself).
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import { readRunRows, runDigestText } from "../db/run_digest.ts";

/** The format 2 digest of a run's rows in an open trace database. */
export function rowsDigest(db: DatabaseSync, runId: string): string {
  return runDigestText(readRunRows(db, runId));
}

/** How many runs' digests go in one answer. */
const ANSWER_EVERY = 8;

const scope = globalThis as unknown as {
  postMessage?: (message: unknown) => void;
  onmessage?: unknown;
  close?: () => void;
  WorkerGlobalScope?: unknown;
};
// In a worker (not when the main thread imports rowsDigest): open the file, then answer each run.
if (scope.WorkerGlobalScope !== undefined && typeof scope.postMessage === "function") {
  let db: DatabaseSync | null = null;
  scope.onmessage = (
    event: MessageEvent<{ op: "open"; path: string } | { op: "runs"; runs: string[] } | { op: "close" }>,
  ) => {
    const m = event.data;
    if (m.op === "close") {
      // Its read ends and its file is closed before the worker ends (a terminated worker's may stay open).
      db?.close();
      db = null;
      scope.close?.();
      return;
    }
    if (m.op === "open") {
      try {
        db = new DatabaseSync(m.path, { readOnly: true });
        db.exec("BEGIN");
        db.prepare("SELECT count(*) FROM trace_sources").get(); // the read that fixes the snapshot
        scope.postMessage!({ op: "open" });
      } catch (error) {
        scope.postMessage!({ op: "open", error: (error as Error).message });
      }
      return;
    }
    // The runs in the order the export checks them; answered a few at a time (each answer wakes the export).
    let results: { run_id: string; digest: string | null }[] = [];
    for (const runId of m.runs) {
      let digest: string | null;
      try {
        digest = rowsDigest(db!, runId);
      } catch {
        digest = null; // the export hashes it itself, and meets the same failure
      }
      results.push({ run_id: runId, digest });
      if (results.length === ANSWER_EVERY) {
        scope.postMessage!({ op: "digests", results });
        results = [];
      }
    }
    if (results.length) scope.postMessage!({ op: "digests", results });
  };
}

/**
 * The worker of {@linkcode RowsHasher} (`_rows_hasher.ts`): it opens the trace database read-only, begins a read
 * in the snapshot its caller holds the file still for, and for each run it is sent, reads the run's rows and
 * gives their digest (format 2), as the check on the main thread makes it (the same functions, on the same rows).
 *
 * Messages in: `{ op: "open", path }`, then `{ op: "runs", runs }` (run IDs, in the order they are checked), and
 * `{ op: "close" }` at the end. Out:
 * `{ op: "open", error? }`, then `{ op: "digests", results }`, a few runs at a time, each `{ run_id, digest, tables }`:
 * the digest and the line tables of the very rows it hashed (both null when the read failed: the export then
 * hashes the run itself), so that the export's lines are made of what was hashed, never of a second read.
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import { lineTablesOf, readRunRows, runDigestText, type TraceRunTables } from "../db/run_digest.ts";

/** A run's rows read once: their format 2 digest, and the tables an export's lines are made of, of that read. */
export interface HashedRows {
  digest: string;
  tables: TraceRunTables;
}

/** The format 2 digest of a run's rows in an open trace database, with the line tables of the rows it hashed. */
export function hashedRows(db: DatabaseSync, runId: string): HashedRows {
  const read = readRunRows(db, runId);
  return { digest: runDigestText(read), tables: lineTablesOf(read.tables) };
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
    let results: ({ run_id: string } & (HashedRows | { digest: null; tables: null }))[] = [];
    for (const runId of m.runs) {
      try {
        results.push({ run_id: runId, ...hashedRows(db!, runId) });
      } catch {
        results.push({ run_id: runId, digest: null, tables: null }); // the export hashes it, and meets the same failure
      }
      if (results.length === ANSWER_EVERY) {
        scope.postMessage!({ op: "digests", results });
        results = [];
      }
    }
    if (results.length) scope.postMessage!({ op: "digests", results });
  };
}

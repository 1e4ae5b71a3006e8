/**
 * Hashes runs' rows for their check on a worker, so that an export checks run k there while it reads the
 * evidence of run k + 1 and makes the calls of the runs before: the reads and the digest of a run's rows (half of
 * the check's time) no longer wait in line with the rest on one core.
 *
 * The worker reads the rows itself, from its own connection, in the very snapshot of the file that the export
 * reads: {@linkcode RowsHasher.open} holds the file's write lock while the export's connection and the worker's
 * each begin their read, so no write can come between them, and then lets it go (the two reads keep their
 * snapshot to their end). Should the lock not be had at once, or the worker fail to open, there is no worker,
 * and the export hashes on its own thread; should the worker fail later, each run it held is hashed here
 * instead, from the export's connection: a failure costs time, never a check.
 *
 * The lock lines up two reads of one file only: the worker opens the file by its name, after the export did, and
 * a file renamed over that name meanwhile (or bytes written over the file's, which no lock holds back) would be
 * what it hashed. So the worker answers each run with the line tables of the rows it hashed, the export's lines
 * are made of those, and the export compares the calls it read itself with them column by column.
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import { type HashedRows, hashedRows } from "./_check_worker.ts";

const WORKER_URL = new URL("./_check_worker.ts", import.meta.url);

/** How long the lock that lines up the two snapshots is waited for; past it, the export hashes alone. */
const LOCK_WAIT_MS = 2000;

/** A run's digest to come from the worker: null when the worker did not give it (the run is hashed here). */
interface Awaited {
  promise: Promise<HashedRows | null>;
  resolve: (hashed: HashedRows | null) => void;
}

/** A run's answer from the worker: its digest and line tables, or nulls when its read failed there. */
type Answer = { run_id: string; digest: string | null; tables: HashedRows["tables"] | null };

/**
 * A worker that gives the digest of runs' rows in the snapshot its caller reads; closed when disposed.
 *
 * @example
 * ```ts
 * import { RowsHasher } from "./_rows_hasher.ts";
 * // trace.db.exec("BEGIN"); using hasher = await RowsHasher.open(path, trace.db, () => firstRead());
 * // hasher?.queue(runIds); const digest = await hasher?.digest(runIds[0]);
 * ```
 */
export class RowsHasher implements Disposable {
  #worker: Worker | null;
  readonly #db: DatabaseSync;
  readonly #awaited = new Map<string, Awaited>();

  private constructor(worker: Worker, db: DatabaseSync) {
    this.#worker = worker;
    this.#db = db;
    worker.onmessage = (event: MessageEvent<{ results: Answer[] }>) => {
      for (const r of event.data.results) {
        this.#awaited.get(r.run_id)?.resolve(
          r.digest === null || r.tables === null ? null : { digest: r.digest, tables: r.tables },
        );
      }
    };
    worker.onerror = (event: ErrorEvent) => {
      event.preventDefault();
      this.#fail();
    };
    worker.onmessageerror = () => this.#fail();
  }

  /**
   * Starts the worker on the file, in the snapshot that `begin` fixes on `db` (the export's connection, inside
   * its transaction, not yet read).
   *
   * @param path The trace database's file.
   * @param db The export's connection to it, in a transaction that has read nothing yet.
   * @param begin Makes the export's first read, which fixes its snapshot.
   * @returns The hasher, or null when the snapshots cannot be lined up (then `begin` was still called).
   */
  static async open(path: string, db: DatabaseSync, begin: () => void): Promise<RowsHasher | null> {
    let lock: DatabaseSync | null = null;
    try {
      lock = new DatabaseSync(path);
      lock.exec(`PRAGMA busy_timeout = ${LOCK_WAIT_MS}`);
      lock.exec("BEGIN IMMEDIATE");
    } catch {
      lock?.close();
      begin();
      return null;
    }
    try {
      begin();
    } catch (error) {
      lock.exec("ROLLBACK");
      lock.close();
      throw error;
    }
    let worker: Worker | null = null;
    try {
      worker = new Worker(WORKER_URL, { type: "module" });
      const w = worker;
      const opened = await new Promise<string | null>((resolve) => {
        w.onmessage = (event: MessageEvent<{ op: string; error?: string }>) =>
          resolve(event.data.error ?? null);
        w.onerror = (event: ErrorEvent) => {
          event.preventDefault();
          resolve(event.message);
        };
        w.postMessage({ op: "open", path });
      });
      if (opened !== null) throw new Error(opened);
      return new RowsHasher(worker, db);
    } catch {
      worker?.terminate();
      return null;
    } finally {
      if (lock.isTransaction) lock.exec("ROLLBACK");
      lock.close();
    }
  }

  /** Gives the worker the runs to hash, in the order their digests will be asked for. */
  queue(runIds: readonly string[]): void {
    if (this.#worker === null) return;
    for (const id of runIds) {
      let resolve!: (hashed: HashedRows | null) => void;
      const promise = new Promise<HashedRows | null>((r) => resolve = r);
      this.#awaited.set(id, { promise, resolve });
    }
    this.#worker.postMessage({ op: "runs", runs: runIds });
  }

  /**
   * The format 2 digest of the run's rows, as `traceRunDigest` gives it on the export's connection, with the
   * tables an export's lines are made of, of the same read of the rows: lines made of them are made of what was
   * hashed, whatever the file holds by the time (a file renamed over the database's name after the export opened
   * it, or its bytes written over, is in neither or in both).
   */
  async digest(runId: string): Promise<HashedRows> {
    const awaited = this.#awaited.get(runId);
    const hashed = awaited === undefined ? null : await awaited.promise;
    this.#awaited.delete(runId);
    return hashed ?? hashedRows(this.#db, runId);
  }

  /** The worker failed: it is closed, and every run it has not answered is hashed here when asked for. */
  #fail(): void {
    this.#worker?.terminate();
    this.#worker = null;
    for (const awaited of this.#awaited.values()) awaited.resolve(null);
  }

  [Symbol.dispose](): void {
    // The worker closes its file and ends; a worker that failed was terminated already.
    this.#worker?.postMessage({ op: "close" });
    this.#worker = null;
    for (const awaited of this.#awaited.values()) awaited.resolve(null);
  }
}

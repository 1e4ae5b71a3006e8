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
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import { rowsDigest } from "./_check_worker.ts";

const WORKER_URL = new URL("./_check_worker.ts", import.meta.url);

/** How long the lock that lines up the two snapshots is waited for; past it, the export hashes alone. */
const LOCK_WAIT_MS = 2000;

/** A run's digest to come from the worker: null when the worker did not give it (the run is hashed here). */
interface Awaited {
  promise: Promise<string | null>;
  resolve: (digest: string | null) => void;
}

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
    worker.onmessage = (event: MessageEvent<{ results: { run_id: string; digest: string | null }[] }>) => {
      for (const r of event.data.results) this.#awaited.get(r.run_id)?.resolve(r.digest);
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
      let resolve!: (digest: string | null) => void;
      const promise = new Promise<string | null>((r) => resolve = r);
      this.#awaited.set(id, { promise, resolve });
    }
    this.#worker.postMessage({ op: "runs", runs: runIds });
  }

  /** The format 2 digest of the run's rows, as `traceRunDigest` gives it on the export's connection. */
  async digest(runId: string): Promise<string> {
    const awaited = this.#awaited.get(runId);
    const digest = awaited === undefined ? null : await awaited.promise;
    this.#awaited.delete(runId);
    return digest ?? rowsDigest(this.#db, runId);
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

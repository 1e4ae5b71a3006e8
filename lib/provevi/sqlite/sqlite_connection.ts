/**
 * Opening a provevi SQLite file: WAL checked on every connection, a one-minute busy timeout, the schema
 * brought up to date one step at a time (to write) or checked (to read), and busy errors retried.
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import { ProveviError } from "../evidence/errors.ts";
import { applyStep, SCHEMA_STEPS, SCHEMA_VERSION, schemaProblems, schemaVersion } from "./sqlite_schema.ts";

/** How long a writer waits for another one, in milliseconds (SQLite's busy handler). */
export const BUSY_TIMEOUT_MS = 60_000;

/**
 * True for SQLite's busy and locked errors. `node:sqlite` gives every error the code `ERR_SQLITE_ERROR`, so
 * the message tells them apart.
 *
 * @param error Any thrown value.
 */
export function isBusy(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return /database is locked|database table is locked|database schema is locked|SQLITE_BUSY|database is busy/i
    .test(message);
}

/**
 * Runs `fn`, and again while it fails with a busy error, waiting a little longer each time, until the busy
 * timeout has passed in all. Each attempt may itself wait inside SQLite, so without the overall limit a writer
 * blocked by another would wait 20 busy timeouts, not one.
 *
 * @param fn A synchronous step that leaves nothing behind when it throws.
 * @param options `attempts`, 20 by default; `timeoutMs`, the whole wait, {@linkcode BUSY_TIMEOUT_MS} by default.
 * @returns What `fn` returns.
 */
export function retryBusy<T>(fn: () => T, options: { attempts?: number; timeoutMs?: number } = {}): T {
  const attempts = options.attempts ?? 20;
  const until = performance.now() + (options.timeoutMs ?? BUSY_TIMEOUT_MS);
  for (let i = 1;; i++) {
    try {
      return fn();
    } catch (error) {
      if (!isBusy(error) || i >= attempts || performance.now() >= until) throw error;
      sleepSync(Math.min(200, 5 * i) + Math.random() * 10);
    }
  }
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));
function sleepSync(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms);
}

/** How {@linkcode openDatabase} opens a file. */
export interface OpenDatabaseOptions {
  /** The store URI, to name in errors. */
  uri: string;
  /** Open only to read: refuse a missing file, another schema version, and a file not in WAL mode. */
  readOnly: boolean;
}

/**
 * Opens a provevi SQLite file, checked.
 *
 * @param path The file's absolute path.
 * @param options The URI to name in errors, and whether to open only to read.
 * @returns The open connection.
 * @throws ProveviError naming the file and the fix when the file cannot be used.
 * @example
 * ```ts
 * import { openDatabase } from "./sqlite_connection.ts";
 * const db = openDatabase("/tmp/evidence.db", { uri: "sqlite:////tmp/evidence.db", readOnly: false });
 * db.close();
 * ```
 */
export function openDatabase(path: string, options: OpenDatabaseOptions): DatabaseSync {
  const fail = (why: string, cause?: unknown) =>
    new ProveviError(`cannot open store "${options.uri}": ${why}`, cause ? { cause } : undefined);
  if (options.readOnly) {
    try {
      if (!Deno.statSync(path).isFile) throw fail(`${path} is not a file`);
    } catch (error) {
      if (error instanceof ProveviError) throw error;
      throw fail(
        `there is no file ${path}; check the path, or open it to write once (provr run) to make it`,
        error,
      );
    }
  }
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(path, options.readOnly ? { readOnly: true } : {});
  } catch (error) {
    throw fail(`${(error as Error).message}; check that the folder exists and can be written`, error);
  }
  const newer = (version: number) =>
    fail(
      `the file has schema version ${version}, from a newer provevi; this one knows up to ${SCHEMA_VERSION}: upgrade provevi`,
    );
  try {
    db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // A file of a newer provevi is refused before anything is written to it, even its journal mode.
    if (!options.readOnly) {
      const version = retryBusy(() => schemaVersion(db));
      if (version > SCHEMA_VERSION) throw newer(version);
      // A database of something else (a user's app.db) is never converted to WAL or given tables; an empty
      // file, or a new one, becomes a store.
      if (version === 0) {
        const theirs = retryBusy(() =>
          db.prepare(
            "SELECT name FROM sqlite_master WHERE name NOT LIKE 'provevi\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name LIMIT 4",
          ).all() as { name: string }[]
        );
        if (theirs.length) {
          const names = theirs.slice(0, 3).map((t) => t.name).join(", ") + (theirs.length > 3 ? ", …" : "");
          throw fail(
            `${path} is a SQLite database of something else (${names}), not a provevi store; give the path of a new or empty file`,
          );
        }
      }
    }
    const mode = options.readOnly ? journalMode(db) : retryBusy(() => setWal(db));
    if (mode !== "wal") {
      throw fail(
        `the file is in journal mode ${mode}, and provevi needs WAL; open it once to write to convert it`,
      );
    }
    if (!options.readOnly) {
      db.exec("PRAGMA synchronous = NORMAL");
      upgrade(db, options.uri);
    }
    const version = schemaVersion(db);
    if (version === 0) {
      throw fail("the file holds no provevi evidence; pass the store file that provr wrote");
    }
    if (version > SCHEMA_VERSION) throw newer(version);
    if (version < SCHEMA_VERSION) {
      throw fail(
        `the file has schema version ${version}, and this provevi reads ${SCHEMA_VERSION}; open it once to write to upgrade it`,
      );
    }
    const problems = schemaProblems(db);
    if (problems.length) {
      throw fail(`the schema was changed (${problems.join("; ")}); restore the file from a copy`);
    }
    return db;
  } catch (error) {
    db.close();
    if (error instanceof ProveviError) throw error;
    throw fail(`${(error as Error).message}`, error);
  }
}

function journalMode(db: DatabaseSync): string {
  return String((db.prepare("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode);
}

function setWal(db: DatabaseSync): string {
  if (journalMode(db) === "wal") return "wal";
  return String((db.prepare("PRAGMA journal_mode = WAL").get() as { journal_mode: string }).journal_mode);
}

/** Brings the file up to {@linkcode SCHEMA_VERSION}, one step per transaction. */
function upgrade(db: DatabaseSync, uri: string): void {
  for (;;) {
    retryBusy(() => db.exec("BEGIN IMMEDIATE"));
    try {
      const version = schemaVersion(db);
      if (version >= SCHEMA_VERSION) {
        db.exec("COMMIT");
        return;
      }
      if (version === 0) {
        const other = db.prepare(
          "SELECT name FROM sqlite_master WHERE name LIKE 'provevi\\_%' ESCAPE '\\' LIMIT 1",
        ).get() as { name: string } | undefined;
        if (other) {
          throw new ProveviError(
            `cannot open store "${uri}": the file has provevi tables (${other.name}) but no schema version; restore it from a copy`,
          );
        }
      }
      applyStep(db, SCHEMA_STEPS.find((s) => s.version === version + 1)!);
      db.exec("COMMIT");
    } catch (error) {
      if (db.isTransaction) db.exec("ROLLBACK");
      throw error;
    }
  }
}

/**
 * Runs `fn` in a `BEGIN IMMEDIATE` transaction and commits it. On any error it rolls back and calls `undo`;
 * on a busy error it tries again, so a busy file never loses a write.
 *
 * @param db The connection.
 * @param fn The writes; it must not await.
 * @param undo Takes back what `fn` did outside the database.
 * @returns What `fn` returns.
 */
export function transaction<T>(db: DatabaseSync, fn: () => T, undo: () => void = () => {}): T {
  return retryBusy(() => {
    db.exec("BEGIN IMMEDIATE");
    try {
      const result = fn();
      db.exec("COMMIT");
      return result;
    } catch (error) {
      try {
        if (db.isTransaction) db.exec("ROLLBACK");
      } finally {
        undo();
      }
      throw error;
    }
  });
}

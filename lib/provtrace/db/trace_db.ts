/**
 * Opening a trace database: WAL only (a file in another journal mode is refused, never converted behind the
 * user's back), the schema brought up to date one numbered step at a time to write, or checked to read.
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import { ProveviError } from "../../provevi/evidence/mod.ts";
import { TRACE_SCHEMA_STEPS, TRACE_SCHEMA_VERSION } from "./schema.ts";
import { traceSchemaProblems } from "./schema_check.ts";
import denoJson from "../../../deno.json" with { type: "json" };

/**
 * The build's version: the toolkit's version and the number of the mapping from events to rows. A change to
 * how rows are made raises the mapping number, so `provtrace runs` shows which runs an older build added.
 */
export const TRACE_BUILD_VERSION: string = `${denoJson.version}+map1`;

/** How {@linkcode openTraceDb} opens a file. */
export interface OpenTraceDbOptions {
  /** Make the file (in WAL mode) when it does not exist, and bring its schema up to date. */
  write?: boolean;
}

/** An open trace database. */
export interface TraceDb extends Disposable {
  /** The file's path, as given. */
  readonly path: string;
  /** The connection. */
  readonly db: DatabaseSync;
  /** Closes the connection. */
  close(): void;
}

/**
 * Opens a trace database.
 *
 * @param path The file.
 * @param options `write: true` to build: a missing or empty file is made in WAL mode.
 * @returns The open database; close it (or `using` it) when done.
 * @throws ProveviError naming the file and the fix: a missing file to read, a file in another journal mode, a
 * file of another schema version, a file that is not a trace database; to write, a file whose schema was
 * changed (a trigger, a view or a table that the schema does not make).
 * @example
 * ```ts
 * import { openTraceDb } from "./trace_db.ts";
 * using trace = openTraceDb("/tmp/trace.db", { write: true });
 * ```
 */
export function openTraceDb(path: string, options: OpenTraceDbOptions = {}): TraceDb {
  const fail = (why: string, cause?: unknown) =>
    new ProveviError(`cannot open trace database "${path}": ${why}`, cause ? { cause } : undefined);
  let size = -1;
  try {
    const stat = Deno.statSync(path);
    if (!stat.isFile) throw fail("it is not a file");
    size = stat.size;
  } catch (error) {
    if (error instanceof ProveviError) throw error;
    if (!(error instanceof Deno.errors.NotFound)) throw fail((error as Error).message, error);
    if (!options.write) {
      throw fail("there is no such file; make it with provtrace build --store URI --db PATH", error);
    }
  }
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(path, options.write ? {} : { readOnly: true });
  } catch (error) {
    throw fail(`${(error as Error).message}; check that the folder exists and can be written`, error);
  }
  try {
    db.exec("PRAGMA busy_timeout = 60000");
    const fresh = size <= 0 && tableCount(db) === 0;
    let mode = journalMode(db);
    if (mode !== "wal" && fresh && options.write) {
      mode = String((db.prepare("PRAGMA journal_mode = WAL").get() as { journal_mode: string }).journal_mode);
    }
    if (mode !== "wal") {
      throw fail(
        `the file is in journal mode ${mode}, and a trace database must be in WAL mode; delete it and build again, or convert it with: sqlite3 ${path} "PRAGMA journal_mode=WAL"`,
      );
    }
    const version = traceSchemaVersion(db);
    if (version === 0 && !fresh) {
      throw fail("the file holds other tables and no trace database; give a new file to --db");
    }
    if (version > TRACE_SCHEMA_VERSION) {
      throw fail(
        `the file has schema version ${version}, from a newer provtrace; this one knows up to ${TRACE_SCHEMA_VERSION}: upgrade provtrace`,
      );
    }
    if (options.write) {
      db.exec("PRAGMA synchronous = NORMAL");
      upgrade(db);
      // The build's rows must be what it wrote: a trigger or a table made again would change them as they go in.
      const changed = traceSchemaProblems(db, TRACE_SCHEMA_VERSION);
      if (changed.length) {
        throw fail(
          `its schema is not a trace database's (${changed[0]}${
            changed.length > 1 ? `, and ${changed.length - 1} more` : ""
          }); delete it and build again`,
        );
      }
    } else if (version < TRACE_SCHEMA_VERSION) {
      throw fail(
        `the file has schema version ${version}, and this provtrace reads ${TRACE_SCHEMA_VERSION}; run provtrace build on it once to upgrade it`,
      );
    }
  } catch (error) {
    db.close();
    if (error instanceof ProveviError) throw error;
    throw fail((error as Error).message, error);
  }
  return {
    path,
    db,
    close: () => {
      if (db.isOpen) db.close();
    },
    [Symbol.dispose]() {
      if (db.isOpen) db.close();
    },
  };
}

function tableCount(db: DatabaseSync): number {
  return Number((db.prepare("SELECT count(*) AS n FROM sqlite_master").get() as { n: number }).n);
}

function journalMode(db: DatabaseSync): string {
  return String((db.prepare("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode);
}

/**
 * The schema version a file records, 0 when it has no `trace_meta`.
 *
 * @param db An open database.
 * @returns The version.
 */
export function traceSchemaVersion(db: DatabaseSync): number {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'trace_meta'").get();
  if (!table) return 0;
  const row = db.prepare("SELECT value FROM trace_meta WHERE key = 'schema_version'").get() as
    | { value: string }
    | undefined;
  return row ? Number(row.value) : 0;
}

/** Brings the file up to {@linkcode TRACE_SCHEMA_VERSION}, one step per transaction. */
function upgrade(db: DatabaseSync): void {
  for (;;) {
    db.exec("BEGIN IMMEDIATE");
    try {
      const version = traceSchemaVersion(db);
      if (version >= TRACE_SCHEMA_VERSION) {
        db.exec("COMMIT");
        return;
      }
      const step = TRACE_SCHEMA_STEPS.find((s) => s.version === version + 1)!;
      step.up(db);
      const put = db.prepare("INSERT OR REPLACE INTO trace_meta (key, value) VALUES (?, ?)");
      put.run("schema_version", String(step.version));
      put.run("build_version", TRACE_BUILD_VERSION);
      db.exec("COMMIT");
    } catch (error) {
      if (db.isTransaction) db.exec("ROLLBACK");
      throw error;
    }
  }
}

/**
 * A trace database in memory, with the whole schema: where `check` and the exports build a run again from its
 * evidence, to compare with the file's rows.
 *
 * @returns The open database; close it (or `using` it) when done.
 * @example
 * ```ts
 * import { memoryTraceDb } from "./trace_db.ts";
 * using scratch = memoryTraceDb();
 * ```
 */
export function memoryTraceDb(): TraceDb {
  const db = new DatabaseSync(":memory:");
  upgrade(db);
  return {
    path: ":memory:",
    db,
    close: () => {
      if (db.isOpen) db.close();
    },
    [Symbol.dispose]() {
      if (db.isOpen) db.close();
    },
  };
}

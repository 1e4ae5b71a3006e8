/**
 * The file log's index from a run to its leaf, so that a run's proof is found without reading every entry:
 * `index.db`, a SQLite file (the built-in `node:sqlite`, in WAL mode) of `(run_id, idx)` rows and the size below
 * which every leaf has its row. It is a cache of what the entries say, made again from them when lost: a row is
 * only a hint, and the leaf at its index is read to confirm it. An append writes its rows, and the size it will
 * make, in one transaction before its commit: a row of an append that never committed names an index past the
 * size, or whose leaf is another run's, and the append that takes that index writes its own row. The
 * transaction is not fsynced: WAL keeps a prefix of its transactions, so a crash loses the size with the rows,
 * and a leaf past the size that survived (a log whose index was lost or is behind) is looked for in the entries,
 * and the next append writes its row. A reader that cannot open the file reads the entries instead.
 * @module
 */
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { join } from "node:path";

/** A leaf's row: its index and its run. */
export interface IndexLine {
  index: number;
  runId: string;
}

const TABLES = `
CREATE TABLE IF NOT EXISTS provevi_log_index (
  run_id TEXT NOT NULL, idx INTEGER NOT NULL, PRIMARY KEY (run_id, idx)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS provevi_log_indexed (id INTEGER PRIMARY KEY CHECK (id = 1), size INTEGER NOT NULL);
`;

/** The index of a file log, `<log>/index.db`. */
export class RunIndex {
  readonly #path: string;
  #db: DatabaseSync | null = null;
  #made = false; // the tables are known to be there
  #statements = new Map<string, StatementSync>(); // prepared once per connection: a proof looks up one run

  /** @param logDir The log's folder. */
  constructor(logDir: string) {
    this.#path = join(logDir, "index.db");
  }

  /**
   * Runs `fn` on the index file, kept open once opened (closing the last connection of a WAL file checkpoints
   * it, with fsyncs, which an append would pay each time); null when it cannot be opened or `fn` fails.
   */
  #with<T>(write: boolean, fn: (db: DatabaseSync) => T): T | null {
    try {
      if (this.#db === null) {
        if (!write) Deno.statSync(this.#path); // a reader makes no file
        this.#db = this.#open(write);
      }
      if (write && !this.#made) {
        this.#db.exec("PRAGMA journal_mode = WAL");
        this.#db.exec("PRAGMA synchronous = NORMAL");
        this.#db.exec(TABLES);
        this.#made = true;
      }
      return fn(this.#db);
    } catch {
      this.close(); // opened again next time: the file may have been replaced
      return null;
    }
  }

  /**
   * Opens the index file, and checks that it holds only the index's own tables. Whoever can write the log's
   * folder can put an `index.db` whose table is a view of endless rows, or has a trigger that loops: the cache
   * would hold every proof and append. A reader then reads the entries; a writer makes the file again.
   */
  #open(write: boolean): DatabaseSync {
    let db = new DatabaseSync(this.#path);
    db.exec("PRAGMA trusted_schema = OFF");
    if (!ownSchema(db)) {
      db.close();
      if (!write) throw new Error(`${this.#path} holds objects the index does not make`);
      for (const end of ["", "-wal", "-shm"]) {
        try {
          Deno.removeSync(this.#path + end);
        } catch (error) {
          if (!(error instanceof Deno.errors.NotFound)) throw error;
        }
      }
      db = new DatabaseSync(this.#path);
      db.exec("PRAGMA trusted_schema = OFF");
    }
    db.exec("PRAGMA busy_timeout = 60000");
    return db;
  }

  /** Closes the index file, if it is open. */
  close(): void {
    try {
      this.#db?.close();
    } catch { /* closed already */ }
    this.#db = null;
    this.#made = false;
    this.#statements.clear();
  }

  /** A statement of the open connection, prepared the first time. */
  #statement(db: DatabaseSync, sql: string): StatementSync {
    let statement = this.#statements.get(sql);
    if (!statement) this.#statements.set(sql, statement = db.prepare(sql));
    return statement;
  }

  /**
   * Finds a run's leaf.
   *
   * @param runId The run.
   * @param size The log's size: a row past it is not read.
   * @param names Whether the leaf at an index is the run's (the confirmation of a row, and the scan).
   * @returns The index, or null when no leaf below `size` is the run's.
   */
  async lookup(
    runId: string,
    size: number,
    names: (index: number) => Promise<boolean>,
  ): Promise<number | null> {
    const found = this.#with(false, (db) => ({
      // a run has one leaf: the few rows below the size are hints enough, however many the file holds
      rows: this.#statement(
        db,
        "SELECT idx FROM provevi_log_index WHERE run_id = ? AND idx < ? ORDER BY idx LIMIT 16",
      ).all(runId, size) as {
        idx: number;
      }[],
      indexed: this.#statement(db, "SELECT size FROM provevi_log_indexed WHERE id = 1").get() as
        | { size: number }
        | undefined,
    }));
    for (const { idx } of found?.rows ?? []) {
      const index = Number(idx);
      if (index < size && await names(index)) return index;
    }
    // Past the indexed size (or with no index to read), the entries say.
    for (let index = Math.min(Number(found?.indexed?.size ?? 0), size); index < size; index++) {
      if (await names(index)) return index;
    }
    return null;
  }

  /**
   * Adds rows, and the size below which every leaf then has its row, in one transaction.
   *
   * @param append `lines`: the rows of the leaves being appended; `size`: the size the append makes; `missing`:
   *   the rows of the leaves from an index on, called when the index is behind the log (it was lost).
   */
  add(append: { lines: readonly IndexLine[]; size: number; missing: (from: number) => IndexLine[] }): void {
    // The statements are prepared once per connection: an append of one run is a few rows.
    this.#with(true, (db) => {
      db.exec("BEGIN IMMEDIATE");
      try {
        const row = this.#statement(db, "SELECT size FROM provevi_log_indexed WHERE id = 1").get() as
          | { size: number }
          | undefined;
        const first = append.lines[0]?.index ?? append.size;
        const behind = Number(row?.size ?? 0) < first ? append.missing(Number(row?.size ?? 0)) : [];
        const insert = this.#statement(
          db,
          "INSERT OR IGNORE INTO provevi_log_index (run_id, idx) VALUES (?, ?)",
        );
        for (const l of [...behind, ...append.lines]) insert.run(l.runId, l.index);
        this.#statement(
          db,
          "INSERT INTO provevi_log_indexed (id, size) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET size = excluded.size",
        ).run(append.size);
        db.exec("COMMIT");
      } catch (error) {
        db.exec("ROLLBACK");
        throw error;
      }
    });
  }
}

/** The objects of the index's tables as `sqlite_master` lists them, made once in memory to compare with. */
let own: string | null = null;

function schemaText(db: DatabaseSync): string {
  return JSON.stringify(
    db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name").all(),
  );
}

/** True when a file holds nothing (a new one) or exactly the index's tables: no view, trigger or other table. */
function ownSchema(db: DatabaseSync): boolean {
  if (own === null) {
    const memory = new DatabaseSync(":memory:");
    try {
      memory.exec(TABLES);
      own = schemaText(memory);
    } finally {
      memory.close();
    }
  }
  const found = schemaText(db);
  return found === "[]" || found === own;
}

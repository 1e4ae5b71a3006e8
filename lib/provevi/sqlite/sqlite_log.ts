/**
 * The sqlite store's log: the tables of schema step 5 (see `log/rows_log.ts`), appended to in the seal's own
 * transaction, which `BEGIN IMMEDIATE` makes the only writer of the file, and committed with
 * `synchronous = FULL`, so that a checkpoint the seal gave out survives a power loss (the store's other
 * transactions keep WAL's `NORMAL`).
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import { ProveviError } from "../evidence/errors.ts";
import type { AppendResult } from "../log/log_storage.ts";
import { type LogKey, logKeyOf, newKeyFile } from "../log/log_key.ts";
import { bytesOf, edgeRows, planRowsAppend, type RowsAppend, RowsLog } from "../log/rows_log.ts";
import type { RunLeaf } from "../log/run_leaf.ts";
import { transaction } from "./sqlite_connection.ts";

const keys = new Map<string, LogKey>(); // by the key file's text: parsed once per process

/** The log's key, made in the caller's transaction when there is none. */
function keyIn(db: DatabaseSync, uri: string): LogKey {
  let row = db.prepare("SELECT key FROM provevi_log_key WHERE id = 1").get() as { key: string } | undefined;
  if (!row) {
    db.prepare("INSERT INTO provevi_log_key (id, key) VALUES (1, ?)").run(
      JSON.stringify(newKeyFile(), null, 2) + "\n",
    );
    row = db.prepare("SELECT key FROM provevi_log_key WHERE id = 1").get() as { key: string };
  }
  let key = keys.get(row.key);
  if (!key) {
    key = logKeyOf(row.key, "sqlite", `provevi_log_key of ${uri}`);
    keys.set(row.key, key);
  }
  return key;
}

/**
 * Appends leaves to the log inside the caller's `BEGIN IMMEDIATE` transaction: reads the size, the edge and the
 * leaves already in, and inserts the new rows.
 *
 * @param db The connection, inside a write transaction.
 * @param leaves The leaves (a run in the log already keeps its index).
 * @param uri The store URI, for errors.
 * @returns The append's rows and result; its proofs may be made after the commit.
 */
export function appendLogIn(db: DatabaseSync, leaves: readonly RunLeaf[], uri: string): RowsAppend {
  if (!db.isTransaction) throw new TypeError("appendLogIn() needs the caller's write transaction");
  const key = keyIn(db, uri);
  const top = db.prepare("SELECT max(size) AS size FROM provevi_log_checkpoints").get() as {
    size: number | bigint | null;
  };
  const size = Number(top.size ?? 0);
  const edge: { level: number; n: number; hash: Uint8Array }[] = [];
  const range = db.prepare(
    "SELECT level, n, hash FROM provevi_log_hashes WHERE level = ? AND n >= ? AND n < ? ORDER BY n",
  );
  for (const r of edgeRows(size)) {
    for (const row of range.all(r.level, r.from, r.to) as { level: number; n: number; hash: Uint8Array }[]) {
      edge.push({ level: Number(row.level), n: Number(row.n), hash: bytesOf(row.hash) });
    }
  }
  const present = new Map<string, number>();
  const find = db.prepare("SELECT idx FROM provevi_log_entries WHERE run_id = ?");
  for (const leaf of leaves) {
    const row = find.get(leaf.run_id) as { idx: number } | undefined;
    if (row) present.set(leaf.run_id, Number(row.idx));
  }
  const plan = planRowsAppend({ size, edge, present, key }, leaves);
  const entry = db.prepare("INSERT INTO provevi_log_entries (idx, run_id, entry) VALUES (?, ?, ?)");
  for (const e of plan.entries) entry.run(e.idx, e.runId, e.entry);
  const hash = db.prepare("INSERT INTO provevi_log_hashes (level, n, hash) VALUES (?, ?, ?)");
  for (const h of plan.hashes) hash.run(h.level, h.n, h.hash);
  if (plan.checkpoint) {
    db.prepare("INSERT INTO provevi_log_checkpoints (size, note) VALUES (?, ?)").run(
      plan.checkpoint.size,
      plan.checkpoint.note,
    );
  }
  return plan;
}

/**
 * Runs a write transaction whose commit is fsynced (`synchronous = FULL`), then sets the connection back to
 * `NORMAL`.
 *
 * @param db The connection.
 * @param fn The writes; it must not await.
 * @param undo Takes back what `fn` did outside the database, when it fails.
 * @returns What `fn` returns.
 */
export function durableTransaction<T>(db: DatabaseSync, fn: () => T, undo?: () => void): T {
  db.exec("PRAGMA synchronous = FULL");
  try {
    return transaction(db, fn, undo);
  } finally {
    db.exec("PRAGMA synchronous = NORMAL");
  }
}

/**
 * The sqlite store's log over its connection.
 *
 * @param db The store's connection (a getter: the store may close it).
 * @param options `uri`: the store URI; `readOnly`: the log is only read.
 * @returns The log.
 */
export function sqliteLog(db: () => DatabaseSync, options: { uri: string; readOnly: boolean }): RowsLog {
  const read = (text: string, params: readonly unknown[]) =>
    Promise.resolve(db().prepare(text).all(...(params as (string | number)[])) as Record<string, unknown>[]);
  const writer = {
    append: (leaves: readonly RunLeaf[]): Promise<AppendResult> => {
      try {
        const conn = db();
        return Promise.resolve(durableTransaction(conn, () => appendLogIn(conn, leaves, options.uri)).result);
      } catch (error) {
        return Promise.reject(wrap(error, options.uri));
      }
    },
    makeKey: (text: string) => {
      const conn = db();
      transaction(
        conn,
        () => conn.prepare("INSERT OR IGNORE INTO provevi_log_key (id, key) VALUES (1, ?)").run(text),
      );
      return Promise.resolve();
    },
    saveCosigned: (size: number, note: string) => {
      const conn = db();
      transaction(
        conn,
        () => conn.prepare("UPDATE provevi_log_checkpoints SET cosigned = ? WHERE size = ?").run(note, size),
      );
      return Promise.resolve();
    },
  };
  return new RowsLog({ kind: "sqlite", where: options.uri, read, writer: options.readOnly ? null : writer });
}

function wrap(error: unknown, uri: string): unknown {
  if (error instanceof ProveviError || error instanceof TypeError) return error;
  return new ProveviError(`cannot append to the log of ${uri}: ${(error as Error).message}`, {
    cause: error,
  });
}

/**
 * The postgres store's log: the tables of schema step 6 (see `log/rows_log.ts`), appended to in the seal's own
 * transaction under a transaction-level advisory lock, so that writers on many machines append one after
 * another: each reads the size and the edge that the one before it committed. The tables' keys (a run once, an
 * index once, a hash once per place, a checkpoint once per size) refuse a second history even if the lock were
 * bypassed.
 * @module
 */
import { Buffer } from "node:buffer";
import type postgres from "postgres";
import { ProveviError } from "../evidence/errors.ts";
import type { AppendResult } from "../log/log_storage.ts";
import { type LogKey, logKeyOf, newKeyFile } from "../log/log_key.ts";
import { bytesOf, edgeRows, planRowsAppend, type RowsAppend, RowsLog } from "../log/rows_log.ts";
import type { RunLeaf } from "../log/run_leaf.ts";
import { pgMessage } from "./postgres_connection.ts";
import { numbered, type PgSql } from "./postgres_rows.ts";

/** The advisory lock that serialises appends to the log, across processes and machines. */
const LOG_LOCK = 0x6c6f6773; // "logs"

/** Bytes as hex, as a JSON text carries them (`decode(…, 'hex')` makes them bytea again). */
const hex = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString("hex");

const keys = new Map<string, LogKey>(); // by the key file's text: parsed once per process

async function keyIn(tx: PgSql, uri: string): Promise<LogKey> {
  let [row] = await tx.unsafe("SELECT key FROM provevi_log_key WHERE id = 1");
  if (!row) {
    await tx.unsafe("INSERT INTO provevi_log_key (id, key) VALUES (1, $1)", [
      JSON.stringify(newKeyFile(), null, 2) + "\n",
    ]);
    [row] = await tx.unsafe("SELECT key FROM provevi_log_key WHERE id = 1");
  }
  const text = String(row!.key);
  let key = keys.get(text);
  if (!key) {
    key = logKeyOf(text, "postgres", `provevi_log_key of ${uri}`);
    keys.set(text, key);
  }
  return key;
}

/**
 * Appends leaves to the log inside the caller's transaction: takes the log's lock, reads the size, the edge and
 * the leaves already in, and inserts the new rows. The lock is held until the transaction ends.
 *
 * @param tx The caller's transaction.
 * @param leaves The leaves (a run in the log already keeps its index).
 * @param uri The store URI, for errors.
 * @returns The append's rows and result; its proofs may be made after the commit.
 */
export async function appendLogPg(tx: PgSql, leaves: readonly RunLeaf[], uri: string): Promise<RowsAppend> {
  await tx.unsafe(`SELECT pg_advisory_xact_lock(${LOG_LOCK})`);
  const key = await keyIn(tx, uri);
  const [top] = await tx.unsafe("SELECT max(size) AS size FROM provevi_log_checkpoints");
  const size = Number(top?.size ?? 0);
  const ranges = edgeRows(size);
  const edge = ranges.length === 0 ? [] : (await tx.unsafe(
    `SELECT level, n, hash FROM provevi_log_hashes WHERE ${
      ranges.map((r) => `(level = ${r.level} AND n >= ${r.from} AND n < ${r.to})`).join(" OR ")
    }`,
  )).map((r) => ({ level: Number(r.level), n: Number(r.n), hash: bytesOf(r.hash) }));
  const present = new Map<string, number>();
  const found = await tx.unsafe(
    `SELECT idx, run_id FROM provevi_log_entries
     WHERE run_id IN (SELECT jsonb_array_elements_text($1::text::jsonb))`,
    [JSON.stringify(leaves.map((l) => l.run_id))],
  );
  for (const r of found) present.set(String(r.run_id), Number(r.idx));
  const plan = planRowsAppend({ size, edge, present, key }, leaves);
  // Rows go as one JSON text each (the driver sends arrays of bytes only with their types fetched).
  if (plan.entries.length) {
    await tx.unsafe(
      `INSERT INTO provevi_log_entries (idx, run_id, entry)
       SELECT i, r, decode(h, 'hex') FROM jsonb_to_recordset($1::text::jsonb) AS t(i bigint, r text, h text)`,
      [JSON.stringify(plan.entries.map((e) => ({ i: e.idx, r: e.runId, h: hex(e.entry) })))],
    );
    await tx.unsafe(
      `INSERT INTO provevi_log_hashes (level, n, hash)
       SELECT l, n, decode(h, 'hex') FROM jsonb_to_recordset($1::text::jsonb) AS t(l int, n bigint, h text)`,
      [JSON.stringify(plan.hashes.map((x) => ({ l: x.level, n: x.n, h: hex(x.hash) })))],
    );
  }
  if (plan.checkpoint) {
    await tx.unsafe("INSERT INTO provevi_log_checkpoints (size, note) VALUES ($1, $2)", [
      plan.checkpoint.size,
      plan.checkpoint.note,
    ]);
  }
  return plan;
}

/**
 * The postgres store's log over its pool.
 *
 * @param sql The store's pool (a getter: the store may close it).
 * @param options `uri`: the store URI; `readOnly`: the log is only read.
 * @returns The log.
 */
export function postgresLog(sql: () => postgres.Sql, options: { uri: string; readOnly: boolean }): RowsLog {
  const read = async (text: string, params: readonly unknown[]) =>
    [...await sql().unsafe(numbered(text), params as never)] as Record<string, unknown>[];
  const failed = (what: string, error: unknown) =>
    error instanceof ProveviError
      ? error
      : new ProveviError(`cannot ${what} in ${options.uri}: ${pgMessage(error)}`, { cause: error });
  const writer = {
    append: async (leaves: readonly RunLeaf[]): Promise<AppendResult> => {
      try {
        return (await sql().begin((tx) => appendLogPg(tx, leaves, options.uri))).result;
      } catch (error) {
        throw failed("append to the log", error);
      }
    },
    makeKey: async (text: string) => {
      await sql().unsafe("INSERT INTO provevi_log_key (id, key) VALUES (1, $1) ON CONFLICT (id) DO NOTHING", [
        text,
      ]);
    },
    saveCosigned: async (size: number, note: string) => {
      await sql().unsafe("UPDATE provevi_log_checkpoints SET cosigned = $1 WHERE size = $2", [note, size]);
    },
  };
  return new RowsLog({
    kind: "postgres",
    where: options.uri,
    read,
    writer: options.readOnly ? null : writer,
  });
}

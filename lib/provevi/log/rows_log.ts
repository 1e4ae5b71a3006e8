/**
 * The log of an indexed store (sqlite, Postgres), in tables of the store's own database:
 *
 * - `provevi_log_entries (idx, run_id UNIQUE, entry)`: each leaf, by its index (a run is in it once);
 * - `provevi_log_hashes (level, n, hash)`: the tree's hashes at each tile level (level 0 the leaves' hashes, level
 *   `l` the roots of the full tiles of level `l - 1`), so that any tile of any size, full or partial, is a range
 *   of rows: the partial tiles of every checkpoint stay readable, as C2SP tlog-tiles asks;
 * - `provevi_log_checkpoints (size, note, cosigned)`: every checkpoint the log signed, with the cosignatures that
 *   witnesses gave it;
 * - `provevi_log_key (id, key)`: the log's key, made by the first append.
 *
 * An append is planned here from what the store reads under its lock (the size, the edge's hash rows and the
 * leaves already in), and gives the rows to insert, in the seal's own transaction.
 * @module
 */
import { ProveviError } from "../evidence/errors.ts";
import { parseCheckpoint } from "./checkpoint.ts";
import { type LogKey, logKeyOf, newKeyFile } from "./log_key.ts";
import { type AppendResult, concatHashes, type LogStorage, planAppend } from "./log_storage.ts";
import { HASH_SIZE } from "./merkle.ts";
import { parseNote } from "./note.ts";
import type { RunLeaf } from "./run_leaf.ts";
import { TILE_WIDTH, type TileRef } from "./tiles.ts";
import { edgeOf, edgeTiles } from "./tree_edge.ts";

/** A row as a driver gives it: column names to values. */
export type LogRow = Record<string, unknown>;

/** Reads rows of the store's database: `?` placeholders, in order. */
export type LogReader = (text: string, params: readonly unknown[]) => Promise<LogRow[]>;

/** What a store does for its log that is more than a read: appends, cosigned checkpoints, the key. */
export interface LogWriter {
  /** Appends leaves in a transaction of their own, under the log's lock. */
  append(leaves: readonly RunLeaf[]): Promise<AppendResult>;
  /** Makes the key row with this key file's text, unless another writer made one first. */
  makeKey(text: string): Promise<void>;
  /** Sets the cosigned text of the checkpoint of `size`. */
  saveCosigned(size: number, note: string): Promise<void>;
}

/** What an append reads of the log under its lock. */
export interface RowsLogState {
  /** The log's size: its latest checkpoint's. */
  size: number;
  /** The hash rows of the tree's edge, as {@linkcode edgeRows} names them. */
  edge: readonly { level: number; n: number; hash: Uint8Array }[];
  /** The index of each run among the leaves to append that is in the log already. */
  present: ReadonlyMap<string, number>;
  /** The log's key. */
  key: LogKey;
}

/** The rows of one append. */
export interface RowsAppend {
  /** The result, as the seal gives it back. */
  result: AppendResult;
  /** New entries, by index. */
  entries: { idx: number; runId: string; entry: Uint8Array }[];
  /** New hash rows. */
  hashes: { level: number; n: number; hash: Uint8Array }[];
  /** The new checkpoint's row, or null when every leaf was in the log already. */
  checkpoint: { size: number; note: string } | null;
  /** The tlog-proof of a leaf of the append, from the tiles in memory (call after the commit). */
  proofOf(index: number): string;
}

/**
 * The ranges of hash rows that make the edge of a tree of `size` leaves: one per partial tile.
 *
 * @param size The tree's size.
 * @returns For each partial tile, its level and the rows `[from, to)` of that level.
 */
export function edgeRows(size: number): { level: number; from: number; to: number }[] {
  return edgeTiles(size).map((t) => ({
    level: t.level,
    from: t.index * TILE_WIDTH,
    to: t.index * TILE_WIDTH + t.width,
  }));
}

/**
 * Plans an append to a log kept in rows.
 *
 * @param state What was read under the lock.
 * @param leaves The leaves; a run in the log already keeps its index, and a run given twice is appended once.
 * @returns The rows to insert and the result.
 * @throws ProveviError when a leaf is larger than an entry may be, or the edge's rows are not all there.
 */
export function planRowsAppend(state: RowsLogState, leaves: readonly RunLeaf[]): RowsAppend {
  const fresh: RunLeaf[] = [];
  const seen = new Set<string>();
  for (const leaf of leaves) {
    if (state.present.has(leaf.run_id) || seen.has(leaf.run_id)) continue;
    seen.add(leaf.run_id);
    fresh.push(leaf);
  }
  const byLevel = new Map<string, Uint8Array>();
  for (const r of state.edge) byLevel.set(`${r.level}/${r.n}`, r.hash);
  const edge = edgeOf(state.size, (tile) => edgeBytes(tile, byLevel));
  const plan = planAppend({ edge, partialEntries: [] }, fresh, state.key);
  const indexOf = new Map(fresh.map((l, i) => [l.run_id, state.size + i]));
  const indexes = leaves.map((l) => state.present.get(l.run_id) ?? indexOf.get(l.run_id)!);
  const hashes: RowsAppend["hashes"] = [];
  for (const t of plan.tiles) {
    const from = Math.floor(state.size / TILE_WIDTH ** t.tile.level); // the level's rows before the append
    for (let i = 0; i < t.tile.width; i++) {
      const n = t.tile.index * TILE_WIDTH + i;
      if (n >= from) {
        hashes.push({ level: t.tile.level, n, hash: t.hashes.slice(i * HASH_SIZE, (i + 1) * HASH_SIZE) });
      }
    }
  }
  const size = plan.edge.size;
  return {
    result: { indexes, size: fresh.length ? size : state.size, checkpoint: plan.checkpoint },
    entries: fresh.map((l, i) => ({ idx: state.size + i, runId: l.run_id, entry: plan.entries[i]! })),
    hashes,
    checkpoint: fresh.length ? { size, note: plan.checkpoint } : null,
    proofOf: plan.proofOf,
  };
}

/** A partial tile's hashes from the edge's rows. */
function edgeBytes(tile: TileRef, rows: ReadonlyMap<string, Uint8Array>): Uint8Array {
  const out: Uint8Array[] = [];
  for (let i = 0; i < tile.width; i++) {
    const hash = rows.get(`${tile.level}/${tile.index * TILE_WIDTH + i}`);
    if (!hash || hash.length !== HASH_SIZE) {
      throw new ProveviError(
        `the log lacks hash ${
          tile.index * TILE_WIDTH + i
        } of level ${tile.level}: restore the database, or run prove log audit`,
      );
    }
    out.push(hash);
  }
  return concatHashes(out);
}

/**
 * A store's log kept in rows (docs/log.md, "Where the log is").
 *
 * @example
 * ```ts ignore
 * import { RowsLog } from "./rows_log.ts";
 * const log = new RowsLog({ kind: "sqlite", where: "sqlite:/tmp/e.db", read, writer });
 * await log.checkpoint();
 * ```
 */
export class RowsLog implements LogStorage {
  readonly kind: string;
  readonly where: string;
  readonly #read: LogReader;
  readonly #writer: LogWriter | null;
  #key: LogKey | null = null;

  /**
   * @param options `kind` (`sqlite`, `postgres`), `where` (the store URI), `read` and `writer` (null for a store
   *   that only reads).
   */
  constructor(options: { kind: string; where: string; read: LogReader; writer: LogWriter | null }) {
    this.kind = options.kind;
    this.where = options.where;
    this.#read = options.read;
    this.#writer = options.writer;
  }

  #writable(what: string): LogWriter {
    if (!this.#writer) {
      throw new ProveviError(`cannot ${what}: store "${this.where}" was opened only to read`);
    }
    return this.#writer;
  }

  /** The log's key; made when `create` is set and there is none. */
  async key(options: { create?: boolean } = {}): Promise<LogKey | null> {
    if (this.#key) return this.#key;
    let [row] = await this.#read("SELECT key FROM provevi_log_key WHERE id = 1", []);
    if (!row && options.create) {
      const text = JSON.stringify(newKeyFile(), null, 2) + "\n";
      await this.#writable("make the log's key").makeKey(text);
      [row] = await this.#read("SELECT key FROM provevi_log_key WHERE id = 1", []);
    }
    if (!row) return null;
    this.#key = logKeyOf(String(row.key), this.kind, `provevi_log_key of ${this.where}`);
    return this.#key;
  }

  /** The latest checkpoint, or null for an empty log. */
  async checkpoint(): Promise<string | null> {
    const [row] = await this.#read(
      "SELECT note FROM provevi_log_checkpoints ORDER BY size DESC LIMIT 1",
      [],
    );
    return row ? String(row.note) : null;
  }

  /** The latest checkpoint that witnesses cosigned, or null. */
  async witnessed(): Promise<string | null> {
    const [row] = await this.#read(
      "SELECT cosigned FROM provevi_log_checkpoints WHERE cosigned IS NOT NULL ORDER BY size DESC LIMIT 1",
      [],
    );
    return row ? String(row.cosigned) : null;
  }

  /** Every checkpoint the log signed, oldest first: what a fork would show as two roots of one history. */
  async checkpoints(): Promise<string[]> {
    const rows = await this.#read("SELECT note FROM provevi_log_checkpoints ORDER BY size", []);
    return rows.map((r) => String(r.note));
  }

  /** The hashes of tiles, each a range of rows. */
  async readTiles(tiles: readonly TileRef[]): Promise<Uint8Array[]> {
    const out: Uint8Array[] = [];
    for (const t of tiles) {
      const rows = await this.#read(
        "SELECT hash FROM provevi_log_hashes WHERE level = ? AND n >= ? AND n < ? ORDER BY n",
        [t.level, t.index * TILE_WIDTH, t.index * TILE_WIDTH + t.width],
      );
      if (rows.length !== t.width) {
        throw new ProveviError(
          `the log of ${this.where} lacks hashes of tile ${t.level}/${t.index} (${rows.length} of ${t.width}): restore the database, or run prove log audit`,
        );
      }
      out.push(concatHashes(rows.map((r) => bytesOf(r.hash))));
    }
    return out;
  }

  /** The entries of entry bundle `index`, its first `width`. */
  async readEntries(index: number, width: number): Promise<Uint8Array[]> {
    const rows = await this.#read(
      "SELECT entry FROM provevi_log_entries WHERE idx >= ? AND idx < ? ORDER BY idx",
      [index * TILE_WIDTH, index * TILE_WIDTH + width],
    );
    if (rows.length !== width) {
      throw new ProveviError(
        `the log of ${this.where} holds ${rows.length} of the ${width} entries of bundle ${index}: restore the database, or run prove log audit`,
      );
    }
    return rows.map((r) => bytesOf(r.entry));
  }

  /** The index of a run's leaf, or null. */
  async indexOf(runId: string): Promise<number | null> {
    const [row] = await this.#read("SELECT idx FROM provevi_log_entries WHERE run_id = ?", [runId]);
    return row ? Number(row.idx) : null;
  }

  /** Appends leaves in a transaction of their own. */
  async append(leaves: readonly RunLeaf[]): Promise<AppendResult> {
    return await this.#writable("append to the log").append(leaves);
  }

  /** Keeps a checkpoint's cosignatures on its row (the checkpoint must be one the log signed). */
  async saveWitnessed(note: string): Promise<void> {
    const size = parseCheckpoint(parseNote(note).text).size;
    const [row] = await this.#read("SELECT note FROM provevi_log_checkpoints WHERE size = ?", [size]);
    if (!row || parseNote(String(row.note)).text !== parseNote(note).text) {
      throw new ProveviError(
        `the cosigned checkpoint of size ${size} is not one that the log of ${this.where} signed`,
      );
    }
    await this.#writable("keep a cosigned checkpoint").saveCosigned(size, note);
  }
}

/** A BLOB or BYTEA as plain bytes. */
export function bytesOf(value: unknown): Uint8Array {
  if (value instanceof Uint8Array) return new Uint8Array(value.buffer, value.byteOffset, value.length);
  throw new ProveviError(`a log row holds ${typeof value} where bytes are due: restore the database`);
}

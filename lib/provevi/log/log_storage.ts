/**
 * Where a store keeps its log, as an interface (files for the file store, tables for sqlite and Postgres), and
 * the one plan of an append that every kind follows: the leaves' hashes go into the tiles, the entries into
 * entry bundles, and a checkpoint of the new size is signed.
 * @module
 */
import { ProveviError } from "../evidence/errors.ts";
import { checkpointText } from "./checkpoint.ts";
import type { LogKey } from "./log_key.ts";
import { type CompactRange, extendRange, lastLeafProof, rangeOfEdge, rangeRoot } from "./compact_range.ts";
import { HASH_SIZE, inclusionProof, leafHash } from "./merkle.ts";
import { signNote } from "./note.ts";
import { leafBytes, type RunLeaf } from "./run_leaf.ts";
import { TILE_WIDTH, TileHashes, type TileRef } from "./tiles.ts";
import { tlogProofText } from "./tlog_proof.ts";
import { appendToEdge, type TileWrite, type TreeEdge } from "./tree_edge.ts";

/** What an append gives back: each leaf's index, the new size and the signed checkpoint. */
export interface AppendResult {
  /** The index of each leaf appended, in order (a leaf already in the log keeps its index). */
  indexes: number[];
  size: number;
  /** The new checkpoint, a signed note. */
  checkpoint: string;
}

/** A store's log: where its tiles, entries and checkpoints are kept, and its key. */
export interface LogStorage {
  /** `file`, `sqlite` or `postgres`: names the origin. */
  readonly kind: string;
  /** Where the log is, for messages. */
  readonly where: string;
  /**
   * The log's key.
   * @param options `create`: make one when there is none (only a writer does).
   * @returns The key, or null when there is none and `create` is not set.
   */
  key(options?: { create?: boolean }): Promise<LogKey | null>;
  /** The latest checkpoint (a signed note, with any cosignatures it gathered), or null for an empty log. */
  checkpoint(): Promise<string | null>;
  /** The latest checkpoint that witnesses cosigned, or null. */
  witnessed(): Promise<string | null>;
  /** The hashes of tiles (at least each one's width). */
  readTiles(tiles: readonly TileRef[]): Promise<Uint8Array[]>;
  /** The entries of entry bundle `index`, its first `width`. */
  readEntries(index: number, width: number): Promise<Uint8Array[]>;
  /** The index of a run's leaf, or null when the log has none. */
  indexOf(runId: string): Promise<number | null>;
  /** Appends leaves (a run already in the log is not appended again), durably, and signs a checkpoint. */
  append(leaves: readonly RunLeaf[]): Promise<AppendResult>;
  /** Keeps a checkpoint with the cosignatures witnesses gave it (the same text as one the log signed). */
  saveWitnessed(note: string): Promise<void>;
}

/** An entry bundle an append wrote: its index, and its entries (its width is their number). */
export interface BundleWrite {
  index: number;
  entries: Uint8Array[];
}

/** The writes of one append, planned. */
export interface AppendPlan {
  edge: TreeEdge;
  tiles: TileWrite[];
  bundles: BundleWrite[];
  checkpoint: string;
  /** The leaves' bytes, in order. */
  entries: Uint8Array[];
  /** The first new leaf's index. */
  first: number;
  /** The compact range of the tree after the append, for the next append of a writer that keeps it. */
  range: CompactRange;
  /** The tlog-proof of leaf `index` of this append against its checkpoint, from the old edge and the tiles written. */
  proofOf(index: number): string;
}

/** The largest entry an entry bundle holds (its length is a 16-bit number). */
export const MAX_ENTRY = 0xffff;

/**
 * Plans an append.
 *
 * @param state The tree's edge, the entries of its partial bundle (the last `size % 256`) and, when the caller
 *   kept it from its last append, the tree's compact range (made from the edge otherwise).
 * @param leaves The leaves to append.
 * @param key The log's key, which signs the new checkpoint.
 * @returns The tiles, bundles and checkpoint to write.
 * @throws ProveviError when a leaf is larger than an entry may be.
 */
export function planAppend(
  state: { edge: TreeEdge; partialEntries: readonly Uint8Array[]; range?: CompactRange },
  leaves: readonly RunLeaf[],
  key: LogKey,
): AppendPlan {
  const entries = leaves.map(leafBytes);
  for (const e of entries) {
    if (e.length > MAX_ENTRY) {
      throw new ProveviError(`a run's leaf of ${e.length} bytes is larger than 65,535`);
    }
  }
  const leafHashes = entries.map(leafHash);
  const { edge, tiles } = appendToEdge(state.edge, leafHashes);
  const first = state.edge.size;
  const bundles = bundlesOf(first, state.partialEntries, entries);
  // The root and the last leaf's proof come from the compact range, a few hashes a leaf; the proofs of any
  // other new leaves from the tiles (the edge before, the tiles written), whose inner levels are hashed once.
  let range = state.range ?? rangeOfEdge(state.edge);
  if (range.size !== first) throw new RangeError(`a compact range of ${range.size} for a tree of ${first}`);
  let beforeLast = range;
  for (const h of leafHashes) (beforeLast = range, range = extendRange(range, h));
  const text = checkpointText({
    origin: key.origin,
    size: edge.size,
    root: rangeRoot(range),
    extensions: [],
  });
  const checkpoint = signNote(text, [key.signer]);
  let hashes: TileHashes | null = null;
  const proofOf = (index: number) => {
    const proof = index === edge.size - 1 && leafHashes.length > 0
      ? lastLeafProof(beforeLast)
      : inclusionProof(index, edge.size, (hashes ??= tileHashesOf(state.edge, tiles)).at);
    return tlogProofText({ extra: null, index, proof, checkpoint });
  };
  return { edge, tiles, bundles, checkpoint, entries, first, range, proofOf };
}

/** The entry bundles an append writes: each one it fills, and the partial one it ends with. */
function bundlesOf(
  first: number,
  partialEntries: readonly Uint8Array[],
  entries: readonly Uint8Array[],
): BundleWrite[] {
  const bundles: BundleWrite[] = [];
  let current = [...partialEntries];
  let index = Math.floor(first / TILE_WIDTH);
  for (const e of entries) {
    current.push(e);
    if (current.length === TILE_WIDTH) {
      bundles.push({ index, entries: current });
      current = [];
      index++;
    }
  }
  if (current.length > 0 && entries.length > 0) bundles.push({ index, entries: current });
  return bundles;
}

/** The hashes of the tree after an append: the tiles it wrote, and the edge before for the rest. */
function tileHashesOf(before: TreeEdge, tiles: readonly TileWrite[]): TileHashes {
  const hashes = new TileHashes();
  for (const t of tiles) hashes.put(t.tile, t.hashes); // the wider first: a narrower one is then kept out
  before.partial.forEach((row, level) => {
    if (row.length === 0) return;
    const index = Math.floor(Math.floor(before.size / TILE_WIDTH ** level) / TILE_WIDTH);
    hashes.put({ level, index, width: row.length }, concatHashes(row));
  });
  return hashes;
}

/** Hashes one after another, as a tile holds them. */
export function concatHashes(hashes: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(hashes.length * HASH_SIZE);
  hashes.forEach((h, i) => out.set(h, i * HASH_SIZE));
  return out;
}

/**
 * The bytes of an entry bundle: each entry as a big-endian 16-bit length and its bytes.
 *
 * @param entries The entries.
 * @returns The bundle.
 */
export function bundleBytes(entries: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(entries.reduce((n, e) => n + 2 + e.length, 0));
  let at = 0;
  for (const e of entries) {
    out[at] = e.length >> 8;
    out[at + 1] = e.length & 0xff;
    out.set(e, at + 2);
    at += 2 + e.length;
  }
  return out;
}

/**
 * Reads an entry bundle.
 *
 * @param bytes The bundle.
 * @returns Its entries.
 * @throws ProveviError when a length runs past the end.
 */
export function parseBundle(bytes: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  let at = 0;
  while (at < bytes.length) {
    if (at + 2 > bytes.length) throw new ProveviError("an entry bundle ends inside a length");
    const n = (bytes[at]! << 8) | bytes[at + 1]!;
    if (at + 2 + n > bytes.length) throw new ProveviError("an entry bundle ends inside an entry");
    out.push(bytes.subarray(at + 2, at + 2 + n));
    at += 2 + n;
  }
  return out;
}

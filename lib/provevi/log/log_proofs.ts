/**
 * Proofs from a store's log: a run's inclusion proof against a checkpoint (as a C2SP tlog-proof), the
 * consistency proof between two sizes, and the tree's root at any size, each from the tiles it needs.
 * @module
 */
import { RunNotFound } from "../evidence/errors.ts";
import { ProveviError } from "../evidence/errors.ts";
import { parseCheckpoint } from "./checkpoint.ts";
import type { LogStorage } from "./log_storage.ts";
import { consistencyProof, type HashAt, inclusionProof, treeHash } from "./merkle.ts";
import { parseNote } from "./note.ts";
import { TileHashes, tilesRead } from "./tiles.ts";
import type { TlogProof } from "./tlog_proof.ts";

/**
 * Runs a computation over the tree of `size` leaves, with the tiles it reads.
 *
 * @param log The log.
 * @param size The tree's size.
 * @param compute What to compute from the hashes of complete subtrees.
 * @returns What it gives.
 */
export async function withHashes<T>(log: LogStorage, size: number, compute: (at: HashAt) => T): Promise<T> {
  const tiles = tilesRead(size, compute);
  let hashes = kept.get(log);
  if (hashes && hashes.count > KEPT_TILES) hashes.dropBelow(1);
  if (!hashes || hashes.count > KEPT_TILES) kept.set(log, hashes = new TileHashes());
  const missing = tiles.filter((t) => !hashes.has(t));
  const bytes = await log.readTiles(missing);
  missing.forEach((t, i) => hashes.put(t, bytes[i]!));
  return compute(hashes.at);
}

/**
 * The tiles read for each log, with the inner levels computed from them, kept between proofs: a tile's hashes
 * never change once the log has them (a wider tile of the same place begins with them), and every proof in a
 * large log passes through the few tiles of its upper levels, whose inner levels are then hashed once. Past
 * {@linkcode KEPT_TILES}, which bounds the memory (some 16 KiB a tile), the tiles of level 0 go (a proof reads
 * one of them, and another proof seldom the same), and when the upper ones alone are too many, all go.
 */
const kept = new WeakMap<LogStorage, TileHashes>();
const KEPT_TILES = 256;

/** The size of a checkpoint note (its signatures not checked). */
export function sizeOf(note: string): number {
  // A proof reads the same checkpoint more than once, and parsing a note is most of the cost of a small read.
  if (note !== lastNote) lastSize = parseCheckpoint(parseNote(note).text).size;
  lastNote = note;
  return lastSize;
}
let lastNote: string | null = null;
let lastSize = 0;

/**
 * A run's inclusion proof against the log's witnessed checkpoint when it covers the run, else its latest.
 *
 * @param log The store's log.
 * @param runId The run.
 * @param options `checkpoint`: the checkpoint to prove against instead.
 * @returns The proof, as a tlog-proof holds it.
 * @throws RunNotFound when the log has no leaf of the run; ProveviError when the checkpoint does not cover it.
 */
export async function proveRun(
  log: LogStorage,
  runId: string,
  options: { checkpoint?: string } = {},
): Promise<TlogProof> {
  const index = await log.indexOf(runId);
  if (index === null) {
    throw new RunNotFound(`run "${runId}" is not in the log of ${log.where}; run prove log audit to see why`);
  }
  let checkpoint = options.checkpoint;
  if (checkpoint === undefined) {
    const witnessed = await log.witnessed();
    checkpoint = witnessed !== null && sizeOf(witnessed) > index ? witnessed : (await log.checkpoint())!;
  }
  const size = sizeOf(checkpoint);
  if (index >= size) {
    throw new ProveviError(`run "${runId}" is leaf ${index}, after the checkpoint of size ${size}`);
  }
  const proof = await withHashes(log, size, (at) => inclusionProof(index, size, at));
  return { extra: null, index, proof, checkpoint };
}

/**
 * The consistency proof from the tree of `oldSize` leaves to the tree of `newSize`, with both roots.
 *
 * @param log The store's log.
 * @param oldSize The older size.
 * @param newSize The newer size, at most the latest checkpoint's.
 * @returns The proof and the roots.
 * @throws ProveviError when the sizes are not in order or past the log's size.
 */
export async function proveConsistency(
  log: LogStorage,
  oldSize: number,
  newSize: number,
): Promise<{ proof: Uint8Array[]; oldRoot: Uint8Array; newRoot: Uint8Array }> {
  const latest = await log.checkpoint();
  const size = latest === null ? 0 : sizeOf(latest);
  if (!(0 <= oldSize && oldSize <= newSize && newSize <= size)) {
    throw new ProveviError(
      `no consistency proof from size ${oldSize} to ${newSize}: the log of ${log.where} has ${size} ${
        size === 1 ? "leaf" : "leaves"
      }`,
    );
  }
  return await withHashes(log, newSize, (at) => ({
    proof: consistencyProof(oldSize, newSize, at),
    oldRoot: treeHash(oldSize, at),
    newRoot: treeHash(newSize, at),
  }));
}

/**
 * RFC 9162 (Certificate Transparency 2.0, section 2.1) Merkle tree hashing: leaf and node hashes, the root of a
 * tree, inclusion and consistency proofs, made from the hashes of complete subtrees and checked. A complete
 * subtree is named by its level and index: `(level, index)` covers the leaves `[index·2^level, (index+1)·2^level)`.
 * Sizes and indexes are JavaScript numbers (exact to 2^53), with no 32-bit bit operations.
 * @module
 */
import { createHash } from "node:crypto";
import { sha256Prefixed } from "./short_sha256.ts";

/** The size of a hash, in bytes (SHA-256). */
export const HASH_SIZE = 32;

/** The hash of a complete subtree, by its level and index. */
export type HashAt = (level: number, index: number) => Uint8Array;

/**
 * The hash of a leaf: SHA-256(0x00 || data).
 *
 * @param data The leaf's bytes.
 * @returns 32 bytes.
 * @example
 * ```ts
 * import { leafHash } from "./merkle.ts";
 * leafHash(new Uint8Array()).length; // 32
 * ```
 */
export function leafHash(data: Uint8Array): Uint8Array {
  return sha256Prefixed(0, data);
}

/**
 * The hash of an inner node: SHA-256(0x01 || left || right).
 *
 * @param left The left child's hash.
 * @param right The right child's hash.
 * @returns 32 bytes.
 */
export function nodeHash(left: Uint8Array, right: Uint8Array): Uint8Array {
  return sha256Prefixed(1, left, right);
}

/** The root of the empty tree: SHA-256 of nothing. */
export const EMPTY_ROOT: Uint8Array = new Uint8Array(createHash("sha256").digest());

/** The largest power of two below `n` (n ≥ 2). */
function split(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function isPowerOfTwo(n: number): boolean {
  return n >= 1 && 2 ** Math.round(Math.log2(n)) === n;
}

/**
 * MTH(D[lo:hi]) for a range that RFC 9162's recursion makes: its start is a multiple of the largest power of
 * two not above its length, so it splits into complete subtrees.
 *
 * @param lo The first leaf.
 * @param hi One past the last leaf (hi > lo).
 * @param at The hashes of complete subtrees.
 * @returns The range's hash.
 */
export function rangeHash(lo: number, hi: number, at: HashAt): Uint8Array {
  const n = hi - lo;
  if (n < 1) throw new RangeError(`an empty range [${lo}, ${hi}) has no hash`);
  if (isPowerOfTwo(n) && lo % n === 0) return at(Math.round(Math.log2(n)), lo / n);
  const k = split(n);
  return nodeHash(rangeHash(lo, lo + k, at), rangeHash(lo + k, hi, at));
}

/**
 * The root of a tree of `size` leaves.
 *
 * @param size The number of leaves.
 * @param at The hashes of complete subtrees.
 * @returns The root; {@linkcode EMPTY_ROOT} for size 0.
 */
export function treeHash(size: number, at: HashAt): Uint8Array {
  return size === 0 ? EMPTY_ROOT : rangeHash(0, size, at);
}

/**
 * The inclusion proof of leaf `index` in the tree of `size` leaves (RFC 9162 2.1.3.1), from the leaf's sibling
 * up to the root's child.
 *
 * @param index The leaf, below `size`.
 * @param size The tree's size.
 * @param at The hashes of complete subtrees.
 * @returns The proof's hashes.
 * @throws RangeError when the index is not in the tree.
 */
export function inclusionProof(index: number, size: number, at: HashAt): Uint8Array[] {
  if (!(Number.isSafeInteger(index) && index >= 0 && index < size)) {
    throw new RangeError(`leaf ${index} is not in a tree of size ${size}`);
  }
  const out: Uint8Array[] = [];
  const path = (m: number, lo: number, hi: number): void => {
    const n = hi - lo;
    if (n <= 1) return;
    const k = split(n);
    if (m < k) {
      path(m, lo, lo + k);
      out.push(rangeHash(lo + k, hi, at));
    } else {
      path(m - k, lo + k, hi);
      out.push(rangeHash(lo, lo + k, at));
    }
  };
  path(index, 0, size);
  return out;
}

/**
 * The consistency proof between the trees of `oldSize` and `newSize` leaves (RFC 9162 2.1.4.1). Empty when
 * `oldSize` is 0 or equals `newSize`.
 *
 * @param oldSize The older tree's size.
 * @param newSize The newer tree's size, not below `oldSize`.
 * @param at The hashes of complete subtrees.
 * @returns The proof's hashes.
 * @throws RangeError when `oldSize` is above `newSize`.
 */
export function consistencyProof(oldSize: number, newSize: number, at: HashAt): Uint8Array[] {
  if (!(oldSize >= 0 && oldSize <= newSize)) {
    throw new RangeError(`no consistency proof from size ${oldSize} to size ${newSize}`);
  }
  const out: Uint8Array[] = [];
  if (oldSize === 0 || oldSize === newSize) return out;
  const sub = (m: number, lo: number, hi: number, whole: boolean): void => {
    const n = hi - lo;
    if (m === n) {
      if (!whole) out.push(rangeHash(lo, hi, at));
      return;
    }
    const k = split(n);
    if (m <= k) {
      sub(m, lo, lo + k, whole);
      out.push(rangeHash(lo + k, hi, at));
    } else {
      sub(m - k, lo + k, hi, false);
      out.push(rangeHash(lo, lo + k, at));
    }
  };
  sub(oldSize, 0, newSize, true);
  return out;
}

/**
 * The root that an inclusion proof gives for a leaf (RFC 9162 2.1.3.2), or null when the proof has the wrong
 * length for the index and size.
 *
 * @param leaf The leaf's hash.
 * @param index The leaf's index.
 * @param size The tree's size.
 * @param proof The proof's hashes.
 * @returns The root, or null.
 */
export function rootFromInclusion(
  leaf: Uint8Array,
  index: number,
  size: number,
  proof: readonly Uint8Array[],
): Uint8Array | null {
  if (!(Number.isSafeInteger(index) && Number.isSafeInteger(size) && index >= 0 && index < size)) return null;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return null;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) [fn, sn] = [fn / 2, Math.floor(sn / 2)];
      }
    } else r = nodeHash(r, p);
    [fn, sn] = [Math.floor(fn / 2), Math.floor(sn / 2)];
  }
  return sn === 0 ? r : null;
}

/**
 * Checks an inclusion proof.
 *
 * @param leaf The leaf's hash.
 * @param index The leaf's index.
 * @param size The tree's size.
 * @param proof The proof's hashes.
 * @param root The tree's root.
 * @returns True when the proof binds the leaf at the index to the root.
 * @example
 * ```ts
 * import { leafHash, verifyInclusion } from "./merkle.ts";
 * const leaf = leafHash(new Uint8Array([1]));
 * verifyInclusion(leaf, 0, 1, [], leaf); // true
 * ```
 */
export function verifyInclusion(
  leaf: Uint8Array,
  index: number,
  size: number,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): boolean {
  const r = rootFromInclusion(leaf, index, size, proof);
  return r !== null && sameHash(r, root);
}

/**
 * Checks a consistency proof (RFC 9162 2.1.4.2): the tree of `oldSize` leaves with root `oldRoot` is a prefix
 * of the tree of `newSize` leaves with root `newRoot`.
 *
 * @returns True when the proof holds.
 */
export function verifyConsistency(
  oldSize: number,
  newSize: number,
  proof: readonly Uint8Array[],
  oldRoot: Uint8Array,
  newRoot: Uint8Array,
): boolean {
  if (
    !(Number.isSafeInteger(oldSize) && Number.isSafeInteger(newSize) && oldSize >= 0 && oldSize <= newSize)
  ) {
    return false;
  }
  if (oldSize === newSize) return proof.length === 0 && sameHash(oldRoot, newRoot);
  if (oldSize === 0) return proof.length === 0 && sameHash(oldRoot, EMPTY_ROOT);
  if (proof.length === 0) return false;
  const path = isPowerOfTwo(oldSize) ? [oldRoot, ...proof] : [...proof];
  let fn = oldSize - 1;
  let sn = newSize - 1;
  while (fn % 2 === 1) [fn, sn] = [Math.floor(fn / 2), Math.floor(sn / 2)];
  let fr = path[0]!;
  let sr = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while (fn % 2 === 0 && fn !== 0) [fn, sn] = [fn / 2, Math.floor(sn / 2)];
    } else sr = nodeHash(sr, c);
    [fn, sn] = [Math.floor(fn / 2), Math.floor(sn / 2)];
  }
  return sameHash(fr, oldRoot) && sameHash(sr, newRoot) && sn === 0;
}

/** True when two hashes are the same bytes. */
export function sameHash(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * A tree's compact range: the roots of the complete subtrees that its size's binary form splits it into,
 * largest (leftmost) first. It is all that an append needs for the new root and for the inclusion proof of the
 * last leaf, in a few hashes per leaf (a leaf's hash, and one node hash per trailing one bit of the size),
 * where the tiles' inner levels cost up to 255 hashes a tile. A writer keeps it between its appends.
 * @module
 */
import { EMPTY_ROOT, nodeHash } from "./merkle.ts";
import { edgeSubtrees, type TreeEdge } from "./tree_edge.ts";

/** The roots of a tree's complete subtrees, largest first, and the tree's size. */
export interface CompactRange {
  readonly size: number;
  readonly roots: readonly Uint8Array[];
}

/**
 * The compact range of the tree that an edge ends: the partial tiles' complete subtrees, from the top level
 * down, each hashed from its tile's hashes.
 *
 * @param edge The tree's edge.
 * @returns Its compact range.
 * @example
 * ```ts
 * import { rangeOfEdge } from "./compact_range.ts";
 * rangeOfEdge({ size: 0, partial: [] }).roots.length; // 0
 * ```
 */
export function rangeOfEdge(edge: TreeEdge): CompactRange {
  return { size: edge.size, roots: edgeSubtrees(edge) };
}

/**
 * Appends one leaf's hash: the subtrees it completes merge (one node hash per trailing one bit of the size).
 *
 * @param range The range before.
 * @param leaf The new leaf's hash.
 * @returns The range after.
 */
export function extendRange(range: CompactRange, leaf: Uint8Array): CompactRange {
  const roots = [...range.roots];
  let hash = leaf;
  for (let n = range.size; n % 2 === 1; n = Math.floor(n / 2)) hash = nodeHash(roots.pop()!, hash);
  roots.push(hash);
  return { size: range.size + 1, roots };
}

/**
 * The root of the tree: its subtrees folded from the right (RFC 9162's MTH).
 *
 * @param range The range.
 * @returns The root; the empty tree's for size 0.
 */
export function rangeRoot(range: CompactRange): Uint8Array {
  const { roots } = range;
  if (roots.length === 0) return EMPTY_ROOT;
  let root = roots[roots.length - 1]!;
  for (let i = roots.length - 2; i >= 0; i--) root = nodeHash(roots[i]!, root);
  return root;
}

/**
 * The inclusion proof of the leaf that follows a range (the last leaf of the tree one larger): the range's
 * subtrees, from the smallest, are the leaf's siblings on its way to the root (RFC 9162 2.1.3.1).
 *
 * @param before The range of the tree without the leaf.
 * @returns The proof's hashes.
 */
export function lastLeafProof(before: CompactRange): Uint8Array[] {
  return [...before.roots].reverse();
}

/**
 * The right edge of a tiled tree: for each tile level, the hashes of its partial tile. It is all an append
 * needs: new leaf hashes go into the level 0 tile, a tile that fills up is written whole and its root goes one
 * level up, and the tree's root is made from the edge alone.
 * @module
 */
import { EMPTY_ROOT, HASH_SIZE, nodeHash } from "./merkle.ts";
import { TILE_HEIGHT, TILE_WIDTH, type TileRef, tileWidth } from "./tiles.ts";

/** A tree's size and the hashes of its partial tiles, by tile level (an empty array where a level has none). */
export interface TreeEdge {
  size: number;
  partial: Uint8Array[][];
}

/** A tile an append wrote: its place and width, and its hashes. */
export interface TileWrite {
  tile: TileRef;
  hashes: Uint8Array;
}

/**
 * The partial tiles of a tree of `size` leaves, which make its edge.
 *
 * @param size The tree's size.
 * @returns One tile per level that has a partial one.
 */
export function edgeTiles(size: number): TileRef[] {
  const out: TileRef[] = [];
  for (let level = 0; TILE_WIDTH ** level <= size; level++) {
    const index = Math.floor(size / TILE_WIDTH ** (level + 1));
    const width = tileWidth(size, level, index);
    if (width > 0 && width < TILE_WIDTH) out.push({ level, index, width });
  }
  return out;
}

/**
 * Makes an edge from the partial tiles that {@linkcode edgeTiles} names.
 *
 * @param size The tree's size.
 * @param read The hashes of a tile (at least its width).
 * @returns The edge.
 */
export function edgeOf(size: number, read: (tile: TileRef) => Uint8Array): TreeEdge {
  const partial: Uint8Array[][] = [];
  for (const tile of edgeTiles(size)) {
    const bytes = read(tile);
    const hashes: Uint8Array[] = [];
    for (let i = 0; i < tile.width; i++) hashes.push(bytes.slice(i * HASH_SIZE, (i + 1) * HASH_SIZE));
    partial[tile.level] = hashes;
  }
  for (let level = 0; level < partial.length; level++) partial[level] ??= [];
  return { size, partial };
}

/** The root of a full tile's hashes, or of any power of two of hashes. */
function perfectRoot(hashes: readonly Uint8Array[]): Uint8Array {
  let row = hashes;
  while (row.length > 1) {
    const next: Uint8Array[] = [];
    for (let i = 0; i < row.length; i += 2) next.push(nodeHash(row[i]!, row[i + 1]!));
    row = next;
  }
  return row[0]!;
}

/**
 * Appends leaf hashes to a tree.
 *
 * @param edge The tree's edge before.
 * @param leaves The new leaves' hashes, in order.
 * @returns The edge after, and every tile that changed, at its new width (full tiles at 256).
 * @example
 * ```ts
 * import { appendToEdge, edgeRoot } from "./tree_edge.ts";
 * import { leafHash } from "./merkle.ts";
 * const { edge } = appendToEdge({ size: 0, partial: [] }, [leafHash(new Uint8Array([1]))]);
 * edgeRoot(edge); // the leaf's hash
 * ```
 */
export function appendToEdge(
  edge: TreeEdge,
  leaves: readonly Uint8Array[],
): { edge: TreeEdge; tiles: TileWrite[] } {
  const partial = edge.partial.map((p) => [...p]);
  const counts: number[] = [];
  const touched = new Set<number>();
  const full: TileWrite[] = [];
  const count = (level: number) => counts[level] ??= Math.floor(edge.size / TILE_WIDTH ** level);
  const push = (level: number, hash: Uint8Array): void => {
    const row = partial[level] ??= [];
    row.push(hash);
    counts[level] = count(level) + 1;
    touched.add(level);
    if (row.length === TILE_WIDTH) {
      const index = counts[level]! / TILE_WIDTH - 1;
      full.push({ tile: { level, index, width: TILE_WIDTH }, hashes: concat(row) });
      partial[level] = [];
      push(level + 1, perfectRoot(row));
    }
  };
  for (const leaf of leaves) push(0, leaf);
  const size = edge.size + leaves.length;
  const tiles = [...full];
  for (const level of [...touched].sort((a, b) => a - b)) {
    const row = partial[level]!;
    if (row.length === 0) continue;
    tiles.push({
      tile: { level, index: Math.floor(count(level) / TILE_WIDTH), width: row.length },
      hashes: concat(row),
    });
  }
  for (let level = 0; level < partial.length; level++) partial[level] ??= [];
  return { edge: { size, partial }, tiles };
}

/**
 * The root of the tree an edge ends: the complete subtrees of the size's binary form, from the largest, each
 * made from its partial tile, folded from the right.
 *
 * @param edge The edge.
 * @returns The root.
 */
export function edgeRoot(edge: TreeEdge): Uint8Array {
  const subtrees = edgeSubtrees(edge);
  if (subtrees.length === 0) return EMPTY_ROOT;
  let root = subtrees[subtrees.length - 1]!;
  for (let i = subtrees.length - 2; i >= 0; i--) root = nodeHash(subtrees[i]!, root);
  return root;
}

/**
 * The roots of the complete subtrees of the tree an edge ends, largest (leftmost) first: its partial tiles'
 * power-of-two runs, from the top level down (the tree's compact range).
 *
 * @param edge The edge.
 * @returns The subtrees' roots.
 */
export function edgeSubtrees(edge: TreeEdge): Uint8Array[] {
  const subtrees: Uint8Array[] = [];
  for (let level = edge.partial.length - 1; level >= 0; level--) {
    const row = edge.partial[level] ?? [];
    let at = 0;
    for (let bit = TILE_HEIGHT - 1; bit >= 0; bit--) {
      const n = 2 ** bit;
      if (row.length & n) {
        subtrees.push(perfectRoot(row.slice(at, at + n)));
        at += n;
      }
    }
  }
  return subtrees;
}

function concat(hashes: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(hashes.length * HASH_SIZE);
  hashes.forEach((h, i) => out.set(h, i * HASH_SIZE));
  return out;
}

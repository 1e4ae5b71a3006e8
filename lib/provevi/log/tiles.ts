/**
 * C2SP tlog-tiles: the tree as tiles of 256 hashes of height 8. Tile `(level, index)` holds the hashes of tree
 * level `8·level`, from `index·256`; a partial tile (the right edge) holds fewer. This module names tiles and
 * their paths (`tile/<L>/<N>[.p/<W>]`, `tile/entries/<N>[.p/<W>]`), finds which tiles a computation reads, and
 * gives the hash of any complete subtree from the tiles, each tile's inner levels computed once.
 * @module
 */
import { HASH_SIZE, type HashAt, nodeHash } from "./merkle.ts";

/** Hashes in a full tile. */
export const TILE_WIDTH = 256;
/** Levels of the tree in one tile. */
export const TILE_HEIGHT = 8;

/** One tile: its level, index and width (1 to 256; 256 is a full tile). */
export interface TileRef {
  level: number;
  index: number;
  width: number;
}

/**
 * The path of a tile's index: zero-padded groups of three digits, all but the last with an `x` (C2SP).
 *
 * @param index The tile's index.
 * @returns Such as `x001/x234/067`.
 * @example
 * ```ts
 * import { tileIndexPath } from "./tiles.ts";
 * tileIndexPath(1234067); // "x001/x234/067"
 * ```
 */
export function tileIndexPath(index: number): string {
  let n = index;
  const parts = [String(n % 1000).padStart(3, "0")];
  n = Math.floor(n / 1000);
  while (n > 0) {
    parts.unshift(`x${String(n % 1000).padStart(3, "0")}`);
    n = Math.floor(n / 1000);
  }
  return parts.join("/");
}

/**
 * The path of a hash tile under the log's prefix.
 *
 * @param tile The tile.
 * @returns `tile/<L>/<N>` for a full tile, `tile/<L>/<N>.p/<W>` for a partial one.
 */
export function tilePath(tile: TileRef): string {
  return `tile/${tile.level}/${tileIndexPath(tile.index)}${
    tile.width < TILE_WIDTH ? `.p/${tile.width}` : ""
  }`;
}

/**
 * The path of an entry bundle under the log's prefix.
 *
 * @param index The bundle's index (the level 0 tile's).
 * @param width The number of entries, 256 for a full bundle.
 * @returns `tile/entries/<N>` or `tile/entries/<N>.p/<W>`.
 */
export function entriesPath(index: number, width: number): string {
  return `tile/entries/${tileIndexPath(index)}${width < TILE_WIDTH ? `.p/${width}` : ""}`;
}

/**
 * The width of tile `(level, index)` in a tree of `size` leaves: 256 when full, less on the right edge, 0 when
 * the tree does not reach it.
 */
export function tileWidth(size: number, level: number, index: number): number {
  const count = Math.floor(size / TILE_WIDTH ** level); // hashes at this tile level
  return Math.max(0, Math.min(TILE_WIDTH, count - index * TILE_WIDTH));
}

/** Where the hash of a complete subtree lies: its tile, and the tile's hashes it is made of. */
function placeOf(
  level: number,
  index: number,
): { tileLevel: number; tile: number; first: number; count: number } {
  const tileLevel = Math.floor(level / TILE_HEIGHT);
  const count = 2 ** (level % TILE_HEIGHT);
  const start = index * count; // the first hash at the tile level
  return { tileLevel, tile: Math.floor(start / TILE_WIDTH), first: start % TILE_WIDTH, count };
}

/**
 * The tiles that a computation over the tree of `size` leaves reads: the computation is run once with stand-in
 * hashes, which do not change which subtrees it asks for.
 *
 * @param size The tree's size.
 * @param compute A computation that asks `at` for hashes.
 * @returns The tiles, each at its width for the size.
 */
export function tilesRead(size: number, compute: (at: HashAt) => unknown): TileRef[] {
  const seen = new Map<string, TileRef>();
  const blank = new Uint8Array(HASH_SIZE);
  compute((level, index) => {
    const p = placeOf(level, index);
    const key = `${p.tileLevel}/${p.tile}`;
    if (!seen.has(key)) {
      seen.set(key, { level: p.tileLevel, index: p.tile, width: tileWidth(size, p.tileLevel, p.tile) });
    }
    return blank;
  });
  return [...seen.values()];
}

/**
 * The hashes of complete subtrees, from tiles: a tile's inner levels are computed once and kept.
 *
 * @example
 * ```ts
 * import { TileHashes } from "./tiles.ts";
 * import { treeHash } from "./merkle.ts";
 * const hashes = new TileHashes();
 * hashes.put({ level: 0, index: 0, width: 1 }, new Uint8Array(32));
 * treeHash(1, hashes.at); // the one leaf hash
 * ```
 */
export class TileHashes {
  readonly #tiles = new Map<string, Uint8Array[][]>(); // by "L/N": the tile's levels, 0 (its hashes) to 8

  /**
   * Adds a tile's hashes (at least `width` of them; more are the prefix of a wider tile, and are kept).
   *
   * @param tile The tile.
   * @param bytes Its hashes, concatenated.
   * @throws RangeError when the bytes are fewer than the width says.
   */
  put(tile: TileRef, bytes: Uint8Array): void {
    if (bytes.length < tile.width * HASH_SIZE || bytes.length % HASH_SIZE !== 0) {
      throw new RangeError(`tile ${tilePath(tile)} has ${bytes.length} bytes, not ${tile.width} hashes`);
    }
    const key = `${tile.level}/${tile.index}`;
    const known = this.#tiles.get(key);
    const n = bytes.length / HASH_SIZE;
    if (known && known[0]!.length >= n) return;
    const base: Uint8Array[] = [];
    for (let i = 0; i < n; i++) base.push(bytes.subarray(i * HASH_SIZE, (i + 1) * HASH_SIZE));
    this.#tiles.set(key, [base]);
  }

  /** The number of tiles held. */
  get count(): number {
    return this.#tiles.size;
  }

  /**
   * Forgets the tiles below a level (a cache keeps the few upper tiles that every proof passes through).
   *
   * @param level The lowest tile level kept.
   */
  dropBelow(level: number): void {
    for (const key of [...this.#tiles.keys()]) {
      if (Number(key.slice(0, key.indexOf("/"))) < level) this.#tiles.delete(key);
    }
  }

  /** True when the tile is here with at least `width` hashes. */
  has(tile: TileRef): boolean {
    const known = this.#tiles.get(`${tile.level}/${tile.index}`);
    return known !== undefined && known[0]!.length >= tile.width;
  }

  /** The hash of complete subtree `(level, index)`. */
  readonly at: HashAt = (level, index) => {
    const p = placeOf(level, index);
    const levels = this.#tiles.get(`${p.tileLevel}/${p.tile}`);
    if (!levels) throw new RangeError(`tile ${p.tileLevel}/${p.tile} was not read`);
    const inner = level % TILE_HEIGHT;
    const at = p.first >> inner;
    for (let l = levels.length; l <= inner; l++) {
      const below = levels[l - 1]!;
      const row: Uint8Array[] = [];
      for (let i = 0; i + 1 < below.length; i += 2) row.push(nodeHash(below[i]!, below[i + 1]!));
      levels.push(row);
    }
    const hash = levels[inner]![at];
    if (!hash) {
      throw new RangeError(`tile ${p.tileLevel}/${p.tile} is too narrow for subtree ${level}/${index}`);
    }
    return hash;
  };
}

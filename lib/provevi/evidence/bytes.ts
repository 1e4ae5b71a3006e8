/**
 * Bytes that arrive in pieces (a file read block by block, a stream's chunks, a pipe's output) joined into one
 * array. The readers of evidence, the viewer's request bodies, the sandbox's pipes and the model gateway's
 * streams all join through it.
 * @module
 */

/**
 * The pieces as one new array, in order.
 *
 * @param chunks The pieces.
 * @returns A new array that holds their bytes one after the other.
 * @example
 * ```ts
 * import { concatBytes } from "./bytes.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(concatBytes([new Uint8Array([1, 2]), new Uint8Array([3])]), new Uint8Array([1, 2, 3]));
 * ```
 */
export function concatBytes(chunks: readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  let size = 0;
  for (const c of chunks) size += c.byteLength;
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

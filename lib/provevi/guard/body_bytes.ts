/**
 * Keeping the chunks of a body without keeping the buffers they came in. Deno gives each chunk of a request's
 * body, a fetch answer's body or a pipe in a buffer of its own of 64 KiB, whatever the chunk's size: a peer that
 * sends a byte at a time (one TCP segment each) makes every byte kept hold 64 KiB, so a body of 64 KiB read ahead
 * or collected held 4 GiB. Whatever keeps chunks of bytes a peer sends (a read-ahead, a collected body, a stream
 * handed on to a reader that collects) takes them through {@linkcode ownChunk}.
 * @module
 */

/**
 * A chunk that holds no more memory than twice its size: the chunk itself, or a copy of its bytes when it is a
 * view of a larger buffer.
 *
 * @param chunk A chunk as a stream gave it.
 * @returns The chunk, or a copy of it.
 * @example
 * ```ts
 * import { ownChunk } from "./body_bytes.ts";
 * const read = new Uint8Array(65536).subarray(0, 1);
 * ownChunk(read).buffer.byteLength; // 1
 * ```
 */
export function ownChunk(chunk: Uint8Array): Uint8Array {
  return chunk.byteLength * 2 >= chunk.buffer.byteLength ? chunk : chunk.slice();
}

/**
 * Reads a stream of bytes whole, at most `max` bytes, holding each chunk at its own size.
 *
 * @param stream The body, or a reader of it (the door's `bodyReader`).
 * @param options `max`, the most bytes taken, and `tooLarge`, the error thrown past it (the stream is cancelled);
 * `declared`, the length the request declared (`Content-Length`), which bounds the body: it is read into one
 * array of that length, and a body that runs past it fails.
 * @returns The bytes.
 * @throws The error of `tooLarge`, or the stream's own error.
 * @example
 * ```ts
 * import { readBytesCapped } from "./body_bytes.ts";
 * const bytes = await readBytesCapped(new Blob(["abc"]).stream(), { max: 10, tooLarge: () => new Error("big") });
 * bytes.length; // 3
 * ```
 */
export async function readBytesCapped(
  stream:
    | ReadableStream<Uint8Array>
    | Pick<ReadableStreamDefaultReader<Uint8Array>, "read" | "cancel" | "releaseLock">,
  options: { max: number; tooLarge: (size: number) => Error; declared?: number },
): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = stream instanceof ReadableStream ? stream.getReader() : stream;
  // a length the request declared, within the cap: the bytes go straight to their place, with no copy to join
  const declared = options.declared ?? NaN;
  const whole = Number.isSafeInteger(declared) && declared >= 0 && declared <= options.max
    ? new Uint8Array(declared)
    : null;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > options.max) throw options.tooLarge(size);
      if (whole === null) chunks.push(ownChunk(value));
      else if (size <= whole.length) whole.set(value, size - value.byteLength);
      else throw new RangeError(`the body runs past the ${whole.length} bytes its request declared`);
    }
  } catch (error) {
    await reader.cancel(error).catch(() => {});
    throw error;
  } finally {
    reader.releaseLock();
  }
  return whole !== null ? whole.subarray(0, size) : joinChunks(chunks, size);
}

/**
 * The chunks as one array (the chunk itself when there is one).
 *
 * @param chunks The chunks.
 * @param size Their total size.
 * @returns The bytes.
 */
export function joinChunks(chunks: readonly Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

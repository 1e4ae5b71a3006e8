/**
 * Reading a body whose chunks are kept (a provider's answer for the record, a request's body until it is whole)
 * without keeping a read's buffer with each. A fetch body's own reader, and a request's, give each chunk in a
 * fresh 64 KiB buffer, allocated and zeroed for every read, and a kept chunk of a few bytes holds that buffer
 * whole: 2,000 tiny chunks held 128 MiB until the call ended, and a peer that sends a byte at a time would make
 * the gateway hold 64 KiB per byte. So a body of bytes is read into one buffer, used again for each read, and
 * each chunk is copied out at its own size.
 * @module
 */

import { ownChunk } from "../../provevi/guard/mod.ts";

/** The buffer each read fills: as much as a fetch body gives at once. */
const READ_BYTES = 64 * 1024;

/**
 * Reads a body into one buffer used again for each read, each chunk given in an array of its own; a stream that
 * is not of bytes (a `fetch` given to the gateway may answer with one, a decompression gives one) with its own
 * reader, each chunk that is a view of a buffer over twice its size copied (`ownChunk`, as every door's reader does).
 */
export class BodyReader {
  readonly #byob: ReadableStreamBYOBReader | null;
  readonly #plain: ReadableStreamDefaultReader<Uint8Array> | null;
  #buffer: ArrayBuffer | null = null;

  /** @param body The stream to read. */
  constructor(body: ReadableStream<Uint8Array>) {
    let byob: ReadableStreamBYOBReader | null = null;
    try {
      byob = body.getReader({ mode: "byob" });
    } catch { /* a stream of chunks, not of bytes (a `fetch` given to the gateway may answer with one) */ }
    this.#byob = byob;
    this.#plain = byob ? null : body.getReader();
  }

  /** The next chunk, in an array of its own, or null at the end. */
  async read(): Promise<Uint8Array | null> {
    if (this.#plain) {
      const step = await this.#plain.read();
      if (step.done) return null;
      return ownChunk(step.value);
    }
    const step = await this.#byob!.read(new Uint8Array(this.#buffer ?? new ArrayBuffer(READ_BYTES)));
    if (step.value) this.#buffer = step.value.buffer as ArrayBuffer; // given back by the read, for the next one
    if (step.done) return null;
    return step.value.slice();
  }

  /** Stops reading: the stream is cancelled. */
  async cancel(reason: unknown): Promise<void> {
    await (this.#byob ?? this.#plain)!.cancel(reason);
  }
}

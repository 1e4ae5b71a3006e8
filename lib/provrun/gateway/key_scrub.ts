/**
 * The real key, kept out of whatever comes back from the provider. A provider, a proxy in front of it or an
 * `openai-compatible` server may echo the request's credentials (an error that quotes the `x-api-key` or the
 * `Authorization` header, a header that repeats it, a model told to say it): the program holds only the run's
 * token and the evidence never holds the key, so every byte, header and message that comes back has each copy of
 * the key replaced before it goes on or is recorded. A stream is scrubbed as it arrives: the end of a chunk that
 * could be the start of the key waits for the next chunk, and nothing else is held back.
 * @module
 */
import { Buffer } from "node:buffer";
import type { Json } from "../../provevi/mod.ts";
import type { StreamAssembly } from "./provider_api.ts";

/** What stands in for the key where a provider echoed it. */
export const KEY_REMOVED = "[key removed by provr]";

/** Keys shorter than this are not looked for: replacing them would cut ordinary text. */
const SHORTEST_KEY = 8;

/** Replaces the key in a provider's bytes, whole or as a stream of chunks. */
export class KeyScrubber {
  readonly #key: Buffer | null;
  readonly #text: string | null;
  readonly #removed = Buffer.from(KEY_REMOVED);
  #held: Buffer = Buffer.alloc(0);

  /** @param key The real key, or null when the provider takes none. */
  constructor(key: string | null) {
    this.#text = key !== null && key.trim().length >= SHORTEST_KEY ? key.trim() : null;
    this.#key = this.#text === null ? null : Buffer.from(this.#text);
  }

  /** A text (a message, a header's value) with each copy of the key replaced. */
  text(text: string): string {
    return this.#text === null ? text : text.replaceAll(this.#text, KEY_REMOVED);
  }

  /**
   * A stream's reassembly whose response and error are scrubbed: joining the stream's deltas can make whole a
   * key that no chunk held.
   */
  assembly(assembly: StreamAssembly): StreamAssembly {
    if (this.#text === null) return assembly;
    return {
      take: (event) => assembly.take(event),
      body: () => JSON.parse(this.text(JSON.stringify(assembly.body()))) as Json,
      error: () => {
        const said = assembly.error();
        return said === null ? null : this.text(said);
      },
      complete: () => assembly.complete(),
    };
  }

  /** The headers less any whose value holds the key. */
  headers(headers: Headers): Headers {
    if (this.#text === null) return headers;
    for (const [name, value] of [...headers]) if (value.includes(this.#text)) headers.delete(name);
    return headers;
  }

  /** Whole bytes, with each copy of the key replaced (a scrubber of its own: none is held back). */
  bytes(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
    const other = new KeyScrubber(this.#text);
    const head = other.push(bytes);
    const tail = other.end();
    return tail.byteLength === 0 ? head : Buffer.concat([head, tail]) as Uint8Array<ArrayBuffer>;
  }

  /**
   * The next chunk of a stream: what of it can go on now, with each copy of the key replaced. Its last bytes
   * wait for the next chunk only when they could be the start of the key.
   */
  push(chunk: Uint8Array): Uint8Array<ArrayBuffer> {
    const key = this.#key;
    if (key === null) return chunk as Uint8Array<ArrayBuffer>;
    const all = this.#held.byteLength ? Buffer.concat([this.#held, chunk]) : Buffer.from(chunk);
    const parts: Buffer[] = [];
    let from = 0;
    for (let at = all.indexOf(key); at !== -1; at = all.indexOf(key, from)) {
      parts.push(all.subarray(from, at), this.#removed);
      from = at + key.byteLength;
    }
    const keep = this.#startOfKey(all, from);
    parts.push(all.subarray(from, all.byteLength - keep));
    this.#held = Buffer.from(all.subarray(all.byteLength - keep));
    return Buffer.concat(parts) as Uint8Array<ArrayBuffer>;
  }

  /** The bytes held back at the stream's end (they were not the key). */
  end(): Uint8Array<ArrayBuffer> {
    const held = this.#held;
    this.#held = Buffer.alloc(0);
    return held as Uint8Array<ArrayBuffer>;
  }

  /** How many of the last bytes (from `from` on) are a proper start of the key. */
  #startOfKey(all: Buffer, from: number): number {
    const key = this.#key!;
    for (let n = Math.min(key.byteLength - 1, all.byteLength - from); n > 0; n--) {
      if (all.subarray(all.byteLength - n).equals(key.subarray(0, n))) return n;
    }
    return 0;
  }
}

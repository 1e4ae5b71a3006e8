/**
 * The real key, kept out of whatever comes back from the provider. A provider, a proxy in front of it or an
 * `openai-compatible` server may echo the request's credentials (an error that quotes the `x-api-key` or the
 * `Authorization` header, a header that repeats it, a model told to say it): the program holds only the run's
 * token and the evidence never holds the key, so every byte, header and message that comes back has each copy of
 * the key replaced before it goes on or is recorded. A stream is scrubbed as it arrives: the end of a chunk that
 * could be the start of the key waits for the next chunk, and nothing else is held back.
 * @module
 */
import type { Json } from "../../provevi/mod.ts";
import type { StreamAssembly } from "./provider_api.ts";
import { concatBytes } from "../../provevi/evidence/bytes.ts";

/** What stands in for the key where a provider echoed it. */
export const KEY_REMOVED = "[key removed by provr]";

const EMPTY = new Uint8Array(0);

/** Keys shorter than this are not looked for: replacing them would cut ordinary text. */
const SHORTEST_KEY = 8;

/** Replaces the key in a provider's bytes, whole or as a stream of chunks. */
export class KeyScrubber {
  readonly #key: Uint8Array | null;
  readonly #text: string | null;
  readonly #removed = new TextEncoder().encode(KEY_REMOVED);
  #held: Uint8Array = EMPTY;

  /** @param key The real key, or null when the provider takes none. */
  constructor(key: string | null) {
    this.#text = key !== null && key.trim().length >= SHORTEST_KEY ? key.trim() : null;
    this.#key = this.#text === null ? null : new TextEncoder().encode(this.#text);
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

  /** True when a text (a header's value) holds the key: the gateway then leaves it out. */
  holds(text: string): boolean {
    return this.#text !== null && text.includes(this.#text);
  }

  /**
   * The next chunk of a stream: what of it can go on now, with each copy of the key replaced. Its last bytes
   * wait for the next chunk only when they could be the start of the key. A chunk without the key, nor the start
   * of one at its end, goes on as it came (no copy).
   */
  push(chunk: Uint8Array): Uint8Array<ArrayBuffer> {
    const key = this.#key;
    if (key === null) return chunk as Uint8Array<ArrayBuffer>;
    const all = this.#held.byteLength ? concatBytes([this.#held, chunk]) : chunk;
    const parts: Uint8Array[] = [];
    let from = 0;
    for (let at = find(all, key, 0); at !== -1; at = find(all, key, from)) {
      parts.push(all.subarray(from, at), this.#removed);
      from = at + key.byteLength;
    }
    const keep = startOfKey(all, from, key);
    this.#held = keep === 0 ? EMPTY : all.slice(all.byteLength - keep);
    if (parts.length === 0 && keep === 0) return all as Uint8Array<ArrayBuffer>;
    parts.push(all.subarray(from, all.byteLength - keep));
    return concatBytes(parts);
  }

  /** The bytes held back at the stream's end (they were not the key). */
  end(): Uint8Array<ArrayBuffer> {
    const held = this.#held;
    this.#held = EMPTY;
    return held as Uint8Array<ArrayBuffer>;
  }
}

/** Where the key starts in the bytes, from an offset on, or -1. */
function find(bytes: Uint8Array, key: Uint8Array, from: number): number {
  const last = bytes.byteLength - key.byteLength;
  for (let at = bytes.indexOf(key[0]!, from); at !== -1 && at <= last; at = bytes.indexOf(key[0]!, at + 1)) {
    let i = 1;
    while (i < key.byteLength && bytes[at + i] === key[i]) i++;
    if (i === key.byteLength) return at;
  }
  return -1;
}

/** How many of the last bytes (from `from` on) are a proper start of the key. */
function startOfKey(bytes: Uint8Array, from: number, key: Uint8Array): number {
  const end = bytes.byteLength;
  for (let at = Math.max(from, end - key.byteLength + 1); at < end; at++) {
    if (bytes[at] !== key[0]) continue;
    let i = 1;
    while (at + i < end && bytes[at + i] === key[i]) i++;
    if (at + i === end) return end - at;
  }
  return 0;
}

/**
 * A provider's stream as the gateway reads it for the record, off the way of the program's tokens. Each chunk
 * goes on to the program at once (scrubbed of the key), and the call's event must be written before the chunk
 * that ends the call goes on. Reading a chunk (its events parsed, their JSON reassembled) is work on the one
 * thread that also writes the chunk to the program; so a chunk that cannot end the call goes on unread, and is
 * read when the next one comes, or the stream ends or breaks. A chunk cannot end the call when the reading is
 * between two events (every event it completes lies within it) and it holds none of the API's end markers (its
 * `endMarkers`: each text that an event ending a stream must hold, and `\u` for a JSON escape that could spell
 * one). Any other chunk is read at once. The events are read in the order they came either way.
 * @module
 */
import type { KeyScrubber } from "./key_scrub.ts";
import type { ProviderApi, StreamAssembly } from "./provider_api.ts";
import { SseParser } from "./sse.ts";

/** ASCII markers are looked for in a chunk's text; a character cut at its end cannot make or hide one. */
const decoder = new TextDecoder();

/** The reading of one stream: its parser and reassembly, made at the first chunk read. */
export class StreamReading {
  readonly #api: ProviderApi;
  readonly #scrub: KeyScrubber;
  #parser: SseParser | null = null;
  #assembly: StreamAssembly | null = null;
  readonly #unread: Uint8Array[] = [];

  /**
   * @param api The API whose events the stream carries.
   * @param scrub Takes the key out of the reassembled response and error.
   */
  constructor(api: ProviderApi, scrub: KeyScrubber) {
    this.#api = api;
    this.#scrub = scrub;
  }

  /**
   * Takes the next chunk of the stream.
   *
   * @param chunk The chunk, as it goes on to the program.
   * @returns True when it was read (it may have ended the call: see {@linkcode assembly}); false when it cannot
   *   end the call and was left to read later.
   */
  take(chunk: Uint8Array): boolean {
    this.catchUp();
    if ((this.#parser?.idle ?? true) && !this.#mayEnd(chunk)) {
      this.#unread.push(chunk);
      return false;
    }
    this.#read(chunk);
    return true;
  }

  /** Reads the chunks left unread. */
  catchUp(): void {
    while (this.#unread.length) this.#read(this.#unread.shift()!);
  }

  /** Reads what is left: the stream ended. */
  end(): void {
    this.catchUp();
    if (this.#parser === null) return;
    for (const e of this.#parser.end()) this.#assembly!.take(e);
  }

  /** The reassembly of every chunk taken so far (each unread one is read first). */
  get assembly(): StreamAssembly {
    this.catchUp();
    return this.#assembly ??= this.#scrub.assembly(this.#api.assemble());
  }

  #read(chunk: Uint8Array): void {
    const parser = this.#parser ??= new SseParser();
    const assembly = this.#assembly ??= this.#scrub.assembly(this.#api.assemble());
    for (const e of parser.push(chunk)) assembly.take(e);
  }

  #mayEnd(chunk: Uint8Array): boolean {
    const text = decoder.decode(chunk);
    return this.#api.endMarkers.some((marker) => text.includes(marker));
  }
}

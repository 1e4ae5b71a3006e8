/**
 * A provider's answer as the gateway reads it: chunk by chunk, each counted against the run's limit, scrubbed of
 * the key and kept for the record, and the call's wait moved on by each. A fetch body's own reader gives each
 * chunk in a fresh 64 KiB buffer, allocated and zeroed for every read, and a kept chunk of a few bytes holds its
 * buffer whole: 200 events of a stream held 13 MB, and a provider that sends a byte at a time would make the
 * gateway hold 64 KiB per byte. So the answer is read into one buffer of the call's, used again for each read,
 * and each chunk is kept in an array of its own size (`body_reader.ts`).
 * @module
 */
import { PayloadTooLarge } from "../run/errors.ts";
import type { CallWait } from "./call_watch.ts";
import type { KeyScrubber } from "./key_scrub.ts";
import { BodyReader } from "./body_reader.ts";
import { concatBytes } from "../../provevi/evidence/bytes.ts";

/**
 * The error of an answer past the run's limit.
 *
 * @param limit The limit, in bytes.
 * @param size How much was seen or declared, in words.
 * @returns The error, which names the setting to raise.
 */
export function tooLarge(limit: number, size: string): PayloadTooLarge {
  return new PayloadTooLarge(
    `the model's response passed ${limit} bytes (${size}); it was cut and refused: raise ` +
      `agent.limits.model_bytes if the model should answer with that much`,
  );
}

/** The provider's answer as it is read: its reader, its wait, and its bytes counted against the limit. */
export class Answer {
  /** The chunks kept so far, scrubbed of the key. */
  readonly chunks: Uint8Array[] = [];
  /** The bytes read so far, as the provider sent them. */
  size = 0;
  readonly #reader: BodyReader;
  readonly #controller: AbortController;
  readonly #watch: CallWait;
  readonly #limit: number;
  readonly #scrub: KeyScrubber;

  /**
   * @param response The provider's response, whose body is read.
   * @param call The call's controller (its abort's reason is why a read failed), wait, limit and scrubber.
   */
  constructor(
    response: Response,
    call: { controller: AbortController; watch: CallWait; limit: number; scrub: KeyScrubber },
  ) {
    this.#reader = new BodyReader(response.body ?? new Blob().stream());
    this.#controller = call.controller;
    this.#watch = call.watch;
    this.#limit = call.limit;
    this.#scrub = call.scrub;
  }

  /** The next chunk, or null at the end; throws why the answer was cut (silence, size, the connection). */
  async next(): Promise<Uint8Array | null> {
    let chunk: Uint8Array | null;
    try {
      chunk = await this.#reader.read();
    } catch (error) {
      throw this.#controller.signal.reason instanceof Error ? this.#controller.signal.reason : error;
    }
    if (chunk === null) {
      this.#watch.stop();
      const tail = this.#scrub.end();
      if (tail.byteLength === 0) return null;
      this.chunks.push(tail);
      return tail;
    }
    this.#watch.touch();
    this.size += chunk.byteLength;
    if (this.size > this.#limit) throw tooLarge(this.#limit, `at least ${this.size} bytes`);
    const value = this.#scrub.push(chunk);
    this.chunks.push(value);
    return value;
  }

  /** Stops reading: the provider's connection is closed. */
  async cancel(reason: unknown): Promise<void> {
    this.#watch.stop();
    this.#controller.abort(reason);
    await this.#reader.cancel(reason).catch(() => {});
  }

  /** The bytes kept so far (all that arrived within the limit), as one array. */
  bytes(): Uint8Array<ArrayBuffer> {
    return concatBytes(this.chunks);
  }
}

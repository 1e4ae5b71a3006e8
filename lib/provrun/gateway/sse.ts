/**
 * Server-sent events read as they arrive: the gateway passes each chunk of a provider's stream on to the program
 * at once, and feeds the same bytes here to reassemble the response it records. Lines end with LF, CRLF or CR;
 * an event ends at a blank line; `data:` lines join with LF; comments (`:`) are skipped (WHATWG HTML, "Server-sent
 * events", the event stream's interpretation).
 * @module
 */

/** One event of a stream: its name (`message` when the stream names none) and its data. */
export interface SseEvent {
  event: string;
  data: string;
}

/**
 * An incremental parser of an event stream.
 *
 * @example
 * ```ts
 * import { SseParser } from "./sse.ts";
 * const parser = new SseParser();
 * const events = parser.push(new TextEncoder().encode("event: ping\ndata: {}\n\n"));
 * events[0]; // { event: "ping", data: "{}" }
 * ```
 */
export class SseParser {
  readonly #decoder = new TextDecoder();
  #rest = "";
  #event = "";
  #data: string[] = [];
  #lastCr = false;

  /**
   * Takes the next bytes of the stream.
   *
   * @param chunk The bytes, as they arrived.
   * @returns The events they complete, in order.
   */
  push(chunk: Uint8Array): SseEvent[] {
    let text = this.#decoder.decode(chunk, { stream: true });
    // A CR at the end of the last chunk and an LF at the start of this one are one line end.
    if (this.#lastCr && text.startsWith("\n")) text = text.slice(1);
    this.#lastCr = text.endsWith("\r");
    return this.#lines(this.#rest + text);
  }

  /** True between two events: no line nor event begun and not ended. */
  get idle(): boolean {
    return this.#rest === "" && this.#event === "" && this.#data.length === 0;
  }

  /**
   * Ends the stream: an event not yet ended by a blank line is dropped, as the standard says.
   *
   * @returns Nothing more: a stream that stops mid-event loses that event.
   */
  end(): SseEvent[] {
    this.#rest = "";
    this.#event = "";
    this.#data = [];
    return [];
  }

  #lines(text: string): SseEvent[] {
    const out: SseEvent[] = [];
    let start = 0;
    // The next LF and the next CR, each looked for again only once passed: no pattern made for each line.
    let lf = text.indexOf("\n");
    let cr = text.indexOf("\r");
    for (;;) {
      if (lf !== -1 && lf < start) lf = text.indexOf("\n", start);
      if (cr !== -1 && cr < start) cr = text.indexOf("\r", start);
      const end = cr === -1 ? lf : lf === -1 ? cr : Math.min(cr, lf);
      if (end === -1) break;
      const line = text.slice(start, end);
      start = end + (end === cr && lf === end + 1 ? 2 : 1);
      const event = this.#line(line);
      if (event) out.push(event);
    }
    this.#rest = text.slice(start);
    return out;
  }

  #line(line: string): SseEvent | null {
    if (line === "") {
      if (this.#data.length === 0) {
        this.#event = "";
        return null;
      }
      const event = { event: this.#event || "message", data: this.#data.join("\n") };
      this.#event = "";
      this.#data = [];
      return event;
    }
    if (line.startsWith(":")) return null;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.#event = value;
    else if (field === "data") this.#data.push(value);
    return null;
  }
}

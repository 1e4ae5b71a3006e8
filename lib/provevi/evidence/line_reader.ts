/**
 * The lines of a file another process appends to (`events.jsonl` of a running run, the live feed, the span
 * index), read a bounded piece at a time: what one read takes, the longest line waited for, and the most of a
 * file read in all are each bounded, so a forged file (sparse, with no newline) costs a bounded read.
 * @module
 */
import { type FileReads, openFileNoWait } from "./fd_file.ts";
import { EVIDENCE_TEXT_MAX_BYTES } from "./payload_pack.ts";

/** The most one read of a tail takes: a file far ahead is caught up with over several reads. */
export const READ_PER_CALL = 8 * 1024 * 1024;
/**
 * The longest line a tail keeps waiting for the end of: an event's line holds its payloads' hashes, not their
 * bytes. A sparse file of hundreds of MiB and no newline was read whole into one string: a gigabyte of the
 * viewer's memory for each page that followed the run, then `RangeError: Invalid string length`.
 */
export const LINE_MAX = 16 * 1024 * 1024;

/**
 * Reads the lines appended to a file since the last read, a bounded piece at a time: each call takes at most
 * {@linkcode READ_PER_CALL} bytes, and none past what any reader of the evidence takes; a line past
 * {@linkcode LINE_MAX} ends the reading. {@linkcode LineReader.ended} says when a call found the end.
 */
export class LineReader {
  #offset = 0;
  #rest = "";
  #ended = false;
  readonly #decoder = new TextDecoder();
  constructor(readonly path: string) {}

  /**
   * True when the last call read to the file's end (what follows is what is appended after it), found no file
   * to read, or was stopped by the bounds: a reader of a whole file stops there.
   */
  get ended(): boolean {
    return this.#ended;
  }

  /** The whole lines appended since the last call, without their newlines, empty ones left out. */
  async next(): Promise<string[]> {
    let file: FileReads;
    this.#ended = true;
    try {
      // opened without waiting (a named pipe would hold a plain open for ever) nor following a link
      file = await openFileNoWait(this.path, { follow: false });
    } catch {
      return [];
    }
    try {
      await file.seek(this.#offset, Deno.SeekMode.Start);
      const chunks: string[] = [];
      const buffer = new Uint8Array(65536);
      // no more of the file than any reader of the evidence takes: a forged sparse file is not read on for ever
      let read = 0;
      for (; this.#offset < EVIDENCE_TEXT_MAX_BYTES && read < READ_PER_CALL;) {
        const n = await file.read(buffer);
        if (n === null || n === 0) break;
        this.#offset += n;
        read += n;
        chunks.push(this.#decoder.decode(buffer.subarray(0, n), { stream: true }));
      }
      this.#ended = read < READ_PER_CALL || this.#offset >= EVIDENCE_TEXT_MAX_BYTES;
      const text = this.#rest + chunks.join("");
      const lines = text.split("\n");
      this.#rest = lines.pop() ?? "";
      // a line past any a writer makes: the file is read no further
      if (this.#rest.length > LINE_MAX) {
        [this.#rest, this.#offset, this.#ended] = ["", EVIDENCE_TEXT_MAX_BYTES, true];
      }
      return lines.filter((l) => l !== "");
    } finally {
      file.close();
    }
  }
}

/**
 * One append to a file of records or lines, whole or not at all: `events.jsonl`, `payloads.pack`, `spans.jsonl`
 * and the span daemon's `received.spans` each take their bytes this way, so that a write cut part way never
 * joins the next record.
 * @module
 */

/** What {@linkcode appendWhole} needs of a file: a `Deno.FsFile`, or a `PlainFile`. */
export interface AppendTarget {
  writeSync(bytes: Uint8Array): number;
  truncateSync(length?: number): void;
  statSync(): { size: number };
}

/**
 * Writes every byte to a file open to append, with synchronous writes; when a write fails part way, takes back
 * what it wrote (best effort: if that fails too, the reader meets a cut record or line and says so) and throws
 * the write's error.
 *
 * @param file A file opened with `append: true`.
 * @param bytes The record or line.
 * @throws The write's error; none of `bytes` is in the file then, unless taking them back failed.
 * @example
 * ```ts
 * import { appendWhole } from "./append_whole.ts";
 * using file = Deno.openSync(await Deno.makeTempFile(), { write: true, append: true });
 * appendWhole(file, new TextEncoder().encode("a line\n"));
 * ```
 */
export function appendWhole(file: AppendTarget, bytes: Uint8Array): void {
  let written = 0;
  try {
    while (written < bytes.length) written += file.writeSync(bytes.subarray(written));
  } catch (error) {
    if (written > 0) {
      try {
        file.truncateSync(file.statSync().size - written);
      } catch { /* the reader meets the cut record */ }
    }
    throw error;
  }
}

/**
 * The reading of a file of lines another party can write, `events.jsonl` above all, bounded by its lines as well
 * as its size: a sparse file just under the 512 MiB cap is one line of zeros, which was read whole, decoded into
 * a string, split and hashed (`prove verify` took 2.2 GB of memory and 3.5 s for it). A line is refused once
 * it passes {@linkcode EVENT_LINE_MAX_BYTES}, as the bytes come, before the rest is read.
 * @module
 */
import {
  bufferFor,
  closeNoWait,
  IrregularFile,
  openNoWaitSync,
  readAsync,
  readNoWaitSync,
  tooBig,
} from "./open_file.ts";
import { EVENT_LINE_MAX_BYTES } from "./json_depth.ts";

/** A file read at once (synchronously) up to this size, on file threads past it, as `open_file.ts` does. */
const READ_AT_ONCE = 256 * 1024;
const CHUNK = 4 * 1024 * 1024;

/**
 * The bytes of a plain file of lines, at most `most` of them, none of its lines longer than `lineMost` bytes.
 *
 * @param path The file.
 * @param most The most bytes taken.
 * @param lineMost The most bytes of one line, without its newline.
 * @returns Its bytes.
 * @throws Deno.errors.NotFound when nothing is there; IrregularFile for a link, a file that is not plain, one
 * that holds (or grows to) more than `most` bytes, or one with a line past `lineMost` (naming the line).
 */
export async function readLinesCapped(
  path: string,
  most: number,
  lineMost = EVENT_LINE_MAX_BYTES,
): Promise<Uint8Array> {
  const { fd, info } = openNoWaitSync(path);
  let reading: Promise<number> | null = null;
  try {
    // room for what the file holds and one byte more, to see it grow; not touched past what is read
    let buffer = bufferFor(path, info, most);
    let n = 0, lineStart = 0, line = 1;
    for (;;) {
      if (n === buffer.length) {
        if (buffer.length > most) throw tooBig(path, `more than ${most}`, most);
        const next = new Uint8Array(Math.min(Math.max(buffer.length * 2, 64 * 1024), most + 1));
        next.set(buffer);
        buffer = next;
      }
      const length = Math.min(buffer.length - n, CHUNK);
      const got = buffer.length <= READ_AT_ONCE
        ? readNoWaitSync(fd, buffer.subarray(n, n + length))
        : await (reading = readAsync(fd, buffer, n, length, null));
      reading = null;
      if (got === 0) return buffer.subarray(0, n);
      n += got;
      // each line ended in these bytes, then the one still open, measured before more of it is read
      const read = buffer.subarray(0, n); // a search stops at what was read, not at the buffer's end
      for (let at = read.indexOf(0x0a, n - got); at !== -1; at = read.indexOf(0x0a, at + 1)) {
        if (at - lineStart > lineMost) break;
        lineStart = at + 1;
        line += 1;
      }
      const open = read.subarray(lineStart).indexOf(0x0a);
      if ((open === -1 ? n - lineStart : open) > lineMost) {
        throw new IrregularFile(
          path,
          `line ${line} holds more than ${lineMost} bytes, more than any line of it may`,
        );
      }
    }
  } finally {
    await reading?.catch(() => 0); // a read under way uses the descriptor: it ends before it is closed
    closeNoWait(fd);
  }
}

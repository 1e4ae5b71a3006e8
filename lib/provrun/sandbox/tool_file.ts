/**
 * How the built-in tools read an input: a piece at a time, whatever its size. An input of a catalog may be
 * gigabytes; `read_file` read it whole to give its first megabyte, and `grep_file` read each file whole to
 * split it into lines, so one call on a large input held all of it in the sandbox's memory. Each file is opened
 * as the evidence's readers open theirs (`open_file.ts`: no link followed, no wait on a FIFO, a plain file only).
 * @module
 */
import { closeNoWait, IrregularFile, openNoWaitSync, readAsync } from "../../provevi/evidence/open_file.ts";

/** The bytes one read of a tool takes. */
const CHUNK = 1024 * 1024;

/**
 * The first bytes of a plain file, at most `most`, and its size: the rest is not read.
 *
 * @param path The file on disk.
 * @param most The most bytes given.
 * @returns The bytes, and the file's size.
 * @throws IrregularFile for a link or a file that is not plain; Deno.errors.NotFound when nothing is there.
 * @example
 * ```ts ignore
 * const { bytes, size } = await readHead("/runs/r/input/big.csv", 1024 * 1024);
 * ```
 */
export async function readHead(path: string, most: number): Promise<{ bytes: Uint8Array; size: number }> {
  const { fd, info } = openNoWaitSync(path);
  let reading: Promise<number> | null = null;
  try {
    if (!info.isFile) throw new IrregularFile(path, "is not a plain file");
    const bytes = new Uint8Array(Math.min(info.size, most));
    let n = 0;
    while (n < bytes.length) {
      const got = await (reading = readAsync(fd, bytes, n, bytes.length - n, null));
      reading = null;
      if (got === 0) break;
      n += got;
    }
    return { bytes: bytes.subarray(0, n), size: Math.max(info.size, n) };
  } finally {
    await reading?.catch(() => 0); // a read under way uses the descriptor: it ends before it is closed
    closeNoWait(fd);
  }
}

/**
 * The lines of a plain file, read a piece at a time; a line longer than `longest` characters is given cut to
 * them (the rest of it is read past, not kept).
 *
 * @param path The file on disk.
 * @param longest The most characters of a line given.
 * @returns The lines, in order, without their newlines (a last line without one too).
 * @throws IrregularFile for a link or a file that is not plain; Deno.errors.NotFound when nothing is there.
 */
export async function* fileLines(path: string, longest: number): AsyncGenerator<string> {
  const { fd, info } = openNoWaitSync(path);
  let reading: Promise<number> | null = null;
  try {
    if (!info.isFile) throw new IrregularFile(path, "is not a plain file");
    let decoder = new TextDecoder();
    const buffer = new Uint8Array(CHUNK);
    let rest = "";
    let skipping = false; // past the kept start of a long line: its rest is dropped, unread, up to its newline
    for (;;) {
      const got = await (reading = readAsync(fd, buffer, 0, buffer.length, null));
      reading = null;
      let bytes = buffer.subarray(0, got);
      if (skipping) {
        const end = bytes.indexOf(0x0a); // a newline is never inside a character of UTF-8
        if (end < 0 && got > 0) continue;
        skipping = false;
        decoder = new TextDecoder(); // the bytes dropped may have ended inside a character
        bytes = end < 0 ? bytes.subarray(0, 0) : bytes.subarray(end);
      }
      const text = got === 0 ? decoder.decode() : decoder.decode(bytes, { stream: true });
      const lines = (rest + text).split("\n");
      rest = lines.pop()!;
      for (const line of lines) yield line;
      if (got === 0) break;
      if (rest.length > longest) [rest, skipping] = [rest.slice(0, longest), true];
    }
    if (rest !== "") yield rest;
  } finally {
    await reading?.catch(() => 0);
    closeNoWait(fd);
  }
}

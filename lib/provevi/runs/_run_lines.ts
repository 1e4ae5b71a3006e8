/**
 * The first and the last line of a run's `events.jsonl`, read without reading the whole file: what a listing
 * of many runs needs from each.
 * @module
 */
import { openFileNoWait } from "../evidence/fd_file.ts";
import { concatBytes } from "../evidence/bytes.ts";

/** The first line of a file, without its newline, or null when it has none within 16 MiB. */
export async function firstLine(path: string): Promise<string | null> {
  // opened without waiting (a named pipe would hold a plain open for ever) nor following a link
  using file = await openFileNoWait(path, { follow: false });
  const chunks: Uint8Array[] = [];
  let size = 0;
  const buffer = new Uint8Array(65536);
  while (size < 16 << 20) {
    const n = await file.read(buffer);
    if (n === null) break;
    const chunk = buffer.subarray(0, n);
    const end = chunk.indexOf(0x0a);
    chunks.push(chunk.slice(0, end === -1 ? n : end));
    size += n;
    if (end !== -1) return new TextDecoder("utf-8", { fatal: true }).decode(concatBytes(chunks));
  }
  return null;
}

/**
 * The last whole line of a file (one that ends in a newline), without its newline, or null when there is none
 * within its last 16 MiB.
 */
export async function lastLine(path: string): Promise<string | null> {
  using file = await openFileNoWait(path, { follow: false });
  const size = (await file.stat()).size;
  let end = size; // the file's bytes [0, end) are still to look at
  const chunks: Uint8Array[] = [];
  let lineEnd = -1; // the offset of the newline that ends the last whole line
  const step = 65536;
  while (end > 0 && size - end < 16 << 20) {
    const start = Math.max(0, end - step);
    const chunk = new Uint8Array(end - start);
    await file.seek(start, Deno.SeekMode.Start);
    let got = 0;
    while (got < chunk.length) {
      const n = await file.read(chunk.subarray(got));
      if (n === null) break;
      got += n;
    }
    for (let i = chunk.length - 1; i >= 0; i--) {
      if (chunk[i] !== 0x0a) continue;
      if (lineEnd === -1) {
        lineEnd = start + i;
        continue;
      }
      chunks.unshift(chunk.slice(i + 1, lineEnd >= end ? chunk.length : lineEnd - start));
      return decode(chunks);
    }
    if (lineEnd !== -1) chunks.unshift(chunk.slice(0, Math.min(chunk.length, lineEnd - start)));
    end = start;
  }
  return lineEnd === -1 ? null : decode(chunks);
}

function decode(chunks: Uint8Array[]): string {
  return new TextDecoder("utf-8", { fatal: true }).decode(concatBytes(chunks));
}

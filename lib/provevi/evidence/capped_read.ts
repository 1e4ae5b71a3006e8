/**
 * Reads an evidence file whole, but never more than a reader takes: the size is checked before a byte is read and
 * again as the bytes come, so that a file that grows while it is read (another process appending to it, or one
 * swapped for a bigger one after the look) is refused at the cap instead of taking the reader's memory with it.
 * @module
 */
import { ProveviError } from "./errors.ts";

/**
 * Refuses a link or anything but a plain file: a link could pass off another run's evidence as this run's,
 * and reading a named pipe would wait for ever. With `most`, also a file bigger than a reader takes whole (a
 * forged file of many gigabytes would take the reader's memory with it; see `EVIDENCE_TEXT_MAX_BYTES`).
 * @returns What the look saw, to compare with the file once opened.
 * @throws Deno.errors.NotFound when nothing is there; ProveviError for a link, a file that is not plain, or one
 * past `most` bytes.
 */
export function refuseNonFile(path: string, most = Infinity): Deno.FileInfo {
  const info = Deno.lstatSync(path);
  if (info.isSymlink) throw new ProveviError(`${path} is a link, not a file`);
  if (!info.isFile) throw new ProveviError(`${path} is not a plain file`);
  if (info.size > most) throw tooBig(path, info.size, most);
  return info;
}

/** Refuses a file opened that is not the one looked at: swapped for a link or another file in between. */
function refuseSwapped(path: string, seen: Deno.FileInfo, opened: Deno.FileInfo): void {
  if (!opened.isFile || opened.ino !== seen.ino || opened.dev !== seen.dev) {
    throw new ProveviError(`${path} changed while it was opened`);
  }
}

function tooBig(path: string, size: number | string, most: number): ProveviError {
  return new ProveviError(
    `${path} holds ${size} bytes, more than the ${most} a reader takes: no writer of this toolkit makes it`,
  );
}

/** Room for the bytes a file holds at the look, and one more, to see that it ends there. */
function bufferFor(info: Deno.FileInfo, most: number): Uint8Array {
  return new Uint8Array(Math.min(info.size, most) + 1);
}

/**
 * The bytes of a plain file, at most `most` of them.
 *
 * @param path The file.
 * @param most The most a reader takes.
 * @returns Its bytes.
 * @throws Deno.errors.NotFound when nothing is there; ProveviError for a link, a file that is not plain, or one
 * that holds (or grows to) more than `most` bytes.
 */
export async function readCapped(path: string, most: number): Promise<Uint8Array> {
  const seen = refuseNonFile(path, most);
  using file = await Deno.open(path, { read: true });
  const info = await file.stat();
  refuseSwapped(path, seen, info);
  let buffer = bufferFor(info, most);
  let n = 0;
  for (;;) {
    if (n === buffer.length) buffer = grown(path, buffer, most);
    const got = await file.read(buffer.subarray(n));
    if (got === null || got === 0) return buffer.subarray(0, n);
    n += got;
  }
}

/** {@linkcode readCapped} with synchronous reads, for a small file. */
export function readCappedSync(path: string, most: number): Uint8Array {
  const seen = refuseNonFile(path, most);
  using file = Deno.openSync(path, { read: true });
  const info = file.statSync();
  refuseSwapped(path, seen, info);
  let buffer = bufferFor(info, most);
  let n = 0;
  for (;;) {
    if (n === buffer.length) buffer = grown(path, buffer, most);
    const got = file.readSync(buffer.subarray(n));
    if (got === null || got === 0) return buffer.subarray(0, n);
    n += got;
  }
}

/** A bigger buffer for a file that grew while it was read, or the refusal once it passes `most`. */
function grown(path: string, buffer: Uint8Array, most: number): Uint8Array {
  if (buffer.length > most) throw tooBig(path, `more than ${most}`, most);
  const next = new Uint8Array(Math.min(Math.max(buffer.length * 2, 64 * 1024), most + 1));
  next.set(buffer);
  return next;
}

/**
 * Reads an evidence file whole, but never more than a reader takes: the size is checked before a byte is read and
 * again as the bytes come, so that a file that grows while it is read (another process appending to it, or one
 * swapped for a bigger one after the look) is refused at the cap instead of taking the reader's memory with it.
 * @module
 */
import { ProveviError } from "./errors.ts";
import {
  closeNoWait,
  type OpenedInfo,
  openNoWait,
  openNoWaitSync,
  readNoWaitSync,
  sameFile,
} from "./open_no_wait.ts";

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

/**
 * Refuses a file opened that is not the one looked at: swapped for a link, a pipe or another file in between
 * (opened without waiting, `open_no_wait.ts`, so that a pipe swapped in is refused here, not waited on).
 */
function refuseSwapped(path: string, seen: Deno.FileInfo, opened: OpenedInfo): void {
  if (!sameFile(opened, seen)) throw new ProveviError(`${path} changed while it was opened`);
}

function tooBig(path: string, size: number | string, most: number): ProveviError {
  return new ProveviError(
    `${path} holds ${size} bytes, more than the ${most} a reader takes: no writer of this toolkit makes it`,
  );
}

/** Room for the bytes a file holds at the look, and one more, to see that it ends there. */
function bufferFor(info: { size: number }, most: number): Uint8Array {
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
  const { handle, info } = await openNoWait(path);
  try {
    refuseSwapped(path, seen, info);
    let buffer = bufferFor(info, most);
    let n = 0;
    for (;;) {
      if (n === buffer.length) buffer = grown(path, buffer, most);
      const { bytesRead } = await handle.read(buffer, n, buffer.length - n, null);
      if (bytesRead === 0) return buffer.subarray(0, n);
      n += bytesRead;
    }
  } finally {
    await handle.close().catch(() => {});
  }
}

/** {@linkcode readCapped} with synchronous reads, for a small file. */
export function readCappedSync(path: string, most: number): Uint8Array {
  const seen = refuseNonFile(path, most);
  const { fd, info } = openNoWaitSync(path);
  try {
    refuseSwapped(path, seen, info);
    let buffer = bufferFor(info, most);
    let n = 0;
    for (;;) {
      if (n === buffer.length) buffer = grown(path, buffer, most);
      const got = readNoWaitSync(fd, buffer.subarray(n));
      if (got === 0) return buffer.subarray(0, n);
      n += got;
    }
  } finally {
    closeNoWait(fd);
  }
}

/** A bigger buffer for a file that grew while it was read, or the refusal once it passes `most`. */
function grown(path: string, buffer: Uint8Array, most: number): Uint8Array {
  if (buffer.length > most) throw tooBig(path, `more than ${most}`, most);
  const next = new Uint8Array(Math.min(Math.max(buffer.length * 2, 64 * 1024), most + 1));
  next.set(buffer);
  return next;
}

/**
 * Opening a file to read without waiting on it. A reader that refuses a named pipe looks at the path first
 * (`lstat`) and opens it after: two calls, and a pipe renamed to the path in between was opened by a plain
 * `open`, which waits for a writer for ever (a process that can write the folder swapped a pipe and a file at
 * the path in turn, and held a verify, a build or a run's writer). Opened with `O_NONBLOCK`, a pipe opens at
 * once and the reader refuses it as not the plain file it looked at; a plain file reads as ever. Deno's `open`
 * takes no such flag, `node:fs`'s does.
 * @module
 */
import { closeSync, constants, fstatSync, openSync, read, readSync } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { ProveviError } from "./errors.ts";

const flags = constants as unknown as Record<string, number | undefined>;
const NO_WAIT = (flags.O_RDONLY ?? 0) | (flags.O_NONBLOCK ?? 0);
const NO_FOLLOW = flags.O_NOFOLLOW ?? 0;

/** What an opened file is: a plain file or not, which one (to compare with a look), and its size. */
export interface OpenedInfo {
  isFile: boolean;
  /** The kind, for a message: "a FIFO", "a folder", "a device", "a socket", or "a file". */
  kind: string;
  ino: number;
  dev: number;
  size: number;
}

function infoOf(
  s: {
    isFile(): boolean;
    isFIFO(): boolean;
    isDirectory(): boolean;
    isSocket(): boolean;
    ino: number;
    dev: number;
    size: number;
  },
): OpenedInfo {
  const kind = s.isFile()
    ? "a file"
    : s.isFIFO()
    ? "a FIFO"
    : s.isDirectory()
    ? "a folder"
    : s.isSocket()
    ? "a socket"
    : "a device";
  return { isFile: s.isFile(), kind, ino: Number(s.ino), dev: Number(s.dev), size: Number(s.size) };
}

/** False once a look at `/proc/self/fd/` failed here (another system, or no permission to read it). */
let procFds = Deno.build.os === "linux";

/**
 * What a descriptor is open on: by a look at its `/proc/self/fd/` link where Linux has one (Deno's look, a few
 * microseconds), else by `fstat` (whose `Stats` object costs `node:fs` some 20 µs more).
 */
function infoOfFd(fd: number): OpenedInfo {
  if (procFds) {
    try {
      const s = Deno.statSync(`/proc/self/fd/${fd}`);
      const kind = s.isFile
        ? "a file"
        : s.isFifo
        ? "a FIFO"
        : s.isDirectory
        ? "a folder"
        : s.isSocket
        ? "a socket"
        : "a device";
      return { isFile: s.isFile, kind, ino: s.ino ?? 0, dev: s.dev, size: s.size };
    } catch {
      procFds = false;
    }
  }
  return infoOf(fstatSync(fd));
}

/** Node's error of an open as Deno's: NotFound and PermissionDenied as callers test them, a link as refused. */
function denoError(error: unknown, path: string): unknown {
  const code = (error as { code?: unknown })?.code;
  const message = (error as Error)?.message ?? String(error);
  if (code === "ENOENT") return new Deno.errors.NotFound(message, { cause: error });
  if (code === "EACCES" || code === "EPERM") {
    return new Deno.errors.PermissionDenied(message, { cause: error });
  }
  if (code === "ELOOP") return new ProveviError(`${path} is a link, not a file`, { cause: error });
  return error;
}

/**
 * True when what was opened is the plain file a look saw (`lstat` or `stat` of the path).
 *
 * @param opened What {@linkcode openNoWaitSync} or {@linkcode openNoWait} gave.
 * @param seen The look.
 * @returns Whether they are the same plain file.
 */
export function sameFile(opened: OpenedInfo, seen: Deno.FileInfo): boolean {
  return opened.isFile && (seen.ino === null || (opened.ino === seen.ino && opened.dev === seen.dev));
}

/**
 * Opens a file to read, synchronously, without waiting on a pipe.
 *
 * @param path The file.
 * @param options `follow`: follow a link at the path (a file the user names); not by default (a link is then
 *   refused, as a look refuses it).
 * @returns The descriptor (close it with {@linkcode closeNoWait}) and what it is.
 * @throws Deno.errors.NotFound when nothing is there; ProveviError for a link not followed.
 */
export function openNoWaitSync(
  path: string,
  options: { follow?: boolean } = {},
): { fd: number; info: OpenedInfo } {
  let fd: number;
  try {
    fd = openSync(path, NO_WAIT | (options.follow ? 0 : NO_FOLLOW));
  } catch (error) {
    throw denoError(error, path);
  }
  try {
    return { fd, info: infoOfFd(fd) };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/**
 * Reads into `bytes` from a descriptor {@linkcode openNoWaitSync} opened.
 *
 * @param fd The descriptor.
 * @param bytes Where the bytes go.
 * @param position Where in the file to read from; null to read on from the last read.
 * @returns The number of bytes read; 0 at the end.
 */
export function readNoWaitSync(fd: number, bytes: Uint8Array, position: number | null = null): number {
  return bytes.length === 0 ? 0 : readSync(fd, bytes, 0, bytes.length, position);
}

/** Closes a descriptor {@linkcode openNoWaitSync} opened. */
export function closeNoWait(fd: number): void {
  try {
    closeSync(fd);
  } catch { /* closed already */ }
}

/**
 * {@linkcode openNoWaitSync}, asynchronously: a file handle of `node:fs/promises`.
 *
 * @param path The file.
 * @param options `follow`: follow a link at the path.
 * @returns The handle (close it) and what it is.
 * @throws Deno.errors.NotFound when nothing is there; ProveviError for a link not followed.
 */
export async function openNoWait(
  path: string,
  options: { follow?: boolean } = {},
): Promise<{ handle: FileHandle; info: OpenedInfo }> {
  let handle: FileHandle;
  try {
    handle = await open(path, NO_WAIT | (options.follow ? 0 : NO_FOLLOW));
  } catch (error) {
    throw denoError(error, path);
  }
  try {
    return { handle, info: infoOfFd(handle.fd) };
  } catch (error) {
    await handle.close().catch(() => {});
    throw error;
  }
}

/**
 * A plain file opened without waiting, with the synchronous calls a pack's index makes of a `Deno.FsFile`
 * (`statSync`, `seekSync` from the start, `readSync`), for readers that seek.
 */
export class NoWaitFile implements Disposable {
  #at = 0;

  private constructor(readonly fd: number) {}

  /**
   * Opens a plain file to read without waiting on a pipe.
   *
   * @param path The file.
   * @param options `follow`: follow a link at the path; not by default (a link is refused).
   * @returns The file.
   * @throws Deno.errors.NotFound when nothing is there; ProveviError for a link not followed, or what is not a
   * plain file (a pipe, a folder, a device).
   */
  static open(path: string, options: { follow?: boolean } = {}): NoWaitFile {
    const { fd, info } = openNoWaitSync(path, options);
    if (!info.isFile) {
      closeNoWait(fd);
      throw new ProveviError(`${path} is ${info.kind}, not a plain file`);
    }
    return new NoWaitFile(fd);
  }

  /** The file's size now. */
  statSync(): { size: number } {
    return { size: infoOfFd(this.fd).size };
  }

  /** Moves where the next read starts (from the file's start only). */
  seekSync(offset: number, whence: Deno.SeekMode): number {
    if (whence !== Deno.SeekMode.Start) throw new RangeError("a NoWaitFile seeks from the start only");
    return this.#at = offset;
  }

  /** Reads into `bytes` from where the last read or seek left off; null at the end. */
  readSync(bytes: Uint8Array): number | null {
    const n = readNoWaitSync(this.fd, bytes, this.#at);
    this.#at += n;
    return n === 0 && bytes.length > 0 ? null : n;
  }

  /** Closes the file. */
  close(): void {
    closeNoWait(this.fd);
  }

  [Symbol.dispose](): void {
    this.close();
  }
}

/** The reads {@linkcode openFileNoWait}'s file gives: a `Deno.FsFile`'s, from where the last read left off. */
export interface NoWaitReadable extends Disposable {
  /** Reads into `bytes`; null at the end. */
  readSync(bytes: Uint8Array): number | null;
  /** Reads into `bytes` off this thread; null at the end. */
  read(bytes: Uint8Array): Promise<number | null>;
  /** Closes the file. */
  close(): void;
}

/** A checked descriptor read with `node:fs` (where no `/proc/self/fd/` link may be opened). */
class FdReadable implements NoWaitReadable {
  constructor(readonly fd: number) {}

  readSync(bytes: Uint8Array): number | null {
    const n = readNoWaitSync(this.fd, bytes);
    return n === 0 && bytes.length > 0 ? null : n;
  }

  read(bytes: Uint8Array): Promise<number | null> {
    if (bytes.length === 0) return Promise.resolve(0);
    return new Promise((resolve, reject) =>
      read(
        this.fd,
        bytes,
        0,
        bytes.length,
        null,
        (error, n) => error ? reject(error) : resolve(n === 0 ? null : n),
      )
    );
  }

  close(): void {
    closeNoWait(this.fd);
  }

  [Symbol.dispose](): void {
    this.close();
  }
}

/**
 * A plain file opened without waiting, for fast reads: opened first with `O_NONBLOCK` and checked, then, as a
 * `Deno.FsFile`, opened again through its `/proc/self/fd/` link, which names the very file that was checked,
 * however the path changes meanwhile. Where no such link may be opened (another system, or a command's
 * permission set, under which Deno asks for all access to `/proc/self/fd/`), the checked descriptor itself is
 * read: the path is never opened again, since a pipe renamed to it after the check would be waited on for ever.
 *
 * @param path The file.
 * @param options `follow`: follow a link at the path (the default: as `Deno.open`); `false` refuses one.
 * @returns The file, open to read.
 * @throws Deno.errors.NotFound when nothing is there; ProveviError for what is not a plain file.
 */
export async function openFileNoWait(
  path: string,
  options: { follow?: boolean } = {},
): Promise<NoWaitReadable> {
  const { fd, info } = openNoWaitSync(path, { follow: options.follow !== false });
  try {
    if (!info.isFile) throw new ProveviError(`${path} is ${info.kind}, not a plain file`);
    if (procFds) {
      try {
        const file = await Deno.open(`/proc/self/fd/${fd}`, { read: true });
        closeNoWait(fd);
        return file;
      } catch {
        procFds = false;
      }
    }
    return new FdReadable(fd);
  } catch (error) {
    closeNoWait(fd);
    throw error;
  }
}

/**
 * The one way this toolkit opens a file that another party can write or swap (a run folder, a store, a log, an
 * agent program's files, the span daemon's `received.spans`). A reader that looks at a path (`lstat`, `stat`) and
 * opens it after, or opens it with a plain `open`, is belied by a swap in between: a FIFO renamed to the path
 * holds a plain `open` for ever (it waits for a writer), a link is followed to a file of the user's, a device or a
 * sparse file of gigabytes is read whole. Here a file is opened once, without waiting (`O_NONBLOCK`) nor, unless
 * asked, following a link ({@linkcode openAtPathSync}), and its kind, identity and size are taken from what was
 * opened; the bytes read are capped. `tests/open_file_guard_test.ts` keeps other opens out of `lib/` and `cli/`.
 * @module
 */
import fs from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { ProveviError } from "./errors.ts";

const flags = fs.constants as unknown as Record<string, number | undefined>;
const NO_WAIT = (flags.O_RDONLY ?? 0) | (flags.O_NONBLOCK ?? 0);
const NO_FOLLOW = flags.O_NOFOLLOW ?? 0;

/** What an opened file is: a plain file or not, which one (to compare with a look), its size and links. */
export interface OpenedInfo {
  isFile: boolean;
  /** The kind, for a message: "a FIFO", "a folder", "a device", "a socket", or "a file". */
  kind: string;
  ino: number;
  dev: number;
  size: number;
  nlink: number;
}

/** A file refused for what it is (a link, a FIFO, a device, a folder, too big), in one line naming it. */
export class IrregularFile extends ProveviError {
  /** @param path The file. @param reason Why it is refused. */
  constructor(readonly path: string, readonly reason: string, options?: ErrorOptions) {
    super(`${path} ${reason}`, options);
    this.name = "IrregularFile";
  }
}

/** What a file that is not a plain file is, in words. */
export function kindOf(
  s: { isFile: boolean; isFifo: boolean | null; isDirectory: boolean; isSocket: boolean | null },
): string {
  return s.isFile
    ? "a file"
    : s.isFifo
    ? "a FIFO"
    : s.isDirectory
    ? "a folder"
    : s.isSocket
    ? "a socket"
    : "a device";
}

/** False once a look at `/proc/self/fd/` failed here (another system, or no permission to read it). */
let procFds = Deno.build.os === "linux";

/** What Deno tells of an opened file (its descriptor's information), as {@linkcode OpenedInfo}. */
export function openedInfoOf(s: Deno.FileInfo): OpenedInfo {
  return {
    isFile: s.isFile,
    kind: kindOf(s),
    ino: s.ino ?? 0,
    dev: s.dev,
    size: s.size,
    nlink: s.nlink ?? 1,
  };
}

/**
 * What a descriptor is open on: by Deno's look at its `/proc/self/fd/` link where Linux has one (some 3 µs; it
 * names the very file opened, however the path changes), else by `fstat` (whose `Stats` costs `node:fs` ~15 µs).
 */
function infoOfFd(fd: number): OpenedInfo {
  if (procFds) {
    try {
      return openedInfoOf(Deno.statSync(`/proc/self/fd/${fd}`));
    } catch {
      procFds = false;
    }
  }
  const s = fs.fstatSync(fd);
  const kind = kindOf({
    isFile: s.isFile(),
    isFifo: s.isFIFO(),
    isDirectory: s.isDirectory(),
    isSocket: s.isSocket(),
  });
  return {
    isFile: s.isFile(),
    kind,
    ino: Number(s.ino),
    dev: Number(s.dev),
    size: Number(s.size),
    nlink: s.nlink,
  };
}

/** Node's error of an open as Deno's (NotFound, PermissionDenied); a link, FIFO or folder refused. */
function openError(error: unknown, path: string): unknown {
  const code = (error as { code?: unknown })?.code;
  const message = (error as Error)?.message ?? String(error);
  if (code === "ENOENT") return new Deno.errors.NotFound(message, { cause: error });
  if (code === "EACCES" || code === "EPERM") {
    return new Deno.errors.PermissionDenied(message, { cause: error });
  }
  if (code === "ELOOP") return new IrregularFile(path, "is a link, not a file", { cause: error });
  if (code === "EISDIR") return new IrregularFile(path, "is a folder, not a plain file", { cause: error });
  // a FIFO with no reader, opened to write without waiting
  if (code === "ENXIO") return new IrregularFile(path, "is a FIFO, not a regular file", { cause: error });
  return error;
}

export function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split("\n")[0]!;
}

/** Refuses what was opened when the path is a link, or no longer names it (a look after the open). */
function refuseLinked(path: string, info: OpenedInfo): void {
  let seen: Deno.FileInfo;
  try {
    seen = Deno.lstatSync(path);
  } catch (error) {
    throw new IrregularFile(path, "changed while it was opened", { cause: error });
  }
  if (seen.isSymlink) throw new IrregularFile(path, "is a link, not a file");
  if (seen.ino !== null && (seen.ino !== info.ino || seen.dev !== info.dev)) {
    throw new IrregularFile(path, "changed while it was opened");
  }
}

/** True when what was opened ({@linkcode openNoWaitSync}) is the plain file a look (`lstat`, `stat`) saw. */
export function sameFile(opened: OpenedInfo, seen: Deno.FileInfo): boolean {
  return opened.isFile && (seen.ino === null || (opened.ino === seen.ino && opened.dev === seen.dev));
}

/**
 * Opens a file to read, synchronously, without waiting on a pipe.
 *
 * @param path The file.
 * @param options `follow`: follow a link at the path (a file the user names); not by default (a link is then
 *   refused).
 * @returns The descriptor (close it with {@linkcode closeNoWait}) and what it is.
 * @throws Deno.errors.NotFound when nothing is there; IrregularFile for a link not followed.
 */
export function openNoWaitSync(
  path: string,
  options: { follow?: boolean } = {},
): { fd: number; info: OpenedInfo } {
  const { opened: fd, info } = openAtPathSync(path, { follow: options.follow === true }, nodeOpener(NO_WAIT));
  return { fd, info };
}

/**
 * A file the user names, opened to read without waiting on a pipe, asynchronously (a link at the path is
 * followed: a no-follow open is {@linkcode openNoWaitSync}'s, through {@linkcode openAtPathSync}).
 *
 * @param path The file.
 * @returns The handle of `node:fs/promises` (close it) and what it is.
 * @throws Deno.errors.NotFound when nothing is there.
 */
export async function openNoWait(path: string): Promise<{ handle: FileHandle; info: OpenedInfo }> {
  let handle: FileHandle;
  try {
    handle = await open(path, NO_WAIT);
  } catch (error) {
    throw openError(error, path);
  }
  try {
    return { handle, info: infoOfFd(handle.fd) };
  } catch (error) {
    await handle.close().catch(() => {});
    throw error;
  }
}

/** Reads into `bytes` from a descriptor {@linkcode openNoWaitSync} opened, at `position` (null: on); 0 at the end. */
export function readNoWaitSync(fd: number, bytes: Uint8Array, position: number | null = null): number {
  return bytes.length === 0 ? 0 : fs.readSync(fd, bytes, 0, bytes.length, position);
}

/** Closes a descriptor {@linkcode openNoWaitSync} opened. */
export function closeNoWait(fd: number): void {
  try {
    fs.closeSync(fd);
  } catch { /* closed already */ }
}

/**
 * A look at a path for a reader that must compare what it opens later with it (a tail that reads on from an
 * offset): refuses a link or anything but a plain file, and with `most` one bigger than a reader takes whole.
 * A reader that opens at once needs no look: {@linkcode readCapped} takes all from what it opened.
 * @returns What the look saw, to compare with the file once opened ({@linkcode sameFile}).
 * @throws Deno.errors.NotFound when nothing is there; ProveviError for a link, a file that is not plain, or one
 * past `most` bytes.
 */
export function refuseNonFile(path: string, most = Infinity): Deno.FileInfo {
  const info = Deno.lstatSync(path);
  if (info.isSymlink) throw new IrregularFile(path, "is a link, not a file");
  if (!info.isFile) throw new IrregularFile(path, "is not a plain file");
  if (info.size > most) throw tooBig(path, info.size, most);
  return info;
}

export function tooBig(path: string, size: number | string, most: number): ProveviError {
  return new IrregularFile(
    path,
    `holds ${size} bytes, more than the ${most} a reader takes: no writer of this toolkit makes it`,
  );
}

/** Refuses what was opened when it is not a plain file of at most `most` bytes; room for its bytes and one more. */
export function bufferFor(path: string, info: OpenedInfo, most: number): Uint8Array {
  if (!info.isFile) throw new IrregularFile(path, "is not a plain file");
  if (info.size > most) throw tooBig(path, info.size, most);
  return new Uint8Array(info.size + 1);
}

/**
 * A file smaller than this is read synchronously by {@linkcode readCapped} and {@linkcode readRegularFile}: the
 * hops to a file thread and back cost more than reading it (on a busy machine, far more); a bigger file is read
 * on file threads, so that a server's event loop does not wait on it. The open, without waiting, is at once.
 */
const READ_AT_ONCE = 256 * 1024;

/**
 * Reads a descriptor to its end into `buffer`, grown as the file grows up to `most` + 1 bytes, then refused
 * with `over()`; synchronously for a small file.
 */
async function readAll(fd: number, buffer: Uint8Array, most: number, over: () => Error): Promise<Uint8Array> {
  if (buffer.length <= READ_AT_ONCE) return readRest(fd, buffer, most, over);
  let reading: Promise<number> | null = null;
  try {
    for (let n = 0;;) {
      if (n === buffer.length) buffer = grown(buffer, most, over);
      const got = await (reading = readAsync(fd, buffer, n, buffer.length - n, null));
      reading = null;
      if (got === 0) return buffer.subarray(0, n);
      n += got;
    }
  } finally {
    await reading?.catch(() => 0); // a read under way uses the descriptor: it ends before the caller closes it
  }
}

/** {@linkcode readAll}, synchronously whatever the size. */
function readRest(fd: number, buffer: Uint8Array, most: number, over: () => Error): Uint8Array {
  for (let n = 0;;) {
    if (n === buffer.length) buffer = grown(buffer, most, over);
    const got = readNoWaitSync(fd, buffer.subarray(n));
    if (got === 0) return buffer.subarray(0, n);
    n += got;
  }
}

/** A bigger buffer for a file that grew while it was read, or the refusal once it passes `most`. */
function grown(buffer: Uint8Array, most: number, over: () => Error): Uint8Array {
  if (buffer.length > most) throw over();
  const next = new Uint8Array(Math.min(Math.max(buffer.length * 2, 64 * 1024), most + 1));
  next.set(buffer);
  return next;
}

/**
 * The bytes of a plain file, at most `most` of them: opened without waiting and without following a link, its
 * kind and size taken from what was opened, and its size checked again as the bytes come (a file that grows while
 * it is read is refused at the cap, not read into the reader's memory).
 *
 * @param path The file.
 * @param most The most a reader takes.
 * @returns Its bytes.
 * @throws Deno.errors.NotFound when nothing is there; IrregularFile for a link, a file that is not plain, or one
 * that holds (or grows to) more than `most` bytes.
 */
export async function readCapped(path: string, most: number): Promise<Uint8Array> {
  const { fd, info } = openNoWaitSync(path);
  try {
    return await readAll(
      fd,
      bufferFor(path, info, most),
      most,
      () => tooBig(path, `more than ${most}`, most),
    );
  } finally {
    closeNoWait(fd);
  }
}

/** {@linkcode readCapped} with synchronous reads whatever the size, for a small file. */
export function readCappedSync(path: string, most: number): Uint8Array {
  const { fd, info } = openNoWaitSync(path);
  try {
    return readRest(fd, bufferFor(path, info, most), most, () => tooBig(path, `more than ${most}`, most));
  } finally {
    closeNoWait(fd);
  }
}

/**
 * The bytes of a regular file that another party puts in place (an agent program's files, its hooks), at most
 * `most` of them, or null when nothing is there: {@linkcode readCapped}, with every refusal an IrregularFile.
 *
 * @param path The file.
 * @param most The most bytes taken.
 * @returns Its bytes, or null when the path (or a folder on it) does not exist.
 * @throws IrregularFile when it is a link, a FIFO, a device, a socket or a folder, or holds (or grows to) more
 * than `most` bytes; when it cannot be read, with the system's reason.
 * @example
 * ```ts
 * import { readRegularFile } from "./open_file.ts";
 * const bytes = await readRegularFile("deno.json", 1024 * 1024);
 * ```
 */
export async function readRegularFile(path: string, most: number): Promise<Uint8Array | null> {
  let opened: ReturnType<typeof openNoWaitSync>;
  try {
    opened = openNoWaitSync(path);
  } catch (error) {
    const code = ((error as Error).cause as { code?: string } | undefined)?.code ??
      (error as { code?: string }).code;
    if (error instanceof Deno.errors.NotFound || code === "ENOTDIR") return null;
    if (error instanceof IrregularFile) throw error;
    throw new IrregularFile(path, `cannot be read: ${firstLine(error)}`, { cause: error });
  }
  const { fd, info } = opened;
  try {
    if (!info.isFile) throw new IrregularFile(path, `is ${info.kind}, not a regular file`);
    if (info.size > most) throw regularTooBig(path, most);
    return await readAll(fd, new Uint8Array(info.size + 1), most, () => regularTooBig(path, most));
  } catch (error) {
    if (error instanceof IrregularFile) throw error;
    throw new IrregularFile(path, `cannot be read: ${firstLine(error)}`, { cause: error });
  } finally {
    closeNoWait(fd);
  }
}

export function regularTooBig(path: string, most: number): IrregularFile {
  return new IrregularFile(path, `holds more than ${most} bytes, more than is read of it`);
}

export const readAsync = (fd: number, buffer: Uint8Array, offset: number, length: number, position: null) =>
  new Promise<number>((resolve, reject) =>
    fs.read(fd, buffer, offset, length, position, (error, n) => error ? reject(error) : resolve(n))
  );

/**
 * A plain file opened by {@linkcode openPlainFileSync} (or `PlainFile.open`), by its descriptor: what
 * `appendWhole`, a reader at an offset and a pack's index (`statSync`, `seekSync` from the start, `readSync`)
 * need of a `Deno.FsFile`. A swap of the path after the open changes nothing: the file is used by its descriptor.
 */
export class PlainFile implements Disposable {
  #fd: number | null;
  #at = 0;
  /** @param path The file. @param fd Its descriptor, which the file now owns. */
  constructor(readonly path: string, fd: number) {
    this.#fd = fd;
  }

  /**
   * Opens a plain file to read without waiting on a pipe.
   *
   * @param path The file.
   * @param options `follow`: follow a link at the path; not by default (a link is refused).
   * @returns The file.
   * @throws Deno.errors.NotFound when nothing is there; IrregularFile for a link not followed, or what is not a
   * plain file (a pipe, a folder, a device).
   */
  static open(path: string, options: { follow?: boolean } = {}): PlainFile {
    return new PlainFile(path, openChecked(path, { follow: options.follow === true }).fd);
  }

  /** The descriptor. */
  get fd(): number {
    if (this.#fd === null) throw new Deno.errors.BadResource(`${this.path} is closed`);
    return this.#fd;
  }

  /** Writes bytes (at the end, for a file opened to append); returns how many were written. */
  writeSync(bytes: Uint8Array): number {
    return fs.writeSync(this.fd, bytes);
  }

  /** Cuts the file to `length` bytes. */
  truncateSync(length = 0): void {
    fs.ftruncateSync(this.fd, length);
  }

  /** What the descriptor is now: its size, kind and identity. */
  statSync(): { size: number; isFile: boolean; ino: number; dev: number } {
    const { size, isFile, ino, dev } = infoOfFd(this.fd);
    return { size, isFile, ino, dev };
  }

  /** Reads into `buffer` from `position`; returns how many bytes came (0 at the end). */
  readSyncAt(buffer: Uint8Array, position: number): number {
    return readNoWaitSync(this.fd, buffer, position);
  }

  /** Moves where the next {@linkcode readSync} starts (from the file's start only). */
  seekSync(offset: number, whence: Deno.SeekMode): number {
    if (whence !== Deno.SeekMode.Start) throw new RangeError("a PlainFile seeks from the start only");
    return this.#at = offset;
  }

  /** Reads into `bytes` from where the last read or seek left off; null at the end. */
  readSync(bytes: Uint8Array): number | null {
    const n = readNoWaitSync(this.fd, bytes, this.#at);
    this.#at += n;
    return n === 0 && bytes.length > 0 ? null : n;
  }

  /** Closes it; closing again does nothing. */
  close(): void {
    if (this.#fd === null) return;
    const fd = this.#fd;
    this.#fd = null;
    closeNoWait(fd);
  }

  /** Closes it, as `using` does. */
  [Symbol.dispose](): void {
    this.close();
  }
}

/**
 * Opens a plain file of a folder that another party can write (a run's program writes its run folder), following
 * no link and waiting for no FIFO, kept only when it is a plain file (and, to write, one with no other hard link).
 *
 * @param path The file.
 * @param how `write` to append (else read), `create` to make it when absent, with `mode`.
 * @returns The file.
 * @throws Deno.errors.NotFound when it is absent (and not to be made); IrregularFile for a link, a FIFO, a
 * device, a folder or a file with another hard link, or one that cannot be opened.
 * @example
 * ```ts
 * import { openPlainFileSync } from "./open_file.ts";
 * using file = openPlainFileSync("deno.json");
 * file.statSync().size;
 * ```
 */
export function openPlainFileSync(
  path: string,
  how: { write?: boolean; create?: boolean; mode?: number } = {},
): PlainFile {
  const write = how.write === true;
  try {
    const opened = openChecked(path, { ...how, follow: false, append: write, oneLink: write });
    return new PlainFile(path, opened.fd);
  } catch (error) {
    if (error instanceof IrregularFile) throw error;
    if (error instanceof Deno.errors.NotFound) {
      throw new Deno.errors.NotFound(`${path} does not exist`, { cause: error });
    }
    throw new IrregularFile(path, `cannot be opened: ${firstLine(error)}`, { cause: error });
  }
}

/** How {@linkcode openFileNoWait} opens: `follow` a link at the path (the default), to `write` (and read). */
export interface FsFileOptions {
  follow?: boolean;
  write?: boolean;
  /** Make the file when absent (with `mode`, 0o666 by default, less the umask); with `write`. */
  create?: boolean;
  mode?: number;
  /** Cut the file to nothing once it is known to be a plain file; with `write`. */
  truncate?: boolean;
  /** Write at the end; with `write`. */
  append?: boolean;
}

/** Opens the path without waiting and checks it; the descriptor is the caller's to close. */
export function openChecked(
  path: string,
  options: FsFileOptions & { oneLink?: boolean },
): { fd: number; info: OpenedInfo } {
  const write = options.write === true;
  const { O_RDWR, O_APPEND } = fs.constants;
  const { opened: fd, info } = openAtPathSync(
    path,
    { follow: options.follow !== false, create: write && options.create === true },
    nodeOpener(
      write ? O_RDWR | (options.append ? O_APPEND : 0) | (flags.O_NONBLOCK ?? 0) : NO_WAIT,
      options.mode,
    ),
  );
  try {
    refuseUnlessPlain(path, info, write && options.oneLink === true);
    if (write && options.truncate) fs.ftruncateSync(fd, 0);
    return { fd, info };
  } catch (error) {
    closeNoWait(fd);
    throw error;
  }
}

/** Refuses what was opened unless it is a plain file (and, with `oneLink`, one with no other hard link). */
export function refuseUnlessPlain(path: string, info: OpenedInfo, oneLink: boolean): void {
  if (!info.isFile) throw new IrregularFile(path, `is ${info.kind}, not a plain file`);
  if (oneLink && info.nlink > 1) {
    throw new IrregularFile(path, "has another hard link, which may be a file anywhere");
  }
}

/** How {@linkcode openAtPathSync} makes a file: `no`, `new` (`O_EXCL`: where nothing is), `any` (`O_CREAT`). */
export type Making = "no" | "new" | "any";

/** An open for {@linkcode openAtPathSync}: how to open (`node:fs` or Deno), what was opened, how to close it. */
export interface Opener<T> {
  open(path: string, making: Making, follow: boolean): T;
  info(opened: T): OpenedInfo;
  close(opened: T): void;
}

/** `node:fs`'s open with these flags (`O_NOFOLLOW` added unless a link is followed), giving the descriptor. */
export function nodeOpener(base: number, mode = 0o666): Opener<number> {
  const { O_CREAT, O_EXCL } = fs.constants;
  return {
    open: (path, making, follow) =>
      fs.openSync(
        path,
        base | (follow ? 0 : NO_FOLLOW) |
          (making === "new" ? O_CREAT | O_EXCL : making === "any" ? O_CREAT : 0),
        mode,
      ),
    info: infoOfFd,
    close: closeNoWait,
  };
}

/** An `lstat` of the path, or null when none can be had (nothing there; the open then says why). */
function lookAt(path: string): Deno.FileInfo | null {
  try {
    return Deno.lstatSync(path);
  } catch {
    return null;
  }
}

/** Whether an open failed for nothing at the path (`ENOENT`), or for something there (`EEXIST`). */
function failedFor(error: unknown, what: "nothing" | "something"): boolean {
  const code = (error as { code?: unknown })?.code;
  return what === "nothing"
    ? code === "ENOENT" || error instanceof Deno.errors.NotFound
    : code === "EEXIST" || error instanceof Deno.errors.AlreadyExists;
}

/**
 * The one open of a path that must not follow a link there (unless `follow`), whoever opens it (`node:fs` for a
 * descriptor, Deno for a `Deno.FsFile` to write or lock): Deno drops `O_NOFOLLOW` under any permission set short
 * of `--allow-all` and opens what a link names, so the flag's effect is checked here, the same way under `-A` (as
 * tests run) and under a command's permission set: what was opened must be what the path names, and the path no
 * link, before a byte is read or written; a file is made only where a look saw nothing, with `O_EXCL`, which no
 * link passes (one planted since is refused, dangling or not, and nothing is made where it points).
 *
 * @param path The file.
 * @param options `follow` a link at the path (no check); `create` the file when absent.
 * @param opener How to open.
 * @returns What was opened (the caller's to close) and what it is.
 * @throws Deno.errors.NotFound when nothing is there (and not to be made); IrregularFile for a link not
 * followed, or a path that changed while it was opened; the opener's errors otherwise.
 */
export function openAtPathSync<T>(
  path: string,
  options: { follow?: boolean; create?: boolean },
  opener: Opener<T>,
): { opened: T; info: OpenedInfo } {
  const follow = options.follow === true;
  const linkAt = () => new IrregularFile(path, "is a link, not a file");
  for (let tries = 0;; tries++) {
    let making: Making = options.create ? "any" : "no";
    if (options.create && !follow) {
      const before = lookAt(path);
      if (before?.isSymlink) throw linkAt();
      making = before === null ? "new" : "no";
    }
    let opened: T;
    try {
      opened = opener.open(path, making, follow);
    } catch (error) {
      // something put in place since the look, or the file gone since: look again
      const raced = making === "new" || (making === "no" && options.create);
      if (raced && failedFor(error, making === "new" ? "something" : "nothing") && tries < 3) continue;
      if (!follow && (failedFor(error, "nothing") || failedFor(error, "something"))) {
        // a dangling link, which Deno's check of the path under a permission set reports as nothing there
        if (lookAt(path)?.isSymlink) throw linkAt();
      }
      throw openError(error, path);
    }
    try {
      const info = opener.info(opened);
      if (!follow) refuseLinked(path, info);
      return { opened, info };
    } catch (error) {
      opener.close(opened);
      throw error;
    }
  }
}

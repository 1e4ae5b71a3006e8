/**
 * Reading a file that another party puts in place (an agent program's session files and answer, the files that
 * hold its hooks) while that party may still swap it: the file is opened in one step that neither follows a link
 * (`O_NOFOLLOW`) nor waits for a FIFO's writer (`O_NONBLOCK`), and its kind and size are taken from what was
 * opened, so no look before the open can be belied by a swap after it. Only a regular file is read, and at most
 * `most` bytes of it: a FIFO held the reader for ever, and a sparse file of gigabytes took its memory.
 * @module
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import { ProveviError } from "./errors.ts";

const { O_RDONLY, O_NONBLOCK, O_NOFOLLOW } = fs.constants;

/** A file that {@linkcode readRegularFile} refuses, in one line that names it and says why. */
export class IrregularFile extends ProveviError {
  /** @param path The file. @param reason Why it is refused. */
  constructor(readonly path: string, readonly reason: string, options?: ErrorOptions) {
    super(`${path} ${reason}`, options);
    this.name = "IrregularFile";
  }
}

/** The kind of a file that is not regular, as words. */
function kindOf(stat: fs.Stats): string {
  return stat.isDirectory()
    ? "a folder"
    : stat.isFIFO()
    ? "a FIFO"
    : stat.isCharacterDevice() || stat.isBlockDevice()
    ? "a device"
    : stat.isSocket()
    ? "a socket"
    : "not a regular file";
}

/**
 * The bytes of a regular file, at most `most` of them, or null when nothing is there.
 *
 * @param path The file.
 * @param most The most bytes taken.
 * @returns Its bytes, or null when the path (or a folder on it) does not exist.
 * @throws IrregularFile when it is a link, a FIFO, a device, a socket or a folder, or holds (or grows to) more
 * than `most` bytes; when it cannot be read, with the system's reason.
 * @example
 * ```ts
 * import { readRegularFile } from "./regular_file.ts";
 * const bytes = await readRegularFile("deno.json", 1024 * 1024);
 * ```
 */
export async function readRegularFile(path: string, most: number): Promise<Uint8Array | null> {
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    if (code === "ELOOP") throw new IrregularFile(path, "is a link, not a file", { cause: error });
    throw new IrregularFile(path, `cannot be read: ${firstLine(error)}`, { cause: error });
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new IrregularFile(path, `is ${kindOf(stat)}, not a regular file`);
    if (stat.size > most) throw tooBig(path, most);
    let buffer = new Uint8Array(Math.min(stat.size, most) + 1);
    let n = 0;
    for (;;) {
      if (n === buffer.length) {
        if (buffer.length > most) throw tooBig(path, most);
        const next = new Uint8Array(Math.min(Math.max(buffer.length * 2, 64 * 1024), most + 1));
        next.set(buffer);
        buffer = next;
      }
      const { bytesRead } = await handle.read(buffer, n, buffer.length - n, null);
      if (bytesRead === 0) return buffer.subarray(0, n);
      n += bytesRead;
    }
  } catch (error) {
    if (error instanceof IrregularFile) throw error;
    throw new IrregularFile(path, `cannot be read: ${firstLine(error)}`, { cause: error });
  } finally {
    await handle.close().catch(() => {});
  }
}

function tooBig(path: string, most: number): IrregularFile {
  return new IrregularFile(path, `holds more than ${most} bytes, more than is read of it`);
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split("\n")[0]!;
}

/**
 * The SHA-256 and size of a regular file, opened as {@linkcode readRegularFile} opens it (no link followed, no
 * FIFO waited on), at most `most` bytes of it. The open, the look at what was opened and a small file's reads
 * are synchronous (a non-blocking open returns at once); a larger file's reads after its first MiB are not.
 *
 * @param path The file.
 * @param most The most bytes read.
 * @returns Its hash (hex) and size.
 * @throws IrregularFile as {@linkcode readRegularFile} does, and when nothing is there.
 * @example
 * ```ts
 * import { hashRegularFile } from "./regular_file.ts";
 * const { sha256, size } = await hashRegularFile("deno.json", 1024 * 1024);
 * ```
 */
export async function hashRegularFile(path: string, most: number): Promise<{ sha256: string; size: number }> {
  let fd: number;
  try {
    fd = fs.openSync(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "ELOOP") throw new IrregularFile(path, "is a link, not a file", { cause: error });
    throw new IrregularFile(path, `cannot be read: ${firstLine(error)}`, { cause: error });
  }
  // two buffers, reused across calls (a fresh MiB a file, zeroed, cost more than hashing a small one): the next
  // chunk is read while this one is hashed
  const pair = spare.pop() ?? [new Uint8Array(HASH_CHUNK), new Uint8Array(HASH_CHUNK)];
  let ahead: Promise<number> | null = null;
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) throw new IrregularFile(path, `is ${kindOf(stat)}, not a regular file`);
    if (stat.size > most) throw tooBig(path, most);
    const hash = createHash("sha256");
    let [now, next] = pair;
    let size = 0;
    let n = fs.readSync(fd, now, 0, HASH_CHUNK, null);
    while (n > 0) {
      size += n;
      if (size > most) throw tooBig(path, most);
      // after a short read (the end of a small file), the end is asked for on this thread: no file-thread hop
      ahead = n < HASH_CHUNK
        ? Promise.resolve(fs.readSync(fd, next, 0, HASH_CHUNK, null))
        : readAsync(fd, next, 0, HASH_CHUNK, null);
      hash.update(now.subarray(0, n));
      n = await ahead;
      ahead = null;
      [now, next] = [next, now];
    }
    return { sha256: hash.digest("hex"), size };
  } catch (error) {
    if (error instanceof IrregularFile) throw error;
    throw new IrregularFile(path, `cannot be read: ${firstLine(error)}`, { cause: error });
  } finally {
    // a read still under way writes into the buffers and uses the descriptor: it ends before either is let go
    await ahead?.catch(() => 0);
    fs.closeSync(fd);
    spare.push(pair);
  }
}

const HASH_CHUNK = 1 << 20;
const spare: [Uint8Array, Uint8Array][] = [];
const readAsync = (fd: number, buffer: Uint8Array, offset: number, length: number, position: null) =>
  new Promise<number>((resolve, reject) =>
    fs.read(fd, buffer, offset, length, position, (error, n) => error ? reject(error) : resolve(n))
  );

/**
 * A plain file opened by {@linkcode openPlainFileSync}, by its descriptor: what `appendWhole` and a reader at an
 * offset need of a `Deno.FsFile`.
 */
export class PlainFile {
  #fd: number | null;
  /** @param path The file. @param fd Its descriptor, which the file now owns. */
  constructor(readonly path: string, fd: number) {
    this.#fd = fd;
  }

  #open(): number {
    if (this.#fd === null) throw new Deno.errors.BadResource(`${this.path} is closed`);
    return this.#fd;
  }

  /** Writes bytes (at the end, for a file opened to append); returns how many were written. */
  writeSync(bytes: Uint8Array): number {
    return fs.writeSync(this.#open(), bytes);
  }

  /** Cuts the file to `length` bytes. */
  truncateSync(length = 0): void {
    fs.ftruncateSync(this.#open(), length);
  }

  /** What the descriptor is now: its size, kind and identity. */
  statSync(): { size: number; isFile: boolean; ino: number; dev: number } {
    const stat = fs.fstatSync(this.#open());
    return { size: stat.size, isFile: stat.isFile(), ino: stat.ino, dev: stat.dev };
  }

  /** Reads into `buffer` from `position`; returns how many bytes came (0 at the end). */
  readSyncAt(buffer: Uint8Array, position: number): number {
    return fs.readSync(this.#open(), buffer, 0, buffer.length, position);
  }

  /** Closes it; closing again does nothing. */
  close(): void {
    if (this.#fd === null) return;
    const fd = this.#fd;
    this.#fd = null;
    fs.closeSync(fd);
  }

  /** Closes it, as `using` does. */
  [Symbol.dispose](): void {
    this.close();
  }
}

/**
 * Opens a plain file of a folder that another party can write (a run's program writes its run folder), in one
 * step that follows no link and does not wait for a FIFO (`O_NOFOLLOW | O_NONBLOCK`), and keeps it only when what
 * was opened is a plain file (and, to write, one with no other hard link): a swap of the path after the open
 * changes nothing, since the file is used by its descriptor. A link planted where the daemon appended a run's span
 * bodies had it write the program's bytes into a file of the user's.
 *
 * @param path The file.
 * @param how `write` to append (else read), `create` to make it when absent, with `mode`.
 * @returns The file.
 * @throws Deno.errors.NotFound when it is absent (and not to be made); IrregularFile for a link, a FIFO, a
 * device, a folder or a file with another hard link, or one that cannot be opened.
 * @example
 * ```ts
 * import { openPlainFileSync } from "./regular_file.ts";
 * using file = openPlainFileSync("deno.json");
 * file.statSync().size;
 * ```
 */
export function openPlainFileSync(
  path: string,
  how: { write?: boolean; create?: boolean; mode?: number } = {},
): PlainFile {
  const flags = (how.write ? fs.constants.O_WRONLY | fs.constants.O_APPEND : O_RDONLY) |
    (how.create ? fs.constants.O_CREAT : 0) | O_NOFOLLOW | O_NONBLOCK;
  let fd: number;
  try {
    fd = fs.openSync(path, flags, how.mode ?? 0o666);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "ENOENT") throw new Deno.errors.NotFound(`${path} does not exist`, { cause: error });
    if (code === "ELOOP") throw new IrregularFile(path, "is a link, not a file", { cause: error });
    // a FIFO with no reader, opened to write without waiting
    if (code === "ENXIO") throw new IrregularFile(path, "is a FIFO, not a regular file", { cause: error });
    throw new IrregularFile(path, `cannot be opened: ${firstLine(error)}`, { cause: error });
  }
  const file = new PlainFile(path, fd);
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) throw new IrregularFile(path, `is ${kindOf(stat)}, not a regular file`);
    if (how.write && stat.nlink > 1) {
      throw new IrregularFile(path, "has another hard link, which may be a file anywhere");
    }
    return file;
  } catch (error) {
    file.close();
    throw error;
  }
}

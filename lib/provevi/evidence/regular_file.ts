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

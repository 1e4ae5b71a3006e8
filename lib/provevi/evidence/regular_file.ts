/**
 * Reading a file that another party puts in place (an agent program's session files and answer, the files that
 * hold its hooks) while that party may still swap it: the file is opened in one step that neither follows a link
 * (`O_NOFOLLOW`) nor waits for a FIFO's writer (`O_NONBLOCK`), and its kind and size are taken from what was
 * opened, so no look before the open can be belied by a swap after it. Only a regular file is read, and at most
 * `most` bytes of it: a FIFO held the reader for ever, and a sparse file of gigabytes took its memory.
 * @module
 */
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

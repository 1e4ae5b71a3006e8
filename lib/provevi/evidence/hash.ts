/**
 * SHA-256 helpers over `node:crypto`, the one hash of the evidence.
 * @module
 */
import { createHash, hash as hashOnce } from "node:crypto";
import { readSync } from "node:fs";
import {
  closeNoWait,
  firstLine,
  IrregularFile,
  type OpenedInfo,
  openNoWaitSync,
  readAsync,
  regularTooBig,
} from "./open_file.ts";
import { openFileNoWait } from "./fd_file.ts";

const encoder = new TextEncoder();

/**
 * The lowercase hex SHA-256 of a text's UTF-8 bytes or of bytes.
 *
 * @param data A text or bytes.
 * @returns 64 lowercase hex digits.
 * @example
 * ```ts
 * import { sha256Hex } from "./hash.ts";
 * sha256Hex("abc"); // "ba7816bf…"
 * ```
 */
export function sha256Hex(data: string | Uint8Array): string {
  // one call, without the stream object createHash builds (a short text: 15 against 30 µs, load 20)
  return hashOnce("sha256", data, "hex");
}

/**
 * Hashes for bytes that this process hashed already, by the very array: {@linkcode sha256Vouched} puts one, and
 * {@linkcode takeVouchedSha256} (the writer's `putPayload`) takes it, so that bytes checked against the hash a
 * pack's record names are stored under it without a second hash. Only the code that hashed an array can vouch
 * for it, so a hash here is always the true hash of its array as it was hashed; weakly held, so an array that
 * is never stored takes its hash with it.
 */
const vouched = new WeakMap<Uint8Array, string>();

/**
 * The SHA-256 of bytes, vouched for to the writer that stores these bytes (this array) next, which then takes
 * it in place of hashing them again. The bytes must not change before they are stored.
 *
 * @param bytes The bytes.
 * @returns 64 lowercase hex digits.
 * @example
 * ```ts
 * import { sha256Vouched, takeVouchedSha256 } from "./hash.ts";
 * const bytes = new TextEncoder().encode("abc");
 * sha256Vouched(bytes); // "ba7816bf…"
 * takeVouchedSha256(bytes); // the same, once; null after
 * ```
 */
export function sha256Vouched(bytes: Uint8Array): string {
  const sha256 = sha256Hex(bytes);
  vouched.set(bytes, sha256);
  return sha256;
}

/**
 * The hash {@linkcode sha256Vouched} made of these very bytes (this array), taken: a second call gets null.
 *
 * @param bytes The bytes to store.
 * @returns Their SHA-256, or null when nobody vouched for them.
 */
export function takeVouchedSha256(bytes: Uint8Array): string | null {
  const sha256 = vouched.get(bytes);
  if (sha256 === undefined) return null;
  vouched.delete(bytes);
  return sha256;
}

/** UTF-8 bytes of a text. */
export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/** True when `text` is 64 lowercase hex digits. */
export function isSha256(text: unknown): text is string {
  return typeof text === "string" && /^[0-9a-f]{64}$/.test(text);
}

/**
 * Hashes a file as a stream, near the speed of the hash itself: while one chunk is hashed on this thread, the
 * next is read into a second buffer by Deno's file thread, so the copy out of the page cache costs no time of
 * its own. A file that fits in one chunk is read with one call and hashed, with no task at all.
 *
 * @param path The file.
 * @param options `follow`: follow a link at the path (the default); `false` refuses one (a file of a folder
 *   that another party writes).
 * @returns Its SHA-256 and size in bytes.
 * @throws Deno.errors.NotFound when the file is missing; ProveviError when it is not a plain file (a pipe).
 */
export async function sha256File(
  path: string,
  options: { follow?: boolean } = {},
): Promise<{ sha256: string; size: number }> {
  const hash = createHash("sha256");
  // opened without waiting: a named pipe at the path (or swapped in after a look) is refused, not waited on
  using file = await openFileNoWait(path, options);
  // Two buffers per file being hashed, reused across calls (several files may be hashed at once).
  const pair = spare.pop() ?? [new Uint8Array(CHUNK), new Uint8Array(CHUNK)];
  try {
    let [now, next] = pair;
    let size = 0;
    let n = file.readSync(now);
    while (n !== null) {
      size += n;
      // A short read is the end of a small file: ask for the end synchronously, not on the file thread.
      const ahead = n < now.length ? Promise.resolve(file.readSync(next)) : file.read(next);
      hash.update(n === now.length ? now : now.subarray(0, n));
      n = await ahead;
      [now, next] = [next, now];
    }
    return { sha256: hash.digest("hex"), size };
  } finally {
    spare.push(pair);
  }
}

/**
 * 1 MiB: large enough that a chunk's read and hash outweigh their calls, small enough that the chunk read is
 * still in the cache when it is hashed (4 MiB chunks were slower).
 */
const CHUNK = 1 << 20;
const spare: [Uint8Array, Uint8Array][] = [];

/**
 * The SHA-256 and size of a regular file that another party puts in place (an agent program's outputs), opened
 * as `readRegularFile` (`open_file.ts`) opens it (no link followed, no FIFO waited on), at most `most` bytes of it. The open, the look at what was opened and a small file's reads
 * are synchronous (a non-blocking open returns at once); a larger file's reads after its first MiB are not.
 *
 * @param path The file.
 * @param most The most bytes read.
 * @returns Its hash (hex) and size.
 * @throws IrregularFile as `readRegularFile` does, and when nothing is there.
 * @example
 * ```ts
 * import { hashRegularFile } from "./hash.ts";
 * const { sha256, size } = await hashRegularFile("deno.json", 1024 * 1024);
 * ```
 */
export async function hashRegularFile(path: string, most: number): Promise<{ sha256: string; size: number }> {
  let opened: ReturnType<typeof openNoWaitSync>;
  try {
    opened = openNoWaitSync(path);
  } catch (error) {
    if (error instanceof IrregularFile) throw error;
    throw new IrregularFile(path, `cannot be read: ${firstLine(error)}`, { cause: error });
  }
  try {
    return await hashOpened(path, opened, most);
  } finally {
    closeNoWait(opened.fd);
  }
}

/**
 * {@linkcode hashRegularFile} of a file already opened without waiting and checked (`open_tree.ts` opens the
 * files of a folder so); the descriptor stays the caller's to close.
 *
 * @param path The file, to name it.
 * @param opened Its descriptor and what it is.
 * @param most The most bytes read.
 * @returns Its hash (hex) and size.
 * @throws IrregularFile when it is not a regular file, holds more than `most` bytes, or cannot be read.
 */
export async function hashOpened(
  path: string,
  opened: { fd: number; info: OpenedInfo },
  most: number,
): Promise<{ sha256: string; size: number }> {
  const { fd, info } = opened;
  // two buffers, reused across calls (a fresh MiB a file, zeroed, cost more than hashing a small one): the next
  // chunk is read while this one is hashed
  const pair = spare.pop() ?? [new Uint8Array(CHUNK), new Uint8Array(CHUNK)];
  let ahead: Promise<number> | null = null;
  try {
    if (!info.isFile) throw new IrregularFile(path, `is ${info.kind}, not a regular file`);
    if (info.size > most) throw regularTooBig(path, most);
    const hash = createHash("sha256");
    let [now, next] = pair;
    let size = 0;
    let n = readSync(fd, now, 0, CHUNK, null);
    while (n > 0) {
      size += n;
      if (size > most) throw regularTooBig(path, most);
      // after a short read (the end of a small file), the end is asked for on this thread: no file-thread hop
      ahead = n < CHUNK
        ? Promise.resolve(readSync(fd, next, 0, CHUNK, null))
        : readAsync(fd, next, 0, CHUNK, null);
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
    spare.push(pair);
  }
}

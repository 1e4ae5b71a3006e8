/**
 * The caps of what the catalog reads from a store that another party serves or writes (an S3 server, a git
 * repository, a folder), and the one way it reads such bytes: whole within a cap ({@linkcode readStreamCapped},
 * through the guard's `readBytesCapped`), or into a file within a cap ({@linkcode writeStreamCapped}), each read
 * waiting a bounded time. A store never reads such bytes whole without a cap: a server that serves a huge object,
 * or a body that never ends, took all the memory of `provr` or `prove`, and one that stalls held them for ever.
 * @module
 */
import { readBytesCapped } from "../provevi/guard/body_bytes.ts";
import { CatalogError } from "./errors.ts";

const KiB = 1024;
const MiB = 1024 * KiB;

/** The most a branch's ref takes: a commit ID and a newline. */
export const REF_MAX_BYTES = KiB;
/** The most a commit of a store takes (a map of every key to its version): a catalog is MiBs. */
export const COMMIT_MAX_BYTES = 64 * MiB;
/** The most of any other answer of a server the catalog reads (a page of a list, some 600 KiB; an error). */
export const ANSWER_MAX_BYTES = 8 * MiB;
/** The most a file the catalog hands over in memory (`Catalog.read`) takes: a payload pack's most. */
export const READ_MAX_BYTES = 1024 * MiB;
/** The most a small file of the catalog's own (a cache's record, a staging list) takes. */
export const RECORD_MAX_BYTES = 4 * MiB;
/** The most seconds a read waits on a server for its next bytes, unless the store's config says another. */
export const STALL_SECONDS = 60;

/**
 * A size as a message shows it: `10 bytes`, `1 KiB`, `64 MiB`.
 *
 * @param bytes The size.
 * @returns The words.
 */
export function sizeText(bytes: number): string {
  if (bytes >= MiB && bytes % MiB === 0) return `${bytes / MiB} MiB`;
  if (bytes >= KiB && bytes % KiB === 0) return `${bytes / KiB} KiB`;
  return `${bytes} ${bytes === 1 ? "byte" : "bytes"}`;
}

/** Where a refused read came from, for its one line: what, and the cap's reason. */
export interface CappedWhat {
  /** What is read, as the message names it: `store "b": the ref of branch "main" in bucket "x"`. */
  what: string;
  /** Why the cap is what it is: `the most a ref takes`. */
  why: string;
  /** What to do. */
  fix?: string;
}

/** A read refused for its size or its stall, in one line; nothing was kept of it. */
export class CappedReadError extends CatalogError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "CappedReadError";
  }
}

/** The store's own refusal of an answer (too large, stalled), wherever the SDK put it among its errors' causes. */
export function refusalIn(error: unknown): CappedReadError | null {
  for (let e = error, depth = 0; e && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof CappedReadError) return e;
  }
  return null;
}

/** The refusal of what runs past `max`. */
export function tooLarge(of: CappedWhat, max: number): CappedReadError {
  return new CappedReadError(
    `${of.what} is larger than ${sizeText(max)}, ${of.why}; it was not read${of.fix ? `: ${of.fix}` : ""}`,
  );
}

/** The refusal of a read that got no bytes in `stallMs`. */
export function stalled(of: CappedWhat, stallMs: number): CappedReadError {
  return new CappedReadError(
    `${of.what}: the server sent nothing for ${stallMs / 1000} s, and the read was given up${
      of.fix ? `: ${of.fix}` : ""
    }`,
  );
}

/** A reader of the stream whose every read fails with `stalled()` after `stallMs` without bytes. */
function timedReader(
  stream: ReadableStream<Uint8Array>,
  stallMs: number,
  onStall: () => Error,
): Pick<ReadableStreamDefaultReader<Uint8Array>, "read" | "cancel" | "releaseLock"> {
  const reader = stream.getReader();
  return {
    read: () => {
      if (!Number.isFinite(stallMs)) return reader.read();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<never>((_, reject) => timer = setTimeout(() => reject(onStall()), stallMs));
      return Promise.race([reader.read(), late]).finally(() => clearTimeout(timer));
    },
    cancel: (reason?: unknown) => reader.cancel(reason),
    releaseLock: () => reader.releaseLock(),
  };
}

/**
 * Reads a stream whole, at most `max` bytes, each read waiting at most `stallMs`; past either, the stream is
 * cancelled and the read refused in one line.
 *
 * @param stream The body.
 * @param limits `max`, `stallMs` (Infinity for none) and what is read, for the message.
 * @returns The bytes.
 * @throws CappedReadError past the cap or the time limit; the stream's own error otherwise.
 * @example
 * ```ts
 * import { readStreamCapped } from "./_capped_read.ts";
 * const bytes = await readStreamCapped(new Blob(["abc"]).stream(), {
 *   max: 10, stallMs: 1000, what: "a test", why: "the most it takes",
 * });
 * bytes.length; // 3
 * ```
 */
export async function readStreamCapped(
  stream: ReadableStream<Uint8Array>,
  limits: CappedWhat & { max: number; stallMs: number },
): Promise<Uint8Array> {
  return await readBytesCapped(timedReader(stream, limits.stallMs, () => stalled(limits, limits.stallMs)), {
    max: limits.max,
    tooLarge: () => tooLarge(limits, limits.max),
  });
}

/**
 * Writes a stream to a new file, at most `max` bytes, each read waiting at most `stallMs`: memory holds a chunk
 * at a time, whatever the size. Past either, the stream is cancelled and the write refused in one line (the
 * part written stays, for the caller to remove with the rest of its work).
 *
 * @param stream The body.
 * @param path The file, made new.
 * @param limits `max`, `stallMs` and what is read, for the message.
 * @returns The bytes written.
 * @throws CappedReadError past the cap or the time limit; the stream's or the file's own error otherwise.
 */
export async function writeStreamCapped(
  stream: ReadableStream<Uint8Array>,
  path: string,
  limits: CappedWhat & { max: number; stallMs: number },
): Promise<number> {
  const reader = timedReader(stream, limits.stallMs, () => stalled(limits, limits.stallMs));
  let size = 0;
  let file: Deno.FsFile | null = null;
  try {
    file = await Deno.open(path, { write: true, createNew: true });
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limits.max) throw tooLarge(limits, limits.max);
      for (let at = 0; at < value.length;) at += await file.write(value.subarray(at));
    }
  } catch (error) {
    await reader.cancel(error).catch(() => {});
    throw error;
  } finally {
    file?.close();
    reader.releaseLock();
  }
  return size;
}

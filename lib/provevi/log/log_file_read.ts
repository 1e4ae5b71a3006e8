/**
 * Reads of the files in a log's folder (a store's `.log/`, a witness's state), never more than such a file can
 * hold. Anyone who can write the folder can put a file of many gigabytes (or a sparse one) where a checkpoint, a
 * tile or the key belongs, and each was read whole: a reader's memory went with it. Each read now refuses a link
 * or a file that is not plain, and a file past its cap, with one line naming the file.
 * @module
 */
import { readCapped, readCappedSync } from "../evidence/open_file.ts";
import { MAX_ENTRY } from "./log_storage.ts";
import { TILE_WIDTH } from "./tiles.ts";

/**
 * The most a note of the log holds (a checkpoint with its cosignatures, the witnessed checkpoint, a witness's
 * state, the key file): a few hundred bytes each, and a witness takes no request body past 64 KiB.
 */
export const LOG_NOTE_MAX_BYTES = 1024 * 1024;

/** The most a tile of the log holds: a full entry bundle, each entry at its largest with its two-byte length. */
export const LOG_TILE_MAX_BYTES = TILE_WIDTH * (2 + MAX_ENTRY);

const decoder = new TextDecoder();

/**
 * The text of a log's file, or null when it is not there.
 *
 * @param path The file.
 * @param most The most bytes it may hold; {@linkcode LOG_NOTE_MAX_BYTES} by default.
 * @returns Its text (UTF-8, an invalid byte read as U+FFFD, as a note's parser then refuses), or null.
 * @throws ProveviError for a link, a file that is not plain, or one past `most` bytes.
 */
export function readLogTextSync(path: string, most = LOG_NOTE_MAX_BYTES): string | null {
  const bytes = readLogBytesSync(path, most);
  return bytes === null ? null : decoder.decode(bytes);
}

/**
 * The bytes of a log's file, or null when it is not there.
 *
 * @param path The file.
 * @param most The most bytes it may hold.
 * @returns Its bytes, or null.
 * @throws ProveviError for a link, a file that is not plain, or one past `most` bytes.
 */
export function readLogBytesSync(path: string, most: number): Uint8Array | null {
  try {
    return readCappedSync(path, most);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

/**
 * {@linkcode readLogTextSync}, read asynchronously.
 *
 * @param path The file.
 * @param most The most bytes it may hold; {@linkcode LOG_NOTE_MAX_BYTES} by default.
 * @returns Its text, or null when it is not there.
 * @throws ProveviError for a link, a file that is not plain, or one past `most` bytes.
 */
export async function readLogText(path: string, most = LOG_NOTE_MAX_BYTES): Promise<string | null> {
  try {
    return decoder.decode(await readCapped(path, most));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

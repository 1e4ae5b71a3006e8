/**
 * Writes of the files in a log's folder that follow no link planted at their names: anyone who can write the
 * folder can put a link where the next tile or a scratch file goes, and a plain write follows it onto the file it
 * names (a user's own), then the rename of a scratch file puts the link in place of the checkpoint.
 * @module
 */
import { closeSync, constants, writeSync } from "node:fs";
import { openSyncNoFollow } from "../evidence/no_follow.ts";

const flags = constants as unknown as Record<string, number | undefined>;
/** Open to write, made or cut to nothing, never through a link (O_NOFOLLOW: a link at the name fails). */
const WRITE_NO_FOLLOW = (flags.O_WRONLY ?? 1) | (flags.O_CREAT ?? 0) | (flags.O_TRUNC ?? 0) |
  (flags.O_NOFOLLOW ?? 0);

/**
 * Writes a scratch file that is renamed into place after: whatever is at its name (a file a kill left, or a link)
 * is removed, and the file made new.
 *
 * @param path The scratch file.
 * @param bytes Its bytes.
 */
export function writeScratchSync(path: string, bytes: Uint8Array): void {
  try {
    Deno.removeSync(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  Deno.writeFileSync(path, bytes, { createNew: true });
}

/**
 * Writes a tile or an entry bundle at its name, never through a link there: a link is removed and the tile
 * written in its place (a tile already there is written over, as a plain write does).
 *
 * @param path The tile.
 * @param bytes Its bytes.
 * @throws Deno.errors.NotFound when its folder is missing.
 */
export function writeTileSync(path: string, bytes: Uint8Array): void {
  let fd: number;
  try {
    fd = openSyncNoFollow(path, WRITE_NO_FOLLOW, 0o666);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "ENOENT") throw new Deno.errors.NotFound((error as Error).message, { cause: error });
    if (code !== "ELOOP") throw error;
    Deno.removeSync(path);
    fd = openSyncNoFollow(path, WRITE_NO_FOLLOW, 0o666);
  }
  try {
    for (let n = 0; n < bytes.length;) n += writeSync(fd, bytes, n, bytes.length - n);
  } finally {
    closeSync(fd);
  }
}

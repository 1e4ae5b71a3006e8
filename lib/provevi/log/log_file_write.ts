/**
 * Writes of the files in a log's folder that follow no link planted at their names: anyone who can write the
 * folder can put a link where the next tile or a scratch file goes, and a plain write follows it onto the file it
 * names (a user's own), then the rename of a scratch file puts the link in place of the checkpoint.
 * @module
 */
import { closeSync, constants, ftruncateSync, writeSync } from "node:fs";
import { IrregularFile, nodeOpener, openAtPathSync } from "../evidence/open_file.ts";
import { openFileNoWaitSync } from "../evidence/fd_file.ts";

/** Open to write (made when absent, cut to nothing once checked), never through a link, never waiting on a FIFO. */
function openTile(path: string): number {
  const { opened: fd, info } = openAtPathSync(
    path,
    { create: true },
    nodeOpener(constants.O_WRONLY | constants.O_NONBLOCK),
  );
  // a hard link at the name may be a file of the user's anywhere, which the cut and the write would reach
  if (!info.isFile || info.nlink > 1) {
    closeSync(fd);
    throw new IrregularFile(
      path,
      info.isFile ? "has another hard link" : `is ${info.kind}, not a plain file`,
    );
  }
  ftruncateSync(fd, 0);
  return fd;
}

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
    if (error instanceof Deno.errors.NotFound) {
      // nothing there
    } else if (Deno.lstatSync(path).isDirectory) moveAside(path); // a folder put there stopped every append
    else throw error;
  }
  Deno.writeFileSync(path, bytes, { createNew: true });
}

/**
 * Writes a tile or an entry bundle at its name, never through a link there: a link (or a hard link, or a FIFO) is
 * removed and the tile written in its place (a tile already there is written over, as a plain write does).
 *
 * @param path The tile.
 * @param bytes Its bytes.
 * @throws Deno.errors.NotFound when its folder is missing.
 */
export function writeTileSync(path: string, bytes: Uint8Array): void {
  let fd: number;
  try {
    fd = openTile(path);
  } catch (error) {
    if (!(error instanceof IrregularFile)) throw error;
    moveAside(path);
    fd = openTile(path);
  }
  try {
    for (let n = 0; n < bytes.length;) n += writeSync(fd, bytes, n, bytes.length - n);
  } finally {
    closeSync(fd);
  }
}

/**
 * Opens a file of the log's own that it keeps and writes in place (the pending file, the lock), to read and write,
 * made when absent. Anyone who can write the log's folder can put there a link (to a file of the user's, or
 * dangling), a FIFO, a folder or a hard link, and every later append stopped on it (or wrote through it): what is
 * not a plain file of one link is moved aside, named `<name>.moved-<time>-<random>` (the one trace of it), and the
 * file made anew. A plain file is never moved, so two appenders that meet a plant at once move only the plant.
 *
 * @param path The file.
 * @returns The file, and whether it was made (its folder then wants an fsync).
 * @throws Deno.errors.NotFound when its folder is missing; IrregularFile when a plant comes back after two moves.
 */
export function openLogFileSync(path: string): { file: Deno.FsFile; made: boolean } {
  for (let tries = 0;; tries++) {
    let seen: Deno.FileInfo | null = null;
    try {
      seen = Deno.lstatSync(path);
    } catch { /* nothing there: made */ }
    try {
      return {
        file: openFileNoWaitSync(path, { follow: false, write: true, create: true }),
        made: seen === null,
      };
    } catch (error) {
      if (!(error instanceof IrregularFile) || tries >= 2) throw error;
    }
    try {
      const now = Deno.lstatSync(path);
      if (!now.isFile || (now.nlink ?? 1) > 1) moveAside(path);
    } catch { /* gone meanwhile */ }
  }
}

/** Moves what is at a name of the log's folder aside, whole (a folder too), as `<name>.moved-<time>-<random>`. */
function moveAside(path: string): void {
  Deno.renameSync(path, `${path}.moved-${Date.now()}-${crypto.randomUUID().slice(0, 8)}`);
}

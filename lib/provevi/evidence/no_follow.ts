/**
 * Opening a file by a path that another party can write, without following a link there, also where Deno drops
 * `O_NOFOLLOW`: with any permission short of `--allow-all` (every command runs with its permission set), Deno's
 * `node:fs` checks the path and opens what a link at it names, so that a link planted at a name was read or
 * written through (a tile, a span file, a session file) however the open was asked. Here the flag is asked and
 * its effect checked: the file opened must be the one at the path, and the path no link, by a look at the path
 * before the open and after it (a link swapped in between is opened but refused before a byte is read or
 * written), and a file to be cut to nothing is cut only once it is known to be the one at the path.
 * @module
 */
import fs from "node:fs";

const { O_CREAT, O_EXCL, O_TRUNC, O_NOFOLLOW } = fs.constants;

/** An error as `node:fs` gives it for a link where none may be: code `ELOOP`. */
function linkError(path: string, why: string): Error {
  return Object.assign(new Error(`ELOOP: ${why}, open '${path}'`), { code: "ELOOP", path });
}

function lookAt(path: string): Deno.FileInfo | null {
  try {
    return Deno.lstatSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

/**
 * `fs.openSync(path, flags | O_NOFOLLOW, mode)`, with the flag's effect kept where Deno drops it: a link at the
 * path fails with code `ELOOP`, as does a path changed between the look and the open; `O_TRUNC` cuts the file only
 * once it is known to be the one at the path, and `O_CREAT` makes a file only where nothing is (as `O_EXCL` does,
 * which no link passes).
 *
 * @param path The file.
 * @param flags `node:fs` open flags (`O_NOFOLLOW` is added).
 * @param mode The mode of a file made.
 * @returns The descriptor, to close with `fs.closeSync`.
 * @throws Error with code `ELOOP` for a link at the path, or a path that changed while it was opened; the
 * errors of `fs.openSync` otherwise.
 * @example
 * ```ts
 * import fs from "node:fs";
 * import { openSyncNoFollow } from "./no_follow.ts";
 * const fd = openSyncNoFollow("deno.json", fs.constants.O_RDONLY);
 * fs.closeSync(fd);
 * ```
 */
export function openSyncNoFollow(path: string, flags: number, mode = 0o666): number {
  for (let tries = 0;; tries++) {
    const before = lookAt(path);
    if (before?.isSymlink) throw linkError(path, "a link is where no link may be");
    if (before === null && flags & O_CREAT) {
      // nothing there: made new, which fails on anything put there since, a link included
      try {
        return fs.openSync(path, (flags | O_EXCL | O_NOFOLLOW) & ~O_TRUNC, mode);
      } catch (error) {
        if ((error as { code?: string }).code !== "EEXIST" || flags & O_EXCL || tries >= 3) throw error;
        continue;
      }
    }
    const fd = fs.openSync(path, (flags | O_NOFOLLOW) & ~O_TRUNC & ~O_CREAT, mode);
    try {
      const opened = fs.fstatSync(fd);
      const after = lookAt(path);
      const same = (look: Deno.FileInfo | null) =>
        look !== null && !look.isSymlink && look.ino !== null && Number(opened.ino) === look.ino &&
        Number(opened.dev) === look.dev;
      if (!same(after) || (before !== null && !same(before))) {
        throw linkError(path, "the path changed while it was opened (a link put in place)");
      }
      if (flags & O_TRUNC) fs.ftruncateSync(fd, 0);
      return fd;
    } catch (error) {
      fs.closeSync(fd);
      throw error;
    }
  }
}

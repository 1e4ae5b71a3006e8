/**
 * A folder another party can change while it is copied or hashed (a run's `output/`, a folder the catalog pins),
 * walked so that nothing outside it is read. A walk that lists a folder, then opens `<folder>/<sub>/<file>` by
 * its path, follows `<sub>` when it was swapped for a link after the listing (to `~/.ssh`, say): the open's
 * no-follow flag guards the last part of a path only, and Deno has no `openat` to open by a folder's descriptor.
 * So each step of the walk reaches its folder one name at a time from the root, checks that each folder reached
 * is the one the walk listed (its device and inode, against the `lstat` its parent's listing took: a link
 * swapped in since reaches its target, another inode), lists and opens by names in it (no link followed, no FIFO
 * waited on, checked again by `open_file.ts`), and keeps a file only when it is the inode its listing saw; the
 * files are then read by their descriptors. A folder is reached by its descriptor's `/proc/self/fd/` link where
 * Deno opens one (`openat` by another name: under `--allow-all`, as tests run): sound. Under a permission set,
 * as every command runs, Deno refuses that link and makes every path absolute for the system to walk again
 * (even after a `chdir`: a first version went in and out of each folder, and 1 walk in 1,000 still read the
 * user's file), so the folder's path is looked at before and after each step instead: a swap must then come and
 * go between looks a few system calls apart, and be there again for the file's listing. Narrow, not closed.
 * @module
 */
import fs from "node:fs";
import { join, resolve } from "node:path";
import { FdFile } from "./fd_file.ts";
import { IrregularFile, kindOf, type OpenedInfo, openNoWaitSync, refuseUnlessPlain } from "./open_file.ts";

/** One name of a folder the walk checked, with the look (`lstat`) taken there. */
export interface TreeEntry {
  /** The path under the walk's root, with `/`. */
  rel: string;
  /** The absolute path, to name it in a message (never to open it by). */
  abs: string;
  /** What was there when the folder was listed: a link is seen as a link. */
  look: Deno.FileInfo;
}

/** A folder listed (given before its files), or a plain file opened, of {@linkcode openTree}. */
export type TreeItem =
  | { kind: "folder"; rel: string; abs: string }
  | { kind: "file"; rel: string; abs: string; file: FdFile; info: OpenedInfo };

/** Which names {@linkcode openTree} takes. */
export interface TreeOptions {
  /**
   * Whether to take a name: a folder taken is entered, a plain file opened, anything else taken (a link, a FIFO,
   * a device) refused as an IrregularFile. Throw to refuse the walk; return false to leave the name out.
   */
  take?: (entry: TreeEntry) => boolean;
  /**
   * Called with a name taken that is refused when opened (a link, a FIFO or a device swapped in since the
   * listing, or one gone), which the walk then leaves out; without it, the refusal ends the walk.
   */
  refused?: (entry: TreeEntry, error: IrregularFile | Deno.errors.NotFound) => void;
}

/** The files opened in one step: enough for a folder of many files without holding a descriptor for each. */
const BATCH = 32;

interface Folder {
  rel: string;
  abs: string;
  /** The names from the root, each with the folder's device and inode as its parent's listing saw it. */
  steps: { name: string; dev: number; ino: number }[];
}

/**
 * The folders and plain files under `root`, each folder before its content, each file opened (closed when the
 * walk goes on; read it before). A folder that is not the one the walk listed when it is entered (a link or
 * another folder swapped in), or a name taken that is not a plain file when opened, is refused.
 *
 * @param root The folder, which must not be a link.
 * @param options Which names to take (all, by default).
 * @returns The folders and opened files.
 * @throws Deno.errors.NotFound when `root` (or a folder or file since listed) is gone; IrregularFile for a link
 * or anything but a folder at `root`, a folder changed while it was walked, a name taken that is not a plain
 * file; what `take` throws.
 */
export async function* openTree(root: string, options: TreeOptions = {}): AsyncGenerator<TreeItem> {
  const abs = resolve(root);
  const look = Deno.lstatSync(abs);
  if (!look.isDirectory) {
    throw new IrregularFile(
      abs,
      look.isSymlink ? "is a link, not a folder" : `is ${kindOf(look)}, not a folder`,
    );
  }
  const top = { abs, dev: look.dev, ino: look.ino ?? 0 };
  const take = options.take ?? (() => true);
  const pending: Folder[] = [{ rel: "", abs, steps: [] }];
  while (pending.length > 0) {
    const folder = pending.pop()!;
    const entries = inFolder(
      top,
      folder,
      (here) =>
        [...Deno.readDirSync(here)].map((e) => e.name).sort().map((name) => ({
          rel: folder.rel === "" ? name : `${folder.rel}/${name}`,
          abs: join(folder.abs, name),
          look: Deno.lstatSync(here + name),
        })),
    );
    yield { kind: "folder", rel: folder.rel, abs: folder.abs };
    const files: TreeEntry[] = [];
    const folders: Folder[] = [];
    for (const entry of entries) {
      if (!take(entry)) continue;
      if (entry.look.isDirectory) {
        const step = {
          name: entry.abs.slice(folder.abs.length + 1),
          dev: entry.look.dev,
          ino: entry.look.ino ?? 0,
        };
        folders.push({ rel: entry.rel, abs: entry.abs, steps: [...folder.steps, step] });
      } else files.push(entry);
    }
    for (let at = 0; at < files.length; at += BATCH) {
      const opened = inFolder(
        top,
        folder,
        (here) => openAll(here, files.slice(at, at + BATCH), options.refused),
        (made) => made.forEach((item) => item.file.close()),
      );
      try {
        for (const item of opened) yield item;
      } finally {
        for (const item of opened) item.file.close();
      }
    }
    pending.push(...folders.reverse());
  }
}

/** Opens each file by its name in the folder `here` reaches; all closed when one is refused. */
function openAll(
  here: string,
  entries: TreeEntry[],
  refused: TreeOptions["refused"],
): Extract<TreeItem, { kind: "file" }>[] {
  const opened: Extract<TreeItem, { kind: "file" }>[] = [];
  try {
    for (const entry of entries) {
      const name = entry.abs.slice(entry.abs.lastIndexOf("/") + 1);
      let fd: number, info: OpenedInfo;
      try {
        ({ fd, info } = openNoWaitSync(here + name, { follow: false }));
      } catch (error) {
        const why = named(error, entry.abs);
        if (!refused || !(why instanceof IrregularFile || why instanceof Deno.errors.NotFound)) throw why;
        refused(entry, why);
        continue;
      }
      const file = new FdFile(fd);
      if (!info.isFile && refused) {
        file.close();
        refused(entry, new IrregularFile(entry.abs, `is ${info.kind}, not a plain file`));
        continue;
      }
      // the file the listing saw, not one swapped in since (or reached by a folder swapped for a link)
      const other = info.isFile && (info.dev !== entry.look.dev || info.ino !== (entry.look.ino ?? 0));
      if (other && refused) {
        file.close();
        refused(entry, changed(entry.abs));
        continue;
      }
      opened.push({ kind: "file", rel: entry.rel, abs: entry.abs, file, info });
      refuseUnlessPlain(entry.abs, info, false);
      if (other) throw changed(entry.abs);
    }
    return opened;
  } catch (error) {
    for (const item of opened) item.file.close();
    throw error;
  }
}

/** An error of an open by a bare name, naming the file by its absolute path. */
function named(error: unknown, abs: string): unknown {
  if (error instanceof IrregularFile) return new IrregularFile(abs, error.reason, { cause: error });
  if (error instanceof Deno.errors.NotFound) return new Deno.errors.NotFound(`${abs} does not exist`);
  return error;
}

/** False once Deno refused a folder's `/proc/self/fd/` link here (a permission set, or another system). */
let procDirs = Deno.build.os === "linux";

const flags = fs.constants as unknown as Record<string, number | undefined>;
const DIR_NO_FOLLOW = (flags.O_RDONLY ?? 0) | (flags.O_DIRECTORY ?? 0) | (flags.O_NOFOLLOW ?? 0);

/**
 * Runs `fn` with the way to `folder`'s names (`here` + name), reached from the root one name at a time, each
 * folder checked to be the one the walk listed. Where Deno opens a folder descriptor's `/proc/self/fd/` link
 * (under `--allow-all`), `here` is that link (an `openat` by another name); else (a permission set) it is the
 * folder's path, looked at before and after ({@linkcode byLooks}). `fn` must be synchronous and reach the file
 * system only by `here` + a name; `dispose` lets go of what it made when the walk refuses the folder after it.
 */
function inFolder<T>(
  top: { abs: string; dev: number; ino: number },
  folder: Folder,
  fn: (here: string) => T,
  dispose: (made: T) => void = () => {},
): T {
  if (procDirs) {
    let fd: number | null = null;
    try {
      fd = openDir(top.abs, top, top.abs);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied)) {
        throw error;
      }
      procDirs = false;
    }
    if (fd !== null) {
      try {
        let at = top.abs;
        for (const step of folder.steps) {
          at = join(at, step.name);
          const next = openDir(`/proc/self/fd/${fd}/${step.name}`, step, at);
          fs.closeSync(fd);
          fd = next;
        }
        return fn(`/proc/self/fd/${fd}/`);
      } finally {
        fs.closeSync(fd);
      }
    }
  }
  return byLooks(top, folder, fn, dispose);
}

/** Opens a folder (no link followed) and refuses it unless it is the one seen; its descriptor is the caller's. */
function openDir(path: string, seen: { dev: number; ino: number }, abs: string): number {
  let fd: number;
  try {
    fd = fs.openSync(path, DIR_NO_FOLLOW);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "ENOENT") throw new Deno.errors.NotFound(`${abs} does not exist`);
    if (code === "ENOTDIR" || code === "ELOOP") throw changed(abs);
    throw error;
  }
  try {
    const now = Deno.statSync(`/proc/self/fd/${fd}`); // refused under a permission set: the caller goes inside
    if (now.dev !== seen.dev || (now.ino ?? 0) !== seen.ino) throw changed(abs);
    return fd;
  } catch (error) {
    fs.closeSync(fd);
    throw error;
  }
}

function changed(abs: string): IrregularFile {
  return new IrregularFile(abs, "changed while it was walked (a link or another folder put in its place)");
}

/**
 * {@linkcode inFolder} by paths, where Deno opens no `/proc/self/fd/` link (a permission set): Deno then makes
 * every path absolute and the system walks it again, so no step can hold a folder; the folder's path is looked
 * at (each part from the root a folder, no link, the inode listed) before `fn` and again after it, and what `fn`
 * made is let go (`dispose`) when the second look differs. A link swapped in for a folder must then come and go
 * between two looks of a few system calls, and be back for the listing's look at the file (its inode is
 * compared with what was opened): narrow, not closed, as no call of Deno's opens at a folder's descriptor there.
 */
function byLooks<T>(
  top: { abs: string; dev: number; ino: number },
  folder: Folder,
  fn: (here: string) => T,
  dispose: (made: T) => void,
): T {
  const at = lookChain(top, folder);
  const made = fn(`${at}/`);
  try {
    lookChain(top, folder);
    return made;
  } catch (error) {
    dispose(made);
    throw error;
  }
}

/** The folder's absolute path, once each part of it from the root is the folder the walk listed. */
function lookChain(top: { abs: string; dev: number; ino: number }, folder: Folder): string {
  look(top.abs, top, top.abs);
  let at = top.abs;
  for (const step of folder.steps) {
    at = join(at, step.name);
    look(at, step, at);
  }
  return at;
}

/** Refuses a path unless it is a folder, not a link, of the inode seen. */
function look(path: string, seen: { dev: number; ino: number }, abs: string): void {
  let now: Deno.FileInfo;
  try {
    now = Deno.lstatSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) throw new Deno.errors.NotFound(`${abs} does not exist`);
    throw error;
  }
  if (!now.isDirectory || now.dev !== seen.dev || (now.ino ?? 0) !== seen.ino) throw changed(abs);
}

/**
 * A folder another party can change while it is copied (a run's `output/`, a folder the catalog pins), walked so
 * that nothing outside it is reached. A walk that lists a folder, then opens `<folder>/<sub>/<file>` by its path,
 * follows `<sub>` when it was swapped for a link after the listing (to `~/.ssh`, say): the open's no-follow flag
 * guards the last part of a path only, and Deno has no `openat` to open by a folder's descriptor. So each step of
 * the walk reaches the folder one name at a time from the root, checks that each folder reached is the one the
 * walk listed (its device and inode, against the `lstat` its parent's listing took: a link swapped in since
 * reaches its target, another inode), then lists and opens by names in it (no link followed, no FIFO waited on,
 * checked again by `open_file.ts`), all in one synchronous step; the files are then read by their descriptors.
 * A folder is reached by its descriptor's `/proc/self/fd/` link where Deno opens one (`openat` by another name:
 * under `--allow-all`, as tests run), else (under a permission set, as every command runs) from inside it: the
 * process enters it (`chdir`) and goes back before the step ends, so no other code of the process runs while it
 * is elsewhere, and under a permission set Deno makes every path of an op absolute when the op is called (400
 * reads of a relative path, started before such steps: none went astray under `--allow-read`, 6 under `-A`,
 * which is why `-A` takes the other way).
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
        [...Deno.readDirSync(here === "" ? "." : here)].map((e) => e.name).sort().map((name) => ({
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
      const opened = inFolder(top, folder, (here) => openAll(here, files.slice(at, at + BATCH)));
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
function openAll(here: string, entries: TreeEntry[]): Extract<TreeItem, { kind: "file" }>[] {
  const opened: Extract<TreeItem, { kind: "file" }>[] = [];
  try {
    for (const entry of entries) {
      const name = entry.abs.slice(entry.abs.lastIndexOf("/") + 1);
      let fd: number, info: OpenedInfo;
      try {
        ({ fd, info } = openNoWaitSync(here + name, { follow: false }));
      } catch (error) {
        throw named(error, entry.abs);
      }
      const file = new FdFile(fd);
      opened.push({ kind: "file", rel: entry.rel, abs: entry.abs, file, info });
      refuseUnlessPlain(entry.abs, info, false);
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
 * Runs `fn` with the way to `folder`'s names (`here` + name), entered from the root one name at a time, each
 * folder checked to be the one the walk saw. Where Deno opens a folder descriptor's `/proc/self/fd/` link (under
 * `--allow-all`), `here` is that link (an `openat` by another name) and the process stays where it is; else (a
 * permission set) `here` is "" and the process is in the folder until this returns or throws. `fn` must be
 * synchronous and reach the file system only by `here` + a name.
 */
function inFolder<T>(
  top: { abs: string; dev: number; ino: number },
  folder: Folder,
  fn: (here: string) => T,
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
  return fromInside(top, folder, fn);
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

/** {@linkcode inFolder} from inside the folder: `chdir` to it, checked, and back. */
function fromInside<T>(
  top: { abs: string; dev: number; ino: number },
  folder: Folder,
  fn: (here: string) => T,
): T {
  const back = Deno.cwd();
  try {
    enter(top.abs, top, top.abs);
    let at = top.abs;
    for (const step of folder.steps) {
      at = join(at, step.name);
      enter(step.name, step, at);
    }
    return fn("");
  } finally {
    Deno.chdir(back);
  }
}

/** Enters a folder and refuses it unless it is the one seen (`chdir` follows a link: the inode tells). */
function enter(path: string, seen: { dev: number; ino: number }, abs: string): void {
  try {
    Deno.chdir(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) throw new Deno.errors.NotFound(`${abs} does not exist`);
    if (error instanceof Deno.errors.NotADirectory) throw changed(abs);
    throw error;
  }
  const now = Deno.statSync(".");
  if (now.dev !== seen.dev || (now.ino ?? 0) !== seen.ino) throw changed(abs);
}

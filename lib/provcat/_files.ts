/**
 * File helpers of the catalog: walking a folder, hashing files and folders, copying a file or folder another
 * party can change (by what it opened, never by its path again), and making a tree read-only or writable again.
 * @module
 */
import { createHash } from "node:crypto";
import { dirname, join, relative, sep } from "node:path";
import { CatalogError } from "./errors.ts";
import { IrregularFile } from "../provevi/evidence/open_file.ts";
import { type FileReads, openFileNoWait, openFileNoWaitSync } from "../provevi/evidence/fd_file.ts";
import { openTree, type TreeEntry } from "../provevi/evidence/open_tree.ts";

/** One file of a folder, by its `/`-separated path under the folder. */
export interface FileEntry {
  /** The path under the folder, with `/`. */
  rel: string;
  /** The absolute path. */
  abs: string;
}

/**
 * The files of a folder, sorted by the UTF-8 bytes of their `/` path, as `LC_ALL=C sort` sorts them (UTF-16
 * order differs for names past U+E000 beside names past U+FFFF).
 * @throws CatalogError for a link, which the catalog does not follow.
 */
export async function walkFiles(root: string): Promise<FileEntry[]> {
  const found: FileEntry[] = [];
  const visit = async (dir: string) => {
    for await (const entry of Deno.readDir(dir)) {
      const abs = join(dir, entry.name);
      if (entry.isSymlink) {
        throw new CatalogError(
          `${abs} is a link; the catalog copies files and folders only, so replace the link`,
        );
      }
      if (entry.isDirectory) await visit(abs);
      else if (entry.isFile) found.push({ rel: relative(root, abs).split(sep).join("/"), abs });
      else {
        // A fifo would block the hash forever, and a device or socket has no content to copy.
        throw new CatalogError(
          `${abs} is not a regular file (a fifo, socket or device); the catalog copies files and folders only, so remove it`,
        );
      }
    }
  };
  await visit(root);
  const bytes = new Map(found.map((f) => [f, encoder.encode(f.rel)]));
  return found.sort((a, b) => compareBytes(bytes.get(a)!, bytes.get(b)!));
}

const encoder = new TextEncoder();

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

/**
 * The local path of a `/` path under `root`, refusing a path that could leave it: an empty, `.` or `..` part.
 * Keys that a URI makes cannot have one, but the names in a git tree or an S3 bucket come from whoever wrote
 * them (`git mktree` takes `..`).
 * @throws CatalogError for such a path.
 */
export function pathUnder(root: string, rel: string, where: string): string {
  const parts = rel.split("/");
  if (parts.some((p) => p === "" || p === "." || p === "..")) {
    throw new CatalogError(
      `${where} holds "${rel}", a path with an empty, . or .. part, which would be written outside ${root}; remove it from the store`,
    );
  }
  return join(root, ...parts);
}

/**
 * A refusal of `open_file.ts` (a file of a folder the catalog hashes, opened in one step that neither waits, as
 * for a FIFO swapped in after the look, nor follows a link) as the catalog's error.
 */
export function asCatalogError(error: unknown): unknown {
  if (!(error instanceof IrregularFile)) return error;
  return new CatalogError(`${error.message}; the catalog reads files only`, { cause: error });
}

/** The lowercase hex SHA-256 of a file's bytes, read as a stream. */
export async function hashFile(path: string): Promise<string> {
  using file = await openFileNoWait(path, { follow: false }).catch((error) => {
    throw asCatalogError(error);
  });
  const size = (await file.stat()).size;
  if (size <= SMALL) {
    // Read whole and hashed by WebCrypto, whose digest runs off the main thread: the files of a folder then
    // hash on every core at once.
    const bytes = new Uint8Array(size);
    let filled = 0;
    while (filled < size) {
      const n = await file.read(bytes.subarray(filled));
      if (n === null) break;
      filled += n;
    }
    const extra = filled === size ? await file.read(new Uint8Array(1)) : null;
    if (filled === size && extra === null) return hex(await crypto.subtle.digest("SHA-256", bytes));
    return streamHash(path); // the file changed size while it was read: hash it as a stream
  }
  return streamHash(path);
}

const SMALL = 16 << 20;
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

function hex(digest: ArrayBuffer): string {
  let out = "";
  for (const b of new Uint8Array(digest)) out += HEX[b];
  return out;
}

/** Hashes a big file with synchronous reads into one buffer, the fastest stream `node:crypto` takes. */
function streamHash(path: string): string {
  const hash = createHash("sha256");
  let opened: FileReads;
  try {
    opened = openFileNoWaitSync(path, { follow: false });
  } catch (error) {
    throw asCatalogError(error);
  }
  using file = opened;
  const buffer = new Uint8Array(4 << 20);
  for (;;) {
    const n = file.readSync(buffer);
    if (n === null) break;
    hash.update(n === buffer.length ? buffer : buffer.subarray(0, n));
  }
  return hash.digest("hex");
}

/**
 * The SHA-256 of a folder: of the sorted list of its files, one line each, `<sha256>  <path>\n` (the format of
 * `sha256sum`, escapes included), so that `find . -type f | LC_ALL=C sort | xargs sha256sum | sha256sum` gives
 * the same hash. Files are hashed a few at a time, so that every core works.
 */
export async function hashFolder(
  root: string,
  options: { sums?: Map<string, string> } = {},
): Promise<string> {
  const files = await walkFiles(root);
  const sums = options.sums ?? new Map<string, string>();
  let next = 0;
  const worker = async () => {
    while (next < files.length) {
      const file = files[next++]!;
      sums.set(file.rel, await hashFile(file.abs));
    }
  };
  await Promise.all(Array.from({ length: Math.min(4, files.length) }, worker));
  return folderHashOf(sums);
}

/** The hash of a folder from the hashes of its files, by their `/` paths: the `sha256sum` list of them, hashed. */
export function folderHashOf(sums: Map<string, string>): string {
  const rels = [...sums.keys()].map((rel) => ({ rel, bytes: encoder.encode(rel) }));
  rels.sort((a, b) => compareBytes(a.bytes, b.bytes));
  return createHash("sha256").update(rels.map(({ rel }) => sumLine(sums.get(rel)!, rel)).join("")).digest(
    "hex",
  );
}

/**
 * One line of `sha256sum`. A name with a newline, a carriage return or a backslash is escaped and the line
 * starts with `\`, as coreutils does: written raw, a name such as `a\n<sha256>  b` would make one file's line
 * read as two, and two folders of different content would share a hash.
 */
function sumLine(sha256: string, path: string): string {
  if (!/[\\\n\r]/.test(path)) return `${sha256}  ${path}\n`;
  const escaped = path.replace(/[\\\n\r]/g, (c) => (c === "\\" ? "\\\\" : c === "\n" ? "\\n" : "\\r"));
  return `\\${sha256}  ${escaped}\n`;
}

/** The SHA-256 of a file or a folder, as {@linkcode hashFile} and {@linkcode hashFolder} give it. */
export async function hashPath(path: string, kind: "file" | "folder"): Promise<string> {
  return kind === "file" ? await hashFile(path) : await hashFolder(path);
}

/** `file`, `folder`, or null when nothing is there. @throws CatalogError for a link, a fifo, a socket or a device. */
export async function kindOf(path: string): Promise<"file" | "folder" | null> {
  try {
    const info = await Deno.lstat(path);
    if (info.isSymlink) {
      throw new CatalogError(`${path} is a link; the catalog copies files and folders only`);
    }
    if (!info.isDirectory && !info.isFile) {
      throw new CatalogError(
        `${path} is not a regular file (a fifo, socket or device); the catalog reads files only`,
      );
    }
    return info.isDirectory ? "folder" : "file";
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

/**
 * True when a file or folder of `kind` is at `path` and hashes to `sha256`. Anything else there (nothing, the
 * other kind, a link, a file that is not a regular file) is false, not an error: the caller replaces it.
 */
export async function holdsHash(path: string, kind: "file" | "folder", sha256: string): Promise<boolean> {
  try {
    return await kindOf(path) === kind && await hashPath(path, kind) === sha256;
  } catch (error) {
    if (error instanceof CatalogError || error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

/**
 * Copies a file or a folder to `dest`, which must not exist. Each file is opened once, following no link and
 * waiting on no FIFO, and copied from what was opened; a folder is walked by `open_tree.ts`, each subfolder
 * entered and checked to be the one listed, so a link or FIFO swapped in after the look (or a subfolder swapped
 * for a link to a folder of the user's) is refused, never followed or waited on. `Deno.copyFile` (a clone where
 * the file system shares extents) is no longer used: it copies by path, which is what such a swap belies.
 * @throws CatalogError for a link, or anything but a plain file or a folder, found or swapped in.
 */
export async function copyTree(src: string, dest: string, kind: "file" | "folder"): Promise<void> {
  if (kind === "file") {
    await Deno.mkdir(dirname(dest), { recursive: true });
    const file = await openFileNoWait(src, { follow: false }).catch((error) => {
      throw asCatalogError(error);
    });
    await copyFrom(file, dest);
    return;
  }
  try {
    for await (const item of openTree(src, { take: refuseOdd })) {
      const target = item.rel === "" ? dest : join(dest, ...item.rel.split("/"));
      if (item.kind === "folder") await Deno.mkdir(target, { recursive: true });
      else await copyFrom(item.file, target);
    }
  } catch (error) {
    throw asCatalogError(error);
  }
}

/** Refuses a link or what is neither a file nor a folder, as {@linkcode walkFiles} does. */
function refuseOdd(entry: TreeEntry): boolean {
  if (entry.look.isSymlink) {
    throw new CatalogError(
      `${entry.abs} is a link; the catalog copies files and folders only, so replace the link`,
    );
  }
  if (!entry.look.isFile && !entry.look.isDirectory) {
    throw new CatalogError(
      `${entry.abs} is not a regular file (a fifo, socket or device); the catalog copies files and folders only, so remove it`,
    );
  }
  return true;
}

/** Writes the rest of an opened file into a new file (which must not exist); closes it. */
async function copyFrom(file: FileReads, dest: string): Promise<void> {
  try {
    await Deno.writeFile(dest, file.readable, { createNew: true });
  } finally {
    try {
      file.close();
    } catch { /* closed by its stream's end */ }
  }
}

/** Makes a file or a folder read-only: files 0444, folders 0555 (no-op where modes do not exist). */
export async function makeReadOnly(path: string): Promise<void> {
  await chmodTree(path, 0o444, 0o555);
}

/** Removes a file or a folder that may be read-only; nothing there is no error. */
export async function removeTree(path: string): Promise<void> {
  try {
    await chmodTree(path, 0o644, 0o755);
    await Deno.remove(path, { recursive: true });
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
}

async function chmodTree(path: string, fileMode: number, dirMode: number): Promise<void> {
  if (Deno.build.os === "windows") return;
  const info = await Deno.lstat(path);
  if (info.isSymlink) return;
  if (!info.isDirectory) {
    await Deno.chmod(path, fileMode);
    return;
  }
  // A folder must be writable and searchable while its entries change, and read-only only at the end.
  if (dirMode & 0o200) await Deno.chmod(path, dirMode);
  for await (const entry of Deno.readDir(path)) await chmodTree(join(path, entry.name), fileMode, dirMode);
  if (!(dirMode & 0o200)) await Deno.chmod(path, dirMode);
}

/** A fresh folder for work in progress, under `root`, that a rename can move into place. */
export async function tempIn(root: string): Promise<string> {
  await Deno.mkdir(root, { recursive: true });
  return await Deno.makeTempDir({ dir: root, prefix: "tmp-" });
}

/**
 * Moves a file or folder out of its place in one rename (into a fresh folder under `tmp`), then removes it; a
 * path that is gone already is fine. Others that look at the path see it whole or not at all.
 */
export async function moveAside(path: string, tmp: string): Promise<void> {
  const aside = join(await tempIn(tmp), "aside");
  try {
    await Deno.rename(path, aside);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  await removeTree(join(aside, ".."));
}

/** Runs `fn` holding an exclusive lock on `file`, which other processes on the cache take too. */
export async function withLock<T>(file: string, fn: () => Promise<T>): Promise<T> {
  await Deno.mkdir(join(file, ".."), { recursive: true });
  const handle = await Deno.open(file, { create: true, write: true });
  try {
    await handle.lock(true);
    return await fn();
  } finally {
    handle.close();
  }
}

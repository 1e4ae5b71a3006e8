/**
 * The outputter: hashes each file the run wrote in `output/`.
 * @module
 */
import { join, relative, sep } from "node:path";
import { hashOpened } from "../../provevi/evidence/hash.ts";
import { IrregularFile, kindOf } from "../../provevi/evidence/open_file.ts";
import { openTree, type TreeEntry, type TreeItem } from "../../provevi/evidence/open_tree.ts";

/** One output file. */
export interface OutputFile {
  /** The path under `output/`, with `/`. */
  path: string;
  sha256: string;
  size: number;
}

/** What {@linkcode collectOutputs} found under `output/`. */
export interface CollectedOutputs {
  /** The outputs hashed, in path order. */
  outputs: OutputFile[];
  /** Files not read, by their size: those that would have taken the bytes read past `most`. */
  unread: { path: string; size: number }[];
  /** Entries that are no plain file (a FIFO, a socket, a device), as `output/PATH is a FIFO`, in path order. */
  special: string[];
}

/**
 * Hashes every file under `output/`, in path order. A symbolic link is left out (it is no output, and
 * {@linkcode findLinks} reports it). What a program left there may be anything, so only a plain file is read,
 * opened so that it neither follows a link nor waits for a FIFO's writer (a FIFO held the run's end for ever),
 * and no more than `most` bytes are read in all: a file that would pass them is not read (a sparse file of
 * 64 GiB was hashed whole before its size failed the run). The folder is walked by `open_tree.ts`, each file
 * hashed by what was opened: a subfolder swapped for a link to a folder of the user's after the listing (by a
 * process the run left behind) is not walked into, and is named with what is no plain file.
 *
 * @param folder The run folder.
 * @param most The most bytes read of all the outputs.
 * @returns The outputs, the files not read and what is no plain file.
 * @example
 * ```ts
 * import { collectOutputs } from "./outputter.ts";
 * const { outputs } = await collectOutputs("/tmp/runs/run-x", 2 ** 31);
 * ```
 */
export async function collectOutputs(folder: string, most = Infinity): Promise<CollectedOutputs> {
  const root = join(folder, "output");
  const files: { path: string; size: number }[] = [];
  const special: { path: string; what: string }[] = [];
  // output/ itself a link (to a folder of the user's: ~/.ssh) had the user's files recorded as the run's outputs
  const top = await Deno.lstat(root).catch(() => null);
  if (top?.isSymlink) special.push({ path: "", what: "is a link, not the run's folder" });
  else if (top !== null && !top.isDirectory) special.push({ path: "", what: "is not a folder" });
  // the files as listed, each folder reached checked to be the one listed (open_tree.ts): a subfolder swapped
  // for a link to a folder of the user's after the listing is not walked into, and is a problem
  else if (top !== null) {
    await walkOutputs(root, special, (e) => {
      if (e.look.isFile) files.push({ path: e.rel, size: e.look.size });
      else if (!e.look.isSymlink && !e.look.isDirectory) {
        special.push({ path: e.rel, what: `is ${kindOf(e.look)}` });
      }
      return e.look.isDirectory;
    });
  }
  const chosen = new Map<string, number>();
  const unread: CollectedOutputs["unread"] = [];
  let listed = 0;
  for (const f of files.sort((a, b) => (a.path < b.path ? -1 : 1))) {
    if (listed + f.size > most) unread.push({ path: f.path, size: f.size });
    else {
      chosen.set(f.path, f.size);
      listed += f.size;
    }
  }
  // each file chosen, opened by its name in its folder (no link followed, no FIFO waited on), hashed by its
  // descriptor: no more than `most` bytes read in all, whatever a file grew to since its listing
  const outputs: OutputFile[] = [];
  let read = 0;
  await walkOutputs(root, special, (e) => e.look.isDirectory || chosen.has(e.rel), async (item) => {
    try {
      const hashed = await hashOpened(item.abs, { fd: item.file.fd, info: item.info }, most - read);
      outputs.push({ path: item.rel, ...hashed });
      read += hashed.size;
    } catch (error) {
      if (!(error instanceof IrregularFile)) throw error;
      special.push({ path: item.rel, what: error.reason });
    }
  });
  return {
    outputs: outputs.sort((a, b) => (a.path < b.path ? -1 : 1)),
    unread,
    special: special.sort((a, b) => (a.path < b.path ? -1 : 1)).map((s) => `output/${s.path} ${s.what}`),
  };
}

/**
 * Walks `output/` with open_tree.ts, giving each file opened to `each`: a file refused when opened, or a
 * folder changed while it was walked, is a special entry (the walk stops at a changed folder); a folder
 * removed while it was walked holds nothing.
 */
async function walkOutputs(
  root: string,
  special: { path: string; what: string }[],
  take: (e: TreeEntry) => boolean,
  each: (item: Extract<TreeItem, { kind: "file" }>) => Promise<void> = () => Promise.resolve(),
): Promise<void> {
  const rel = (abs: string) => relative(root, abs).split(sep).join("/");
  try {
    for await (
      const item of openTree(root, {
        take,
        refused: (e, error) => refusedAs(special, e.rel, error),
      })
    ) {
      if (item.kind === "file") await each(item);
    }
  } catch (error) {
    if (error instanceof IrregularFile) special.push({ path: rel(error.path), what: error.reason });
    else goneIsNone(error);
  }
}

function refusedAs(special: { path: string; what: string }[], path: string, error: unknown): void {
  // gone since its listing: no output; anything else put in its place is named
  if (error instanceof IrregularFile) special.push({ path, what: error.reason });
}

/** A folder removed while it was walked holds nothing; any other error is thrown. */
function goneIsNone(error: unknown): void {
  if (!(error instanceof Deno.errors.NotFound)) throw error;
}

/** A link found in a run's `input/` or `output/`. */
export interface FoundLink {
  /** The path in the run folder, such as `output/leak`. */
  path: string;
  /** `symlink`, or `hardlink` for a file with more than one hard link. */
  kind: "symlink" | "hardlink";
}

/**
 * The links in a run's `input/` or `output/`: symbolic links, and files with more than one hard link (which
 * may be a file outside the run). The end of a run records each as a problem.
 *
 * @param folder The run folder.
 * @param sub `input` or `output`.
 * @returns The links, in path order.
 * @example
 * ```ts
 * import { findLinks } from "./outputter.ts";
 * const links = await findLinks("/tmp/runs/run-x", "output"); // [{ path: "output/leak", kind: "symlink" }]
 * ```
 */
export async function findLinks(folder: string, sub: "input" | "output"): Promise<FoundLink[]> {
  const found: FoundLink[] = [];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(dir)) {
      const full = join(dir, e.name);
      const path = relative(folder, full).split(sep).join("/");
      if (e.isSymlink) found.push({ path, kind: "symlink" });
      else if (e.isDirectory) await walk(full);
      else if (((await Deno.lstat(full)).nlink ?? 1) > 1) found.push({ path, kind: "hardlink" });
    }
  };
  // the folder itself a link: its files are another folder's, and none is walked
  const top = await Deno.lstat(join(folder, sub)).catch(() => null);
  if (top?.isSymlink) found.push({ path: sub, kind: "symlink" });
  else if (top?.isDirectory) await walk(join(folder, sub)).catch(goneIsNone);
  return found.sort((a, b) => (a.path < b.path ? -1 : 1));
}

/**
 * A link in a run's `output/` at the end of the run: the run fails, naming it.
 */
export function linkProblem(links: FoundLink[]): string {
  return links.map((l) => `${l.path} is a ${l.kind === "symlink" ? "symbolic link" : "hard link"}`).join(
    ", ",
  ) +
    "; a run's inputs and outputs are plain files, so a link there is recorded as a problem";
}

/** The default limit of one output file: 256 MB (`agent.limits.output_bytes`). */
export const DEFAULT_OUTPUT_BYTES = 256 * 1024 * 1024;
/** The default limit of a run's outputs in total: 1 GB (`agent.limits.outputs_bytes`). */
export const DEFAULT_OUTPUTS_BYTES = 1024 * 1024 * 1024;

/**
 * What is wrong with the sizes of a run's outputs, or null: one output past `one` bytes, or all of them past
 * `total`.
 *
 * @param outputs The outputs, from {@linkcode collectOutputs}.
 * @param limits `one` and `total`, in bytes.
 * @example
 * ```ts
 * import { outputSizeProblem } from "./outputter.ts";
 * outputSizeProblem([{ path: "a.bin", sha256: "…", size: 2e9 }], { one: 1e9, total: 4e9 }); // "output/a.bin has …"
 * ```
 */
export function outputSizeProblem(
  outputs: OutputFile[],
  limits: { one: number; total: number },
): string | null {
  const big = outputs.filter((o) => o.size > limits.one);
  if (big.length) {
    return big.map((o) => `output/${o.path} has ${o.size} bytes`).join(", ") +
      `, past the limit of ${limits.one} bytes for one output (agent.limits.output_bytes)`;
  }
  const total = outputs.reduce((n, o) => n + o.size, 0);
  if (total > limits.total) {
    return `the outputs have ${total} bytes in all, past the limit of ${limits.total} bytes ` +
      `(agent.limits.outputs_bytes)`;
  }
  return null;
}

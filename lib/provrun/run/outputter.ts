/**
 * The outputter: hashes each file the run wrote in `output/`.
 * @module
 */
import { join, relative, sep } from "node:path";
import { sha256File } from "../../provevi/evidence/mod.ts";

/** One output file. */
export interface OutputFile {
  /** The path under `output/`, with `/`. */
  path: string;
  sha256: string;
  size: number;
}

/**
 * Hashes every file under `output/`, in path order. A symbolic link is left out (it is no output, and
 * {@linkcode findLinks} reports it).
 *
 * @param folder The run folder.
 * @returns The outputs.
 * @example
 * ```ts
 * import { collectOutputs } from "./outputter.ts";
 * const outputs = await collectOutputs("/tmp/runs/run-x");
 * ```
 */
export async function collectOutputs(folder: string): Promise<OutputFile[]> {
  const root = join(folder, "output");
  const found: OutputFile[] = [];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(dir)) {
      const full = join(dir, e.name);
      if (e.isSymlink) continue;
      if (e.isDirectory) await walk(full);
      // a named pipe, a socket or a device an agent made holds no output (verify passes it over too)
      else if (e.isFile) {
        found.push({ path: relative(root, full).split(sep).join("/"), ...(await sha256File(full)) });
      }
    }
  };
  try {
    await walk(root);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return found.sort((a, b) => (a.path < b.path ? -1 : 1));
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
  try {
    await walk(join(folder, sub));
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
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

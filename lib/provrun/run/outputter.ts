/**
 * The outputter: hashes each file the run wrote in `output/`.
 * @module
 */
import { join, relative, sep } from "node:path";
import { sha256File } from "../../provevi/mod.ts";

/** One output file. */
export interface OutputFile {
  /** The path under `output/`, with `/`. */
  path: string;
  sha256: string;
  size: number;
}

/**
 * Hashes every file under `output/`, in path order; a link is refused.
 *
 * @param folder The run folder.
 * @returns The outputs.
 * @throws Error for a link in `output/`.
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
      if (e.isSymlink) throw new Error(`output/${relative(root, full)} is a link; a run's outputs are files`);
      if (e.isDirectory) await walk(full);
      else found.push({ path: relative(root, full).split(sep).join("/"), ...(await sha256File(full)) });
    }
  };
  try {
    await walk(root);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return found.sort((a, b) => (a.path < b.path ? -1 : 1));
}

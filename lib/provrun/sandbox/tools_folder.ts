/**
 * A tools folder (`agent.tools_folder`, relative to the run file): each module in it exports `TOOLS`, a list
 * of `{ name, description, schema, execute }`, where `schema` is a JSON schema or a zod schema (`npm:zod`,
 * the version pinned in deno.json). The modules are imported only inside the sandbox's workers, never in the
 * caller of record, so even their top-level code runs with the sandbox's permissions.
 *
 * ```ts
 * // tools/rates.ts
 * import { z } from "zod";
 * export const TOOLS = [{
 *   name: "rate",
 *   description: "The exchange rate of a currency to EUR.",
 *   schema: z.object({ currency: z.string().length(3) }),
 *   execute: ({ currency }: { currency: string }) => ({ currency, rate: currency === "USD" ? 0.92 : 1 }),
 * }];
 * ```
 * @module
 */
import { isAbsolute, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { ToolSetError } from "../run/errors.ts";
import { sha256Hex } from "../../provevi/evidence/hash.ts";

const MODULE = /\.(ts|js|mjs|mts)$/;

/**
 * The modules of a tools folder, as file URLs, in name order. Files whose name starts with `_` (helpers)
 * or ends with `_test.ts` are skipped.
 *
 * @param folder The tools folder, as the run file names it.
 * @param base The run file's folder.
 * @throws ToolSetError when the folder cannot be read or holds no module.
 * @example
 * ```ts
 * import { toolsFolderModules } from "./tools_folder.ts";
 * const urls = await toolsFolderModules("tools", "fixtures/agent");
 * ```
 */
export async function toolsFolderModules(folder: string, base: string): Promise<string[]> {
  const dir = isAbsolute(folder) ? folder : resolve(base, folder);
  const names: string[] = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      if (e.isFile && MODULE.test(e.name) && !e.name.startsWith("_") && !/_test\.[a-z]+$/.test(e.name)) {
        names.push(e.name);
      }
    }
  } catch (error) {
    throw new ToolSetError(
      `the tools folder ${dir} (agent.tools_folder) cannot be read: ${(error as Error).message}; ` +
        `it is relative to the run file`,
      { cause: error },
    );
  }
  if (!names.length) {
    throw new ToolSetError(`the tools folder ${dir} (agent.tools_folder) holds no .ts or .js module`);
  }
  return names.sort().map((n) => pathToFileURL(join(dir, n)).href);
}

/** The most a tools folder may hold for the sandbox, in bytes and in files. */
export const TOOLS_FOLDER_LIMITS = { bytes: 32 * 1024 * 1024, files: 2000 } as const;
const SNAPSHOT = /\.(ts|mts|js|mjs|json)$/;

/**
 * The tools folder as the sandbox loads it: the text of every module and JSON file in it and its subfolders,
 * by path relative to it. A tool loads its folder's modules only from this snapshot, so it needs no read
 * grant on the folder and cannot learn where it is. Links and hidden entries are left out, so an import
 * through a link is refused as a file that is not there.
 *
 * @param folder The tools folder.
 * @returns The files, by relative path with `/` between names.
 * @throws ToolSetError when the folder cannot be read or holds more than {@linkcode TOOLS_FOLDER_LIMITS}.
 * @example
 * ```ts
 * import { toolsSnapshot } from "./tools_folder.ts";
 * const files = await toolsSnapshot("fixtures/agent/tools"); // { "rates.ts": "import { z } …" }
 * ```
 */
export async function toolsSnapshot(folder: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  let bytes = 0;
  let count = 0;
  const walk = async (dir: string, prefix: string): Promise<void> => {
    for await (const e of Deno.readDir(dir)) {
      if (e.name.startsWith(".") || e.name === "node_modules" || e.isSymlink) continue;
      if (e.isDirectory) await walk(join(dir, e.name), `${prefix}${e.name}/`);
      else if (e.isFile && SNAPSHOT.test(e.name)) {
        const path = join(dir, e.name);
        const info = await Deno.lstat(path);
        if (!info.isFile || info.nlink !== null && info.nlink > 1) continue; // a hard link may lead anywhere
        bytes += info.size;
        if (++count > TOOLS_FOLDER_LIMITS.files || bytes > TOOLS_FOLDER_LIMITS.bytes) {
          throw new ToolSetError(
            `the tools folder ${folder} holds more than ${TOOLS_FOLDER_LIMITS.files} files or ` +
              `${TOOLS_FOLDER_LIMITS.bytes} bytes of modules; give the agent a folder of its tools only`,
          );
        }
        files[`${prefix}${e.name}`] = await Deno.readTextFile(path);
      }
    }
  };
  try {
    await walk(folder, "");
  } catch (error) {
    if (error instanceof ToolSetError) throw error;
    throw new ToolSetError(
      `the tools folder ${folder} cannot be read: ${(error as Error).message}; check agent.tools_folder`,
      { cause: error },
    );
  }
  return files;
}

/**
 * The SHA-256 of each file of a tools folder's snapshot, by its path: what `sandbox_started` records as
 * `tools_files`, so that a changed tools module shows when two runs are compared.
 *
 * @param files The snapshot, as {@linkcode toolsSnapshot} gives it.
 * @returns The hashes, by path, in path order.
 * @example
 * ```ts
 * import { fileHashes } from "./tools_folder.ts";
 * fileHashes({ "a.ts": "" })["a.ts"]; // "e3b0c442…"
 * ```
 */
export function fileHashes(files: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const path of Object.keys(files).sort()) out[path] = sha256Hex(files[path]!);
  return out;
}

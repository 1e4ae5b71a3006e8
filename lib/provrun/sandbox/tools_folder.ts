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

/**
 * The import graph of a tools module, checked before it runs. A static import needs no permission in Deno
 * (`import p from "/etc/passwd" with { type: "text" }` reads any file, json, text and bytes alike), so each
 * tools module's whole graph is listed with `deno info --json` and refused unless every module in it is a file
 * inside the tools folder (its real path, so a link out of the folder is refused too), a package pinned in the
 * toolkit's deno.json (`npm:zod@4.6.7`), or a `node:` built-in.
 * @module
 */
import { relative, resolve } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";
import OWN_CONFIG from "../../../deno.json" with { type: "json" };
import { ToolSetError } from "../run/errors.ts";
import { sandboxDeno } from "./sandbox_deno.ts";

/** The npm packages (`name@version`) that tools may import: those pinned in the toolkit's deno.json. */
export const PINNED_PACKAGES: readonly string[] = Object.values(OWN_CONFIG.imports as Record<string, string>)
  .filter((v) => v.startsWith("npm:"))
  .map((v) => v.replace(/^npm:\/?/, "").replace(/\/$/, ""));

interface InfoModule {
  kind?: string;
  specifier: string;
  local?: string;
  npmPackage?: string;
  error?: string;
}

/**
 * What is wrong with one module of a tools module's graph, or null when it may be imported.
 *
 * @param module A module as `deno info --json` lists it.
 * @param folder The tools folder's real path.
 * @returns The problem, naming the module, or null.
 * @example
 * ```ts
 * import { importProblem } from "./import_graph.ts";
 * importProblem({ kind: "external", specifier: "file:///etc/passwd" }, "/tools"); // "… /etc/passwd …"
 * ```
 */
export function importProblem(module: InfoModule, folder: string): string | null {
  if (module.error) return `${module.specifier} cannot be loaded: ${module.error.split("\n")[0]}`;
  const spec = module.specifier;
  if (spec.startsWith("node:")) return null;
  if (module.kind === "npm" || spec.startsWith("npm:")) {
    const pkg = module.npmPackage ?? spec.replace(/^npm:\/?/, "");
    const base = pkg.replace(/_.*$/, ""); // deno info adds peer versions after "_"
    return PINNED_PACKAGES.some((p) => base === p || base.startsWith(`${p}/`))
      ? null
      : `${spec} is an npm package that the toolkit does not pin (${PINNED_PACKAGES.join(", ")})`;
  }
  if (!spec.startsWith("file:")) return `${spec} is not a file in the tools folder`;
  let real: string;
  try {
    real = Deno.realPathSync(fromFileUrl(spec));
  } catch {
    real = fromFileUrl(spec);
  }
  const rel = relative(folder, real);
  if (rel === "" || rel.startsWith("..") || resolve(folder, rel) !== real) {
    return `${fromFileUrl(spec)} is outside the tools folder ${folder}`;
  }
  return null;
}

/**
 * Checks the import graphs of tools modules.
 *
 * @param modules File URLs of the tools modules.
 * @param options `folder`: the tools folder; `config`: the deno.json whose imports resolve bare names.
 * @throws ToolSetError naming the first module that imports from outside, and the import.
 * @example
 * ```ts ignore
 * await checkImportGraph(["file:///work/tools/rates.ts"], { folder: "/work/tools", config: null });
 * ```
 */
export async function checkImportGraph(
  modules: string[],
  options: { folder: string; config: string | null },
): Promise<void> {
  let folder: string;
  try {
    folder = Deno.realPathSync(options.folder);
  } catch {
    folder = resolve(options.folder);
  }
  await Promise.all(modules.map(async (url) => {
    const args = [
      "info",
      "--json",
      "--no-remote",
      "--frozen",
      ...(options.config ? [`--config=${options.config}`] : []),
      url,
    ];
    const out = await new Deno.Command(sandboxDeno(), { args, stdout: "piped", stderr: "piped" }).output();
    if (!out.success) {
      // deno-lint-ignore no-control-regex
      const why = new TextDecoder().decode(out.stderr).replace(/\x1b\[[0-9;]*m/g, "").trim().split("\n")[0];
      throw new ToolSetError(`the tools module ${fromFileUrl(url)} cannot be loaded: ${why}; fix it`);
    }
    const info = JSON.parse(new TextDecoder().decode(out.stdout)) as { modules: InfoModule[] };
    for (const module of info.modules) {
      const problem = importProblem(module, folder);
      if (problem) {
        throw new ToolSetError(
          `the tools module ${fromFileUrl(url)} imports ${problem}; a tools module may import only files ` +
            `in its folder, the packages the toolkit pins and node: built-ins`,
        );
      }
    }
  }));
}

/**
 * Which library made a span: from its instrumentation scope and the installed npm packages, never guessed
 * (provevi-reference.txt, "Which library made a span").
 *
 * A scope is a label that code picks: any code in the run can call its tracer `ai`, and its spans then count as
 * the AI SDK's. So to approve a library is to approve any code in the run that uses its name.
 * @module
 */
import OWN_CONFIG from "../../../deno.json" with { type: "json" };
import { join } from "node:path";
import semver from "semver";

/** One installed npm package. */
export interface InstalledPackage {
  /** The package name, such as `@ai-sdk/openai`. */
  readonly name: string;
  /** The exact version pinned, as written in `deno.json`. */
  readonly version: string;
  /**
   * The module paths the package holds, from its `package.json` `exports` (`""` for the package itself,
   * `"test"` for `./test`), or `null` when they cannot be read.
   */
  readonly modules: readonly string[] | null;
}

/** The installed packages by name. */
export type InstalledPackages = ReadonlyMap<string, InstalledPackage>;

const NPM_SPEC = /^npm:\/?((?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*)@([^/\s]+)\/?$/;

/**
 * The npm packages that a `deno.json`'s `imports` pin, by name, with the version as written.
 *
 * @param config The parsed `deno.json`.
 * @returns Each package's name and version; a package imported twice keeps its first version.
 * @example
 * ```ts
 * import { pinnedImports } from "./span_libraries.ts";
 * pinnedImports({ imports: { ai: "npm:ai@7.0.173", "ai/": "npm:/ai@7.0.173/" } }); // Map { "ai" => "7.0.173" }
 * ```
 */
export function pinnedImports(config: unknown): Map<string, string> {
  const found = new Map<string, string>();
  if (typeof config !== "object" || config === null) return found;
  const imports = (config as { imports?: unknown }).imports;
  if (typeof imports !== "object" || imports === null) return found;
  for (const spec of Object.values(imports)) {
    if (typeof spec !== "string") continue;
    const m = NPM_SPEC.exec(spec);
    if (m && !found.has(m[1]!)) found.set(m[1]!, m[2]!);
  }
  return found;
}

/**
 * The module paths a package's `package.json` exports: `""` for `.`, `"test"` for `./test`. Patterns with `*`
 * are left out, because they do not say which modules exist.
 *
 * @param manifest The parsed `package.json`.
 * @returns The module paths, or `null` when the package declares no `exports`.
 * @example
 * ```ts
 * import { exportedModules } from "./span_libraries.ts";
 * exportedModules({ exports: { ".": "./index.js", "./test": "./test.js" } }); // ["", "test"]
 * ```
 */
export function exportedModules(manifest: unknown): string[] | null {
  if (typeof manifest !== "object" || manifest === null) return null;
  const exports = (manifest as { exports?: unknown }).exports;
  if (typeof exports === "string" || Array.isArray(exports)) return [""];
  if (typeof exports !== "object" || exports === null) return null;
  const keys = Object.keys(exports);
  if (!keys.some((k) => k.startsWith("."))) return [""]; // conditions only: the package itself
  return keys
    .filter((k) => (k === "." || k.startsWith("./")) && !k.includes("*") && k !== "./package.json")
    .map((k) => (k === "." ? "" : k.slice(2)));
}

/** Where Deno keeps npm packages, from the variables as Deno reads them, or null. */
function npmCacheDir(): string | null {
  try {
    const dir = Deno.env.get("DENO_DIR");
    if (dir) return join(dir, "npm", "registry.npmjs.org");
    const xdg = Deno.env.get("XDG_CACHE_HOME");
    if (xdg) return join(xdg, "deno", "npm", "registry.npmjs.org");
    const home = Deno.env.get("HOME");
    if (!home) return null;
    return Deno.build.os === "darwin"
      ? join(home, "Library", "Caches", "deno", "npm", "registry.npmjs.org")
      : join(home, ".cache", "deno", "npm", "registry.npmjs.org");
  } catch {
    return null; // no permission to read the variables
  }
}

/**
 * Reads the installed npm packages: each package that a `deno.json` pins in `imports`, at that version, with
 * the modules its `package.json` in Deno's npm cache exports. Without `config`, the `deno.json` is the toolkit's
 * own, built in: the packages that run in this process, wherever the command is typed (and in a compiled binary).
 *
 * @param options `config`: another `deno.json`'s path; `npmCache`: the cache's `registry.npmjs.org` folder
 *   (from `DENO_DIR`, `XDG_CACHE_HOME` or `HOME` by default).
 * @returns The packages, or `null` when a `config` file cannot be read (then no scope counts for a library).
 * @example
 * ```ts
 * import { readInstalledPackages } from "./span_libraries.ts";
 * const installed = await readInstalledPackages({ config: "deno.json" });
 * installed?.get("ai")?.version; // "7.0.173"
 * ```
 */
export async function readInstalledPackages(
  options: { config?: string; npmCache?: string | null } = {},
): Promise<InstalledPackages | null> {
  let config: unknown = OWN_CONFIG;
  if (options.config !== undefined) {
    try {
      config = JSON.parse(await Deno.readTextFile(options.config));
    } catch {
      return null;
    }
  }
  const cache = options.npmCache === undefined ? npmCacheDir() : options.npmCache;
  const out = new Map<string, InstalledPackage>();
  for (const [name, version] of pinnedImports(config)) {
    let modules: string[] | null = null;
    if (cache !== null && semver.valid(version) === version) {
      try {
        modules = exportedModules(
          JSON.parse(await Deno.readTextFile(join(cache, name, version, "package.json"))),
        );
      } catch {
        modules = null;
      }
    }
    out.set(name, Object.freeze({ name, version, modules: modules && Object.freeze(modules) }));
  }
  return out;
}

const cached = new Map<string, Promise<InstalledPackages | null>>();

/**
 * {@linkcode readInstalledPackages}, read once in a process for each `deno.json`: a package installed or
 * removed later is not seen.
 *
 * @example
 * ```ts
 * import { installedPackages, spanLibraries } from "./span_libraries.ts";
 * spanLibraries("ai", { installed: await installedPackages() }); // ["ai"]
 * ```
 */
export function installedPackages(options: { config?: string } = {}): Promise<InstalledPackages | null> {
  const key = options.config ?? "";
  let found = cached.get(key);
  if (!found) {
    found = readInstalledPackages(options.config === undefined ? {} : { config: options.config });
    cached.set(key, found);
  }
  return found;
}

/** Splits a module path into its package and the path in it: `@a/b/c` → [`@a/b`, `c`]. */
function splitModule(path: string): [string, string] | null {
  const parts = path.split("/");
  const scoped = path.startsWith("@");
  const n = scoped ? 2 : 1;
  if (parts.length < n || parts.slice(0, n).some((p) => p === "")) return null;
  return [parts.slice(0, n).join("/"), parts.slice(n).join("/")];
}

/**
 * The names that the policy may know a span's library by, from its instrumentation scope. It never guesses:
 *
 * - the scope's own name counts only if a package of that name is installed, because any code can call its
 *   scope `ai`;
 * - a scope that is a module path, such as `@ai-sdk/provider-utils/test`, counts for the package that holds it,
 *   when the package's `exports` name that module; a made-up module, such as `ai/evil`, is held by no package;
 * - when the installed packages cannot be read (`installed` is `null`), no name counts.
 *
 * @param scope The span's instrumentation scope name.
 * @param options `installed`: the installed packages, as {@linkcode installedPackages} reads them.
 * @returns The package names, empty when the span cannot be placed (it then goes nowhere).
 * @example
 * ```ts
 * import { spanLibraries } from "./span_libraries.ts";
 * const installed = new Map([["ai", { name: "ai", version: "7.0.173", modules: ["", "test"] }]]);
 * spanLibraries("ai", { installed }); // ["ai"]
 * spanLibraries("ai/test", { installed }); // ["ai"]
 * spanLibraries("ai/evil", { installed }); // []
 * spanLibraries("litellm", { installed }); // []
 * ```
 */
export function spanLibraries(scope: string, options: { installed: InstalledPackages | null }): string[] {
  if (typeof scope !== "string") throw new TypeError("a span's scope must be a text");
  const installed = options.installed;
  if (installed === null || scope === "") return [];
  if (installed.has(scope)) return [scope];
  const split = splitModule(scope);
  if (split === null) return [];
  const [name, sub] = split;
  if (sub === "" || sub.split("/").some((p) => p === "" || p === "." || p === "..")) return [];
  const held = installed.get(name)?.modules;
  return held && held.includes(sub) ? [name] : [];
}

/**
 * One package name for a report, such as the library that a blocked attempt came from: read from an `npm:`
 * specifier, a path under `node_modules/` or Deno's npm cache, or a bare module path. It guesses when it cannot
 * tell, so no approval of the policy depends on it.
 *
 * @param module A module specifier or path.
 * @returns The best guess of its package's name.
 * @example
 * ```ts
 * import { distributionOf } from "./span_libraries.ts";
 * distributionOf("npm:@ai-sdk/openai@4.0.118/dist/index.mjs"); // "@ai-sdk/openai"
 * distributionOf("file:///p/node_modules/.deno/ai@7.0.173/node_modules/ai/dist/index.mjs"); // "ai"
 * ```
 */
export function distributionOf(module: string): string {
  if (typeof module !== "string") throw new TypeError("distributionOf() needs a module's specifier or path");
  const path = module.replace(/\\/g, "/");
  const take = (rest: string): string => {
    const parts = rest.split("/");
    const name = rest.startsWith("@") ? `${parts[0]}/${parts[1] ?? ""}` : parts[0]!;
    return name.replace(/(.)@[^/]*$/, "$1");
  };
  if (path.startsWith("npm:")) return take(path.slice(4).replace(/^\/+/, ""));
  const nm = path.lastIndexOf("/node_modules/");
  if (nm >= 0) return take(path.slice(nm + "/node_modules/".length));
  const reg = path.indexOf("/registry.npmjs.org/");
  if (reg >= 0) return take(path.slice(reg + "/registry.npmjs.org/".length));
  if (/^[a-z]+:/i.test(path)) return path.startsWith("node:") ? "node" : path.replace(/^.*\//, "");
  return take(path);
}

/**
 * The module hooks of the tools worker: every module a tool loads, statically or by `import()`, is resolved
 * here first. Tools modules come from a snapshot of the tools folder that provr read and sent (never from the
 * disk, so the worker needs no read grant on the folder), under the neutral address `file:///tools/…`, so no
 * module can learn where the folder is. Beyond the snapshot only the toolkit's pinned packages and `node:`
 * built-ins load. This is the sandbox's own check, the same under `deno run` and in a compiled provr, whose
 * module loader reads a file for an `import()` without asking the permissions (Deno 2.9's `cli/rt`).
 *
 * Importing this module has no effect; {@linkcode installHooks} does, once, before any tools module loads.
 * @module
 */
import { registerHooks } from "node:module";
import { PACKAGE_TYPES } from "./_package_types.ts";

/** Where the tools folder's modules are, as tools see them. */
export const TOOLS_ROOT = "file:///tools/";

/** What the hooks allow. */
export interface HookOptions {
  /** The tools folder's files, by path relative to the folder (`rates.ts`, `lib/util.ts`). */
  files: Record<string, string>;
  /** The URL prefix under which the toolkit's npm packages are (their cache, or a compiled provr's copy). */
  npmRoot: string;
  /** The bare names of the toolkit's import map (`zod`, `ai/`). */
  importNames: readonly string[];
  /** The pinned packages, `name@version`, for `npm:` specifiers. */
  pinned: readonly string[];
}

/** `node:` built-ins that would let a tool step around these hooks or this worker. */
const REFUSED_BUILTINS = new Set([
  "module",
  "worker_threads",
  "cluster",
  "child_process",
  "inspector",
  "inspector/promises",
  "vm",
  "repl",
  "wasi",
]);

// Captured before any tool runs: a tool may replace the prototypes' methods afterwards.
const call = Function.prototype.call.bind(Function.prototype.call) as <T>(
  fn: (...a: never[]) => T,
  self: unknown,
  ...args: unknown[]
) => T;
const startsWith = String.prototype.startsWith;
const slice = String.prototype.slice;
const endsWith = String.prototype.endsWith;
const indexOf = String.prototype.indexOf;
const hasOwn = Object.hasOwn;
const SafeURL = URL;
const SafeTypeError = TypeError;
const b64 = (text: string): string => {
  const bytes = new TextEncoder().encode(text);
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(bin);
};

const MEDIA: Record<string, string> = {
  ts: "application/typescript",
  mts: "application/typescript",
  js: "text/javascript",
  mjs: "text/javascript",
  json: "application/json",
};

// import.meta.resolve of a package would give its place in Deno's cache (the home folder): a tools module's
// own resolves only its folder's paths. Prefixed on the first line, so that line numbers stay.
const META = "import.meta.resolve = (s) => { if (/^(\\.{0,2}\\/|file:\\/\\/\\/tools\\/)/.test(String(s))) " +
  "return new URL(String(s), import.meta.url).href; throw new TypeError(" +
  "'the sandbox does not give the paths of packages to tools'); };";

function withMeta(source: string): string {
  return source.startsWith("#!") ? source.replace(/^#!.*/, META) : META + source;
}

/**
 * What `import process from "node:process"` gives every module of the worker but this one: the global that the
 * hardening set (the process without its `argv0`, which names where the program is), with the built-in's named
 * exports but `argv0`.
 */
export const PROCESS_SHIM = "file:///sandbox/process.js";
const PROCESS_SHIM_SOURCE = `data:text/javascript;base64,${
  btoa(
    'import "node:process"; export * from "node:process"; export default globalThis.process; ' +
      'export const argv0 = "provr";',
  )
}`;

/** An error a tool sees when it imports what the sandbox refuses; it names only what the tool asked for. */
export class ImportRefused extends Error {
  override name = "ImportRefused";
}

function refuse(spec: string, from: string, why: string): never {
  throw new ImportRefused(
    `the sandbox refuses the import of ${spec}${from ? ` from ${from}` : ""}: ${why}; a tools module may ` +
      `import only files of its folder, the packages the toolkit pins and node: built-ins`,
  );
}

/**
 * Whether a module of the toolkit's packages is CommonJS, by the URL it resolves to: `.cjs` and `.mjs` say so,
 * else the package.json of its folder (PACKAGE_TYPES, the longest folder that holds the file). Knows Deno's npm
 * cache (`<root><name>/<version>/<file>`) and a node_modules folder (`<root>.deno/<name>@<version>/node_modules/
 * <name>/<file>`); null when the URL is in neither shape, or its package is not in the table.
 */
export function isCommonJs(url: string, npmRoot: string): boolean | null {
  const rel = decodeURIComponent(call(slice, url, npmRoot.length) as string);
  if (call(endsWith, rel, ".cjs")) return true;
  if (call(endsWith, rel, ".mjs") || call(endsWith, rel, ".json")) return false;
  let pkg: string;
  let file: string;
  if (call(startsWith, rel, ".deno/")) {
    const end = call(indexOf, rel, "/", 6) as number;
    pkg = (call(slice, rel, 6, end) as string).replace(/_.*$/, "").replace(/^(@[^+]+)\+/, "$1/");
    const name = pkg.slice(0, pkg.lastIndexOf("@"));
    const inner = `/node_modules/${name}/`;
    const at = call(indexOf, rel, inner, end) as number;
    if (end < 0 || at !== end) return null;
    file = call(slice, rel, at + inner.length) as string;
  } else {
    const parts = rel.split("/");
    const scoped = call(startsWith, parts[0] ?? "", "@") as boolean;
    const n = scoped ? 3 : 2;
    if (parts.length <= n) return null;
    pkg = `${parts.slice(0, n - 1).join("/")}@${parts[n - 1]!.replace(/_\d+$/, "")}`;
    file = parts.slice(n).join("/");
  }
  const folders = hasOwn(PACKAGE_TYPES, pkg) ? PACKAGE_TYPES[pkg]! : null;
  if (folders === null) return null;
  let best = "";
  for (const folder of Object.keys(folders)) {
    if (folder.length > best.length && call(startsWith, file, folder)) best = folder;
  }
  return hasOwn(folders, best) ? folders[best] === "commonjs" : null;
}

function isUnder(url: string, root: string): boolean {
  return call(startsWith, url, root) as boolean;
}

/** The hooks, and a way to show a message with the tools modules' data: URLs as their /tools/ names. */
export interface Hooks {
  resolve(
    spec: string,
    context: HookContext,
    next: NextResolve,
  ): { url: string; format?: string; shortCircuit?: boolean };
  load(url: string, context: HookContext, next: NextLoad): unknown;
  /** The text with each tools module's data: URL replaced by its /tools/ name. */
  shown(text: string): string;
}
interface HookContext {
  parentURL?: string;
  importAttributes?: Record<string, string>;
  format?: string;
}
type NextResolve = (spec: string, context?: HookContext) => { url: string; format?: string };
type NextLoad = (url: string, context?: HookContext) => unknown;

/**
 * A module of the pinned packages, unless it is CommonJS. Deno reads a CommonJS module through its file system,
 * with this worker's permissions: the failure would name the file in Deno's cache, which is in the home folder.
 * So it is refused here, by the name the tool asked for.
 */
function packageModule(url: string, asked: { spec: string; shown: string; npmRoot: string }) {
  if (isCommonJs(url, asked.npmRoot) === true) {
    const why = "it is a CommonJS module, and the sandbox loads only ES modules of the pinned packages";
    refuse(asked.spec, asked.shown, why);
  }
  return { url, shortCircuit: true };
}

/**
 * The hooks themselves, apart from registering them.
 *
 * @param options The snapshot and what else may load.
 * @returns The resolve and load hooks, and {@linkcode Hooks.shown}.
 */
export function makeHooks(options: HookOptions): Hooks {
  const { files, npmRoot, importNames, pinned } = options;
  const dataUrls: Record<string, string> = {};
  const inTools = (url: string) => isUnder(url, TOOLS_ROOT);
  const toolsFile = (url: string) => {
    const rel = decodeURIComponent(call(slice, url, TOOLS_ROOT.length) as string).replace(/[?#].*$/, "");
    return hasOwn(files, rel) ? rel : null;
  };
  return {
    resolve(spec, context, next) {
      const from = context.parentURL ?? "";
      const shown = inTools(from) ? call(slice, from, "file://".length) as string : "";
      const type = context.importAttributes?.type;
      if (
        call(startsWith, spec, "node:") || (!inTools(from) && !spec.includes(":") && !spec.startsWith("."))
      ) {
        const name = call(startsWith, spec, "node:") ? call(slice, spec, 5) as string : spec;
        if (REFUSED_BUILTINS.has(name)) refuse(spec, shown, "that built-in reaches past the sandbox");
      }
      if (call(startsWith, spec, "npm:")) {
        const pkg = spec.replace(/^npm:\/?/, "");
        if (!pinned.some((p) => pkg === p || call(startsWith, pkg, `${p}/`))) {
          refuse(spec, shown, "the toolkit does not pin that package");
        }
      } else if (inTools(from) && !/^(\.{0,2}\/|[a-z][a-z0-9+.-]*:)/i.test(spec)) {
        const known = importNames.some((n) => n.endsWith("/") ? call(startsWith, spec, n) : spec === n);
        if (!known && !REFUSED_BUILTINS.has(spec)) {
          refuse(spec, shown, "the toolkit does not pin that package");
        }
      }
      let url: string;
      if (/^(\.{0,2}\/)/.test(spec) && inTools(from)) url = new SafeURL(spec, from).href;
      else if (/^file:/i.test(spec) || spec.startsWith("/")) url = new SafeURL(spec, TOOLS_ROOT).href;
      else url = next(spec, context).url;
      if (inTools(url)) {
        if (!toolsFile(url)) refuse(spec, shown, "no such file in the tools folder");
        if (type && type !== "json") refuse(spec, shown, `an import with type "${type}" is not allowed`);
        return { url, shortCircuit: true };
      }
      if (url === "node:process" && from !== PROCESS_SHIM) return { url: PROCESS_SHIM, shortCircuit: true };
      if (call(startsWith, url, "node:")) {
        if (REFUSED_BUILTINS.has(call(slice, url, 5) as string)) {
          refuse(spec, shown, "that built-in reaches past the sandbox");
        }
        return { url, shortCircuit: true };
      }
      if (npmRoot && isUnder(url, npmRoot) && (!type || type === "json")) {
        return packageModule(url, { spec, shown, npmRoot });
      }
      if (/^file:/.test(url)) refuse(spec, shown, "it is outside the tools folder");
      return refuse(spec, shown, "it is not a file of the tools folder");
    },
    load(url, context, next) {
      // Loaded from a data: URL under its own neutral address, as the tools modules are.
      if (url === PROCESS_SHIM) return next(PROCESS_SHIM_SOURCE, context);
      if (!inTools(url)) return next(url, context);
      const rel = toolsFile(url);
      if (rel === null) throw new SafeTypeError(`no such file in the tools folder: ${url}`);
      const ext = rel.replace(/^.*\./, "");
      const media = MEDIA[ext] ?? "text/javascript";
      // A data: URL needs no read grant, and Deno strips TypeScript from it (under deno run and compiled alike);
      // the module keeps its neutral address.
      dataUrls[rel] ??= `data:${media};base64,${
        b64(media === MEDIA.json ? files[rel]! : withMeta(files[rel]!))
      }`;
      return next(dataUrls[rel]!, context);
    },
    shown(text) {
      for (const [rel, url] of Object.entries(dataUrls)) text = text.split(url).join(`/tools/${rel}`);
      return text.replace(/data:[a-z/+-]+;base64,[A-Za-z0-9+/=]{40,}/g, "data:…");
    },
  };
}

let installed = false;

/**
 * Registers the hooks in this worker. Called once; later calls are refused.
 *
 * @param options The snapshot and what else may load.
 * @returns The hooks.
 * @throws TypeError when called twice.
 */
export function installHooks(options: HookOptions): Hooks {
  if (installed) throw new TypeError("the sandbox's module hooks are already installed");
  installed = true;
  const hooks = makeHooks(options);
  registerHooks({ resolve: hooks.resolve, load: hooks.load } as Parameters<typeof registerHooks>[0]);
  return hooks;
}

/**
 * The prefix under which the toolkit's npm packages are, from where one of them resolves.
 *
 * @param resolved The URL a pinned package resolves to (`import.meta.resolve("zod")`).
 * @returns The cache's registry folder (`…/npm/registry.npmjs.org/`), or the first `…/node_modules/`.
 * @example
 * ```ts
 * import { npmRootOf } from "./_tools_hooks.ts";
 * npmRootOf("file:///home/a/.cache/deno/npm/registry.npmjs.org/zod/4.6.7/index.js");
 * // "file:///home/a/.cache/deno/npm/registry.npmjs.org/"
 * ```
 */
export function npmRootOf(resolved: string): string {
  const modules = resolved.indexOf("/node_modules/");
  if (modules >= 0) return resolved.slice(0, modules + "/node_modules/".length);
  const cache = /^(.*\/npm\/[^/]+\/)/.exec(resolved);
  return cache ? cache[1]! : "";
}

/**
 * The sandbox when provr is a compiled binary (`deno compile`): the binary is not the Deno CLI (run, it only
 * runs provr, with the permissions baked in at compile time), so it cannot start a sandbox process with the
 * run's narrow grants. A compiled provr starts `deno` from the PATH instead,
 * on a private copy of the sandbox's own modules: the compile task embeds them (`--include`), and this module
 * writes them, with the toolkit's import map, to a folder only this user can read, removed when the sandbox
 * closes. With no `deno` to start, the agent backend's tools are refused with one line saying what to install.
 * @module
 */
import CONFIG from "../../../deno.json" with { type: "json" };
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { ToolSetError } from "../run/errors.ts";

const ROOT = new URL("../../../", import.meta.url);
/** The sandbox process's own modules, evaluated before and after the tools modules. */
export const GUARD_URL = new URL("./_child_guard.ts", import.meta.url);
/** The module that serves tool calls in a sandbox process. */
export const CHILD_URL = new URL("./sandbox_child.ts", import.meta.url);

/** Where a sandbox process's own modules come from, and what Deno flags go with them. */
export interface ChildModules {
  guard: string;
  child: string;
  /** The deno.json whose imports resolve the pinned packages, or null. */
  config: string | null;
  /** `--frozen` beside the toolkit's lockfile; none for a private copy, whose deno.json has `lock: false`. */
  lockFlags: string[];
  /** `files` when the toolkit runs from its files, `copy` for a compiled provr's private copy. */
  from: "files" | "copy";
  /** Removes a private copy. */
  cleanup(): Promise<void>;
}

/** True when this process is a compiled provr. */
export function isCompiled(): boolean {
  return Deno.build.standalone === true;
}

/**
 * The Deno program a compiled provr starts its sandbox with: `deno` from the PATH, which the compiled provr's
 * `--allow-run=deno` grants.
 * @param denoBin A program to use instead (the tests' way to name one that is not there).
 */
export function compiledDeno(denoBin?: string): string {
  return denoBin || "deno";
}

/**
 * Checks that the Deno program can be started, for a compiled provr.
 * @throws ToolSetError saying what to install, when it cannot.
 */
export async function checkCompiledDeno(deno: string): Promise<void> {
  try {
    const out = await new Deno.Command(deno, { args: ["--version"], stdout: "null", stderr: "null" })
      .output();
    if (out.success) return;
  } catch (error) {
    throw new ToolSetError(
      `a compiled provr runs the agent's tools in a Deno sandbox process and cannot start "${deno}" ` +
        `(${
          (error as Error).name
        }): install Deno (https://deno.com) and put deno on the PATH, or run provr from source with ` +
        `deno run`,
    );
  }
  throw new ToolSetError(
    `a compiled provr runs the agent's tools with "${deno}", which did not run (${deno} --version failed): ` +
      `install Deno (https://deno.com) and put a working deno on the PATH`,
  );
}

/**
 * Writes the sandbox process's own modules (the guard, the child and every module they import by a relative
 * path) and a deno.json with the toolkit's import map to a new private folder.
 *
 * @returns The modules' file URLs in the copy, and its deno.json.
 * @example
 * ```ts ignore
 * import { privateCopy } from "./sandbox_compiled.ts";
 * const modules = await privateCopy(); // { guard: "file:///tmp/provr-sandbox-x/lib/…", from: "copy", … }
 * await modules.cleanup();
 * ```
 */
export async function privateCopy(): Promise<ChildModules> {
  const dir = await Deno.makeTempDir({ prefix: "provr-sandbox-" });
  try {
    await Deno.chmod(dir, 0o700);
    const seen = new Set<string>();
    const queue = [GUARD_URL, CHILD_URL];
    while (queue.length) {
      const url = queue.pop()!;
      if (seen.has(url.href) || !url.href.startsWith(ROOT.href)) continue;
      seen.add(url.href);
      let text: string;
      try {
        text = await Deno.readTextFile(url);
      } catch (error) {
        if (url === GUARD_URL || url === CHILD_URL) throw error;
        continue; // a path in a doc comment's example, not a module
      }
      const to = join(dir, decodeURIComponent(url.href.slice(ROOT.href.length)));
      await Deno.mkdir(dirname(to), { recursive: true });
      await Deno.writeTextFile(to, text);
      for (const m of text.matchAll(/(?:from|import)\s*["'](\.{1,2}\/[^"']+\.ts)["']/g)) {
        queue.push(new URL(m[1]!, url));
      }
    }
    const config = join(dir, "deno.json");
    await Deno.writeTextFile(config, JSON.stringify({ imports: CONFIG.imports, lock: false }, null, 2));
    const at = (url: URL) =>
      pathToFileURL(join(dir, decodeURIComponent(url.href.slice(ROOT.href.length)))).href;
    return {
      guard: at(GUARD_URL),
      child: at(CHILD_URL),
      config,
      lockFlags: [],
      from: "copy",
      cleanup: () => Deno.remove(dir, { recursive: true }).catch(() => {}),
    };
  } catch (error) {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw new ToolSetError(
      `the sandbox's own modules cannot be copied for a compiled provr: ${(error as Error).message}; ` +
        `build provr with deno task compile (it embeds them), or run it from source with deno run`,
      { cause: error },
    );
  }
}

/**
 * The sandbox process's own modules where the toolkit runs from its files.
 * @param config The toolkit's deno.json, or null.
 */
export function ownModules(config: string | null): ChildModules {
  return {
    guard: GUARD_URL.href,
    child: CHILD_URL.href,
    config,
    lockFlags: ["--frozen"], // never write the toolkit's deno.lock, and refuse a package it does not hold
    from: "files",
    cleanup: () => Promise.resolve(),
  };
}

/**
 * The Deno program that sandbox processes and import-graph checks run, and the toolkit's own config for them.
 * @module
 */
import { fileURLToPath as fromFileUrl } from "node:url";

const CONFIG_URL = new URL("../../../deno.json", import.meta.url);

/**
 * The Deno program that sandbox processes (from source), the reaper and Deno MCP servers run: this process's
 * own Deno when it may start it, else `deno` from the PATH (what `--allow-run=deno` grants, as the provr task
 * does). A compiled provr is not the Deno CLI, so for it this is `deno` from the PATH, which it may not have;
 * its sandbox processes are itself (`sandbox_launch.ts`).
 *
 * @example
 * ```ts
 * import { sandboxDeno } from "./sandbox.ts";
 * sandboxDeno(); // "/usr/local/bin/deno", or "deno"
 * ```
 */
export function sandboxDeno(): string {
  if (Deno.build.standalone) return "deno"; // a compiled provr is not the Deno CLI
  try {
    const own = Deno.execPath();
    return Deno.permissions.querySync({ name: "run", command: own }).state === "granted" ? own : "deno";
  } catch {
    return "deno";
  }
}

/**
 * The `--config` flag that gives a sandbox process the toolkit's own import map (its pinned packages), when
 * the toolkit runs from files.
 *
 * @example
 * ```ts
 * import { configFlags } from "./sandbox_deno.ts";
 * configFlags(); // ["--config=/work/prove/deno.json"]
 * ```
 */
export function configFlags(): string[] {
  if (CONFIG_URL.protocol !== "file:") return [];
  try {
    return Deno.statSync(CONFIG_URL).isFile ? [`--config=${fromFileUrl(CONFIG_URL)}`] : [];
  } catch {
    return [];
  }
}

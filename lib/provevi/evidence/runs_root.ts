/**
 * The runs root, where run folders live: `--runs`, else `PROVRUN_RUNS`, else `$XDG_DATA_HOME/provrun/runs`,
 * else `~/.local/share/provrun/runs`.
 * @module
 */
import { join, resolve } from "node:path";
import { ProveviError } from "./errors.ts";

/**
 * The runs root.
 *
 * @param explicit The `--runs` option, if given.
 * @param env The variables to read; `Deno.env` by default.
 * @returns An absolute path.
 * @throws ProveviError when no variable names a home folder.
 * @example
 * ```ts
 * import { runsRoot } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * assert.equal(runsRoot(undefined, { PROVRUN_RUNS: "/tmp/runs" }), "/tmp/runs");
 * assert.equal(runsRoot(undefined, { HOME: "/home/ada" }), "/home/ada/.local/share/provrun/runs");
 * ```
 */
export function runsRoot(explicit?: string, env: Record<string, string | undefined> = readEnv()): string {
  if (explicit) return resolve(explicit);
  if (env.PROVRUN_RUNS) return resolve(env.PROVRUN_RUNS);
  if (env.XDG_DATA_HOME) return resolve(env.XDG_DATA_HOME, "provrun", "runs");
  if (env.HOME) return join(env.HOME, ".local", "share", "provrun", "runs");
  throw new ProveviError("no runs root: pass --runs DIR, or set PROVRUN_RUNS, XDG_DATA_HOME or HOME");
}

function readEnv(): Record<string, string | undefined> {
  const get = (name: string) => {
    try {
      return Deno.env.get(name);
    } catch {
      return undefined; // no --allow-env for it: as if unset
    }
  };
  return { PROVRUN_RUNS: get("PROVRUN_RUNS"), XDG_DATA_HOME: get("XDG_DATA_HOME"), HOME: get("HOME") };
}

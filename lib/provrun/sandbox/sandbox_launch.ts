/**
 * How a sandbox process is started. From source, it is `deno run` on `sandbox_role.ts` with the run's grants as
 * flags (and read of the toolkit's own modules, which the tools worker loads; the worker itself has only the
 * run's grants). A compiled provr cannot start Deno with other flags and need not have `deno` at all: it starts
 * itself again (`Deno.execPath()`) with {@linkcode SANDBOX_ROLE_ARG}, and the same role narrows the tools
 * worker to the run's grants. Both keep the process boundary: provr kills the process at a limit.
 * @module
 */
import { basename, isAbsolute, join } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";
import { ToolSetError } from "../run/errors.ts";
import { configFlags, sandboxDeno } from "./sandbox_deno.ts";
import { SANDBOX_ROLE_ARG } from "./sandbox_role.ts";
import type { SandboxPermissions } from "./sandbox_permissions.ts";

const ROLE_URL = new URL("./sandbox_role.ts", import.meta.url);
const OWN_MODULES = new URL("../../", import.meta.url);

/** A sandbox process's program and arguments. */
export interface Launch {
  program: string;
  args: string[];
  /** `deno`: `deno run` with the grants as flags; `self`: this program started again in the sandbox role. */
  mode: "deno" | "self";
}

/** True when this process is a compiled binary (`deno compile`). */
export function isCompiled(): boolean {
  return Deno.build.standalone === true;
}

/**
 * The program and arguments of a sandbox process.
 *
 * @param permissions The run's grants.
 * @param options `self`: start this program in the sandbox role, with this command (a compiled provr's is
 * `[Deno.execPath()]`; the tests give `deno run` with the compiled binary's flags on cli/provr.ts); `memoryMb`:
 * the heap of a `deno run` process.
 * @returns The launch.
 * @throws ToolSetError when this process may not start that program.
 */
export function launchFor(
  permissions: SandboxPermissions,
  options: { self?: string[] | null; memoryMb: number },
): Launch {
  if (options.self) {
    const [program = Deno.execPath(), ...rest] = options.self;
    mayRun(program, true);
    return { program: byName(program), args: [...rest, SANDBOX_ROLE_ARG], mode: "self" };
  }
  const program = byName(sandboxDeno());
  mayRun(program, false);
  const own = OWN_MODULES.protocol === "file:" ? [fromFileUrl(OWN_MODULES).replace(/\/$/, "")] : [];
  const args = [
    "run",
    "--no-prompt",
    `--allow-read=${[...permissions.read, ...own].join(",")}`,
    `--allow-write=${permissions.write.join(",")}`,
    ...(permissions.net ? [`--allow-net=${permissions.net.join(",")}`] : []),
    ...configFlags(),
    "--no-remote",
    "--cached-only",
    "--frozen", // never write the toolkit's deno.lock, and refuse a package it does not hold
    `--v8-flags=--max-old-space-size=${options.memoryMb}`,
    ROLE_URL.href,
  ];
  return { program, args, mode: "deno" };
}

/**
 * The program by its name when the PATH finds it there: the name it is started by is its `argv[0]`, which
 * `process.argv0` shows to tools, and a full path would say where it is installed.
 */
function byName(program: string): string {
  if (!isAbsolute(program)) return program;
  try {
    const real = Deno.realPathSync(program);
    const name = basename(program);
    for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
      if (!dir) continue;
      let found: string;
      try {
        found = Deno.realPathSync(join(dir, name));
      } catch {
        continue; // not in this folder
      }
      if (found === real) return name;
      break; // the first folder that has the name wins, as the PATH looks it up
    }
  } catch {
    // No env or read grant to look: the full path.
  }
  return program;
}

function mayRun(program: string, self: boolean): void {
  let state: Deno.PermissionState = "granted";
  try {
    state = Deno.permissions.querySync({ name: "run", command: program }).state;
  } catch {
    // A name the permission API cannot look up: starting it says what is wrong.
  }
  if (state === "granted") return;
  throw new ToolSetError(
    self
      ? `provr runs the agent's tools in a copy of itself (${program}), which this process may not start: a ` +
        `compiled provr may run itself by the name provr, so put it on the PATH as provr`
      : `the agent's tools run in a Deno sandbox process, and this process may not start ${program}: add ` +
        `--allow-run=deno to the command that runs provr`,
  );
}

/**
 * The sandbox's permissions for a run: what the tools worker is given, and the same as `deno run` flags.
 * @module
 */
import { join, resolve } from "node:path";

/** The permissions of the sandbox, as given to each Worker and recorded in `sandbox_started`. */
export interface SandboxPermissions {
  read: string[];
  write: string[];
  net: string[] | false;
  env: false;
  run: false;
  ffi: false;
  sys: false;
  import: false;
}

/**
 * The sandbox's permissions for a run folder.
 *
 * @param folder The run folder.
 * @param net The hosts (`host:port`) the run grants to tools (`agent.net`).
 * @example
 * ```ts
 * import { sandboxPermissions } from "./sandbox_permissions.ts";
 * sandboxPermissions("/runs/run-x", ["127.0.0.1:8123"]).write; // ["/runs/run-x/output", "/runs/run-x/scratch"]
 * ```
 */
export function sandboxPermissions(folder: string, net: string[] = []): SandboxPermissions {
  const root = resolve(folder);
  return {
    read: [join(root, "input"), join(root, "output")],
    write: [join(root, "output"), join(root, "scratch")],
    net: net.length ? [...net] : false,
    env: false,
    run: false,
    ffi: false,
    sys: false,
    import: false,
  };
}

/**
 * The same permissions as `deno run` flags, for a Deno program (a stdio MCP server) started as a child.
 *
 * @example
 * ```ts
 * import { sandboxFlags, sandboxPermissions } from "./sandbox_permissions.ts";
 * sandboxFlags(sandboxPermissions("/runs/run-x")); // ["--no-prompt", "--allow-read=…", "--allow-write=…"]
 * ```
 */
export function sandboxFlags(p: SandboxPermissions): string[] {
  const flags = ["--no-prompt", `--allow-read=${p.read.join(",")}`, `--allow-write=${p.write.join(",")}`];
  if (p.net) flags.push(`--allow-net=${p.net.join(",")}`);
  return flags;
}

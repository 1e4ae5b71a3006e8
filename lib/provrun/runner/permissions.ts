/**
 * The permission check: before a run writes anything, provr asks `Deno.permissions.query` whether its own
 * permissions cover what the run needs — read and write of the runs root, net for the model provider's host,
 * for the hosts the run grants to tools (a Worker cannot get more than its parent) and for MCP servers' URLs,
 * env for the model's key, run for MCP programs and the variables the MCP client passes on — and refuses to
 * start, naming the missing flag, when they do not.
 * @module
 */
import { isAbsolute, resolve } from "node:path";
import { PermissionMissing } from "../run/errors.ts";
import { mcpLaunch } from "../sandbox/mcp.ts";
import { parseRoute, routeKeyName } from "../backends/models.ts";
import type { AgentSpec, RunFile } from "../run/run_file.ts";
import { sandboxPermissions } from "../sandbox/sandbox.ts";
import { sandboxDeno } from "../sandbox/sandbox_deno.ts";

/** One permission a run needs, the flag that grants it, and why. */
export interface PermissionNeed {
  descriptor: Deno.PermissionDescriptor;
  /** The `deno run` flag, such as `--allow-net=api.openai.com:443`. */
  flag: string;
  /** What needs it, naming the run file's key. */
  why: string;
  /** Another way to meet the need, when there is one. */
  hint?: string;
}

/**
 * The family of variable names that the tasks and binaries of provr allow (`--allow-env=PROVR_KEY_*`): an
 * `agent.provider.api_key_env` named in it works through `deno task provr` as written.
 */
export const KEY_VARIABLE_FAMILY = "PROVR_KEY_";

/**
 * The variables read to start a stdio MCP server: the MCP SDK's stdio client passes the first seven on (its
 * default environment), and Deno's `node:child_process` reads `NODE_V8_COVERAGE` on every spawn.
 */
export const MCP_ENV: readonly string[] = [
  "HOME",
  "LOGNAME",
  "PATH",
  "SHELL",
  "TERM",
  "USER",
  "OSTYPE",
  "NODE_V8_COVERAGE",
];

/**
 * What a run needs of the process's permissions.
 *
 * @param file The run file.
 * @param options `runs`: the runs root; `served`: the run serves every model and tool call from a run's evidence
 *   (a replay), so it needs no provider's host, no key, no sandbox and no MCP server.
 * @example
 * ```ts
 * import { permissionNeeds, RunFile } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const file = await RunFile.load("fixtures/tour/run.yaml");
 * const flags = permissionNeeds(file, { runs: "/tmp/runs" }).map((n) => n.flag);
 * assert.ok(flags.includes("--allow-write=/tmp/runs"));
 * ```
 */
export function permissionNeeds(
  file: RunFile,
  options: { runs: string; served?: boolean },
): PermissionNeed[] {
  const agent = file.data.agent;
  const runs = resolve(options.runs);
  const needs: PermissionNeed[] = [
    { descriptor: { name: "read", path: runs }, flag: `--allow-read=${runs}`, why: "the runs root" },
    { descriptor: { name: "write", path: runs }, flag: `--allow-write=${runs}`, why: "the runs root" },
  ];
  if (agent.backend === "claude-code" || agent.backend === "codex") {
    // provr starts the program, listens on 127.0.0.1 for its spans, hooks and model calls (the model gateway),
    // and forwards those calls to the provider itself.
    const program = agent.program ?? (agent.backend === "codex" ? "codex" : "claude");
    const route = parseRoute(agent);
    needs.push(
      {
        descriptor: { name: "run", command: program },
        flag: `--allow-run=${program}`,
        why: `agent.backend ${agent.backend}`,
      },
      netNeed("127.0.0.1", "the span receiver, the hook listener and the model gateway of the agent program"),
      ...(route.host
        ? [netNeed(route.host, `the model provider (agent.model ${agent.model}), through the model gateway`)]
        : []),
      ...keyNeeds(agent),
    );
    return needs;
  }
  const route = parseRoute(agent);
  if (route.host && !options.served) {
    needs.push(netNeed(route.host, `the model provider (agent.model ${agent.model})`));
    if (agent.gateway) needs.push(netNeed("127.0.0.1", "the model gateway (agent.gateway)"));
  }
  if (!options.served) needs.push(...keyNeeds(agent));
  if ((file.data.inputs ?? []).length > 0) {
    // The stager copies each input into input/ with cp (copy-on-write where the file system can).
    needs.push({
      descriptor: { name: "run", command: "cp" },
      flag: "--allow-run=cp",
      why: "staging the inputs",
    });
  }
  if (agent.backend === "agent" && !options.served) needs.push(...agentNeeds(file, runs));
  else if (agent.backend === "agent") needs.push(...toolsFolderNeeds(file));
  return needs;
}

function netNeed(host: string, why: string): PermissionNeed {
  return { descriptor: { name: "net", host }, flag: `--allow-net=${host}`, why };
}

/** The variable of the model's key: `agent.provider.api_key_env`, or the provider's usual one. */
function keyNeeds(agent: AgentSpec): PermissionNeed[] {
  const keyName = routeKeyName(agent);
  if (keyName === null) return [];
  const named = agent.provider?.api_key_env === keyName;
  return [{
    descriptor: { name: "env", variable: keyName },
    flag: `--allow-env=${keyName}`,
    why: named ? "agent.provider.api_key_env" : `the model's key (agent.model ${agent.model})`,
    ...(!named || keyName.startsWith(KEY_VARIABLE_FAMILY) ? {} : {
      hint: `name the variable ${KEY_VARIABLE_FAMILY}${
        keyName.replace(/[^A-Za-z0-9]+/g, "_").toUpperCase()
      }, which deno task provr allows`,
    }),
  }];
}

/** What an agent run's tools need: their hosts, the sandbox process, the tools folder, MCP servers. */
function agentNeeds(file: RunFile, runs: string): PermissionNeed[] {
  const agent = file.data.agent;
  const needs: PermissionNeed[] = (agent.net ?? []).map((host) =>
    netNeed(host, "agent.net, to grant it to the tools,")
  );
  // The sandbox is started as this process's own Deno when that is granted, else as `deno` (sandboxDeno());
  // a compiled provr starts itself, which its --allow-run=provr grants when it is on the PATH as provr.
  const compiled = Deno.build.standalone === true;
  needs.push({
    descriptor: { name: "run", command: compiled ? Deno.execPath() : sandboxDeno() },
    flag: compiled ? "--allow-run=provr (put provr on the PATH as provr)" : "--allow-run=deno",
    why: "the sandbox, a Deno process per run that the agent's tools run in",
  });
  return [...needs, ...toolsFolderNeeds(file), ...mcpNeeds(agent, runs, file.folder)];
}

/** Reading the tools folder: to load its modules, or (a replay) to hash them. */
function toolsFolderNeeds(file: RunFile): PermissionNeed[] {
  const folder = file.data.agent.tools_folder;
  if (!folder) return [];
  const dir = isAbsolute(folder) ? folder : resolve(file.folder, folder);
  return [{
    descriptor: { name: "read", path: dir },
    flag: `--allow-read=${dir}`,
    why: "agent.tools_folder",
  }];
}

/** What the MCP servers need: net for a URL, run for a program, and the variables of the stdio client. */
function mcpNeeds(agent: AgentSpec, runs: string, folder: string): PermissionNeed[] {
  const needs: PermissionNeed[] = [];
  let stdio = false;
  for (const server of agent.mcp ?? []) {
    if (server.url) {
      const u = new URL(server.url);
      needs.push(
        netNeed(
          `${u.hostname}:${u.port || (u.protocol === "https:" ? "443" : "80")}`,
          `MCP server "${server.name}"`,
        ),
      );
      continue;
    }
    let program: string;
    try {
      program = mcpLaunch(server, {
        permissions: sandboxPermissions(runs),
        allowUnsandboxed: agent.allow_unsandboxed ?? [],
        folder,
      }).command;
    } catch {
      continue; // refused by the backend, with its own message
    }
    stdio = true;
    needs.push({
      descriptor: { name: "run", command: program },
      flag: `--allow-run=${program}`,
      why: `MCP server "${server.name}"`,
    });
  }
  if (!stdio) return needs;
  return [
    ...needs,
    ...MCP_ENV.map((variable): PermissionNeed => ({
      descriptor: { name: "env", variable },
      flag: `--allow-env=${variable}`,
      why: "the MCP client, which passes it to stdio servers",
    })),
  ];
}

/**
 * Checks that the process's permissions cover what the run needs.
 *
 * @param file The run file.
 * @param options `runs`: the runs root; `served`: as for {@linkcode permissionNeeds}.
 * @throws PermissionMissing naming the first missing flag and what needs it.
 * @example
 * ```ts
 * import { checkPermissions, RunFile } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const file = await RunFile.load("fixtures/tour/run.yaml");
 * await assert.doesNotReject(checkPermissions(file, { runs: await Deno.makeTempDir() }));
 * ```
 */
export async function checkPermissions(
  file: RunFile,
  options: { runs: string; served?: boolean },
): Promise<void> {
  for (const need of permissionNeeds(file, options)) {
    const status = await Deno.permissions.query(need.descriptor);
    if (status.state !== "granted") {
      throw new PermissionMissing(
        `the run cannot start: this process lacks ${need.flag}, which ${need.why} needs; ` +
          `add that flag (or a wider one) to the command that runs it${need.hint ? `, or ${need.hint}` : ""}`,
      );
    }
  }
}

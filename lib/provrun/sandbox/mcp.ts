/**
 * MCP servers in the run file (`agent.mcp`): a stdio `command` or a streamable HTTP `url`, through the MCP
 * SDK's client. A stdio server that is a Deno script (`deno run …`, or a `.ts`/`.js` file) is started with
 * the sandbox's permission flags; any other program runs outside Deno's sandbox, so the run file must name
 * it in `agent.allow_unsandboxed`. Their tools are offered to the model and recorded like any tool.
 * @module
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { isAbsolute, resolve } from "node:path";
import { ToolFailed, ToolSetError, ToolTimeout } from "../run/errors.ts";
import type { McpSpec } from "../run/run_file.ts";
import { sandboxFlags, type SandboxPermissions } from "./sandbox.ts";
import type { ToolDefinition } from "./sandbox_worker.ts";
import type { GroupStdioTransport } from "./mcp_stdio.ts";

/** The MCP SDK's client and transports, loaded by the first run that has MCP servers. */
interface McpSdk {
  Client: typeof Client;
  StreamableHTTPClientTransport: typeof StreamableHTTPClientTransport;
  GroupStdioTransport: typeof GroupStdioTransport;
}

let loading: Promise<McpSdk> | undefined;
/** The SDK, imported once on first use: most runs have no MCP server, and every provr and child starts faster. */
function mcpSdk(): Promise<McpSdk> {
  loading ??= Promise.all([
    import("@modelcontextprotocol/sdk/client/index.js"),
    import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
    import("./mcp_stdio.ts"),
  ]).then(([client, http, stdio]) => ({
    Client: client.Client,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    GroupStdioTransport: stdio.GroupStdioTransport,
  }));
  return loading;
}

/** How a server is started: the program, its arguments, and whether Deno's sandbox holds it. */
export interface McpLaunch {
  command: string;
  args: string[];
  /** True for a Deno script started with the sandbox's flags. */
  sandboxed: boolean;
}

const SCRIPT = /\.(ts|tsx|js|mjs|mts)$/;
// Deno 2's short forms grant too: -A all, -R read, -W write, -N net, -E env, -S sys, -I import, -P a
// permission set from the config file; alone, in a cluster such as -NE, or with a value such as -N=host.
const PERMISSION_FLAG =
  /^(--allow-[a-z-]+(=.*)?|--deny-[a-z-]+(=.*)?|--permission-set(=.*)?|-[A-Za-z]*[ARWNESIP][A-Za-z]*(=.*)?)$/;
/**
 * The Deno flags a server's command may set before its script: none of them reads or writes a file that the
 * sandbox does not grant, or widens a permission. Any other flag (`--lock=/outside/x.json`, `--config`,
 * `--env-file`, `--cert`, …) is refused: an allow-list, not a deny-list.
 */
export const MCP_DENO_FLAGS: readonly RegExp[] = [
  /^(-q|--quiet)$/,
  /^--(no-check|check)$/,
  /^--unstable(-[a-z-]+)?$/,
  /^--(cached-only|no-remote|no-npm|no-lock|no-config)$/,
  /^--seed=\d+$/,
];

/**
 * The program and arguments that start a stdio server.
 *
 * @param spec The server in the run file.
 * @param options The sandbox's permissions; the names allowed to run unsandboxed; the run file's folder.
 * @throws ToolSetError when a Deno command sets its own permission flags, or another program is not allowed.
 * @example
 * ```ts
 * import { mcpLaunch } from "./mcp.ts";
 * import { sandboxPermissions } from "./sandbox.ts";
 * mcpLaunch({ name: "rates", command: ["server.ts"] }, {
 *   permissions: sandboxPermissions("/runs/run-x"),
 *   allowUnsandboxed: [],
 *   folder: ".",
 * }); // { command: "deno", args: ["run", "--no-prompt", "--allow-read=…", …, "/abs/server.ts"], sandboxed: true }
 * ```
 */
export function mcpLaunch(
  spec: McpSpec,
  options: { permissions: SandboxPermissions; allowUnsandboxed: string[]; folder: string },
): McpLaunch {
  const command = spec.command ?? [];
  const [program, ...rest] = command;
  if (!program) throw new ToolSetError(`MCP server "${spec.name}" has neither a command nor a url`);
  const flags = sandboxFlags(options.permissions);
  const script = (p: string) => (isAbsolute(p) ? p : resolve(options.folder, p));
  if (program === "deno") {
    if (rest[0] !== "run") {
      throw new ToolSetError(
        `MCP server "${spec.name}": a deno command is "deno run SCRIPT …"; provr adds the permission flags`,
      );
    }
    const after = rest.slice(1);
    const i = after.findIndex((a) => !a.startsWith("-"));
    const before = i < 0 ? after : after.slice(0, i);
    const own = before.find((a) => PERMISSION_FLAG.test(a));
    if (own) {
      throw new ToolSetError(
        `MCP server "${spec.name}" sets its own permission flag ${own}; remove it: provr starts Deno servers ` +
          `with the sandbox's flags (grant hosts with agent.net)`,
      );
    }
    const other = before.find((a) => !MCP_DENO_FLAGS.some((re) => re.test(a)));
    if (other) {
      throw new ToolSetError(
        `MCP server "${spec.name}" sets the Deno flag ${other}, which is not one a server may set; remove it ` +
          `(allowed: -q, --quiet, --check, --no-check, --unstable-*, --cached-only, --no-remote, --no-npm, ` +
          `--no-lock, --no-config, --seed=N)`,
      );
    }
    const args = i < 0 ? after : [...after.slice(0, i), script(after[i]!), ...after.slice(i + 1)];
    return { command: "deno", args: ["run", ...flags, ...args], sandboxed: true };
  }
  if (SCRIPT.test(program)) {
    return { command: "deno", args: ["run", ...flags, script(program), ...rest], sandboxed: true };
  }
  if (!options.allowUnsandboxed.includes(spec.name)) {
    throw new ToolSetError(
      `MCP server "${spec.name}" runs the program "${program}", which is not a Deno script and would run ` +
        `outside Deno's sandbox; allow it by name with agent.allow_unsandboxed: [${spec.name}] in the run file, ` +
        `or serve it from a Deno script`,
    );
  }
  return { command: program, args: rest, sandboxed: false };
}

/** How long a server has to end after its client closes (the SDK's own grace periods), in seconds. */
export const MCP_STOP_SECONDS = 5;

/** How a stdio server ended at the end of the run: `killed` when provr had to kill it. */
export interface McpStopped {
  server: string;
  pid: number;
  ended: "exited" | "killed";
}

/** One tool of an MCP server. */
export interface McpTool {
  server: string;
  definition: ToolDefinition;
  /** True when the server runs inside Deno's sandbox. */
  sandboxed: boolean;
}

/** What `sandbox_started` records of a server. */
export interface McpServerRecord {
  name: string;
  transport: "stdio" | "http";
  /** The program and arguments, or the URL. */
  command: string[] | null;
  url: string | null;
  sandboxed: boolean;
  tools: string[];
}

/** The transport to an MCP server, HTTP or stdio, and its record for `sandbox_started`. */
function transportOf(
  spec: McpSpec,
  options: { permissions: SandboxPermissions; allowUnsandboxed: string[]; folder: string; sdk: McpSdk },
): { transport: StreamableHTTPClientTransport | GroupStdioTransport; record: McpServerRecord } {
  if (spec.url) {
    if (spec.command) {
      throw new ToolSetError(`MCP server "${spec.name}" has both a command and a url; keep one`);
    }
    return {
      transport: new options.sdk.StreamableHTTPClientTransport(new URL(spec.url)),
      record: {
        name: spec.name,
        transport: "http",
        command: null,
        url: spec.url,
        sandboxed: false,
        tools: [],
      },
    };
  }
  const launch = mcpLaunch(spec, options);
  return {
    transport: new options.sdk.GroupStdioTransport({
      command: launch.command,
      args: launch.args,
      cwd: options.folder,
      denoCache: launch.sandboxed,
    }),
    record: {
      name: spec.name,
      transport: "stdio",
      command: [launch.command, ...launch.args],
      url: null,
      sandboxed: launch.sandboxed,
      tools: [],
    },
  };
}

/**
 * The run's MCP servers, connected.
 *
 * @example
 * ```ts ignore
 * import { McpServers } from "./mcp.ts";
 * await using servers = await McpServers.open([{ name: "rates", command: ["fixtures/mcp/server.ts"] }], {
 *   permissions, allowUnsandboxed: [], folder: ".",
 * });
 * await servers.call("add", { a: 1, b: 2 }, {});
 * ```
 */
export class McpServers implements AsyncDisposable {
  readonly tools: McpTool[] = [];
  readonly servers: McpServerRecord[] = [];
  readonly #clients = new Map<string, Client>();
  readonly #children = new Map<string, GroupStdioTransport>();
  readonly #byTool = new Map<string, { client: Client; server: string }>();

  private constructor() {}

  /**
   * Starts or connects to each server and lists its tools.
   * @throws ToolSetError naming the server when it is refused, cannot start, or lists a tool name twice.
   */
  static async open(
    specs: McpSpec[],
    options: {
      permissions: SandboxPermissions;
      allowUnsandboxed: string[];
      folder: string;
      taken?: string[];
    },
  ): Promise<McpServers> {
    const servers = new McpServers();
    const taken = new Set(options.taken ?? []);
    const sdk = await mcpSdk();
    const { Client, GroupStdioTransport } = sdk;
    try {
      for (const spec of specs) {
        if (servers.#clients.has(spec.name)) {
          throw new ToolSetError(`MCP server "${spec.name}" is named twice`);
        }
        const { transport, record } = transportOf(spec, { ...options, sdk });
        const client = new Client({ name: "provrun", version: "0.1.0" });
        try {
          await client.connect(transport);
        } catch (error) {
          const stderr = transport instanceof GroupStdioTransport ? firstErrorLine(transport.stderrText) : "";
          throw new ToolSetError(
            `MCP server "${spec.name}" cannot be reached: ${(error as Error).message}${
              stderr ? `; it wrote: ${stderr}` : ""
            }; check its command or url`,
            { cause: error },
          );
        }
        servers.#clients.set(spec.name, client);
        if (transport instanceof GroupStdioTransport) servers.#children.set(spec.name, transport);
        const listed = await client.listTools();
        for (const t of listed.tools) {
          if (taken.has(t.name)) {
            throw new ToolSetError(
              `MCP server "${spec.name}" offers a tool "${t.name}", and another tool has that name; rename one`,
            );
          }
          taken.add(t.name);
          servers.#byTool.set(t.name, { client, server: spec.name });
          servers.tools.push({
            server: spec.name,
            sandboxed: record.sandboxed,
            definition: {
              name: t.name,
              description: t.description ?? "",
              input_schema: t.inputSchema as ToolDefinition["input_schema"],
              // The server's own word, as MCP's tool annotations give it (a hint, which provr takes as declared).
              ...(t.annotations?.idempotentHint === true ? { idempotent: true } : {}),
            },
          });
          record.tools.push(t.name);
        }
        servers.servers.push(record);
      }
    } catch (error) {
      await servers.close();
      throw error;
    }
    return servers;
  }

  /**
   * Calls a tool of a server.
   * @returns The tool's structured content, else its text (one text part) or its content parts.
   * @throws ToolFailed (`McpToolError`) when the server reports an error; ToolTimeout past `seconds`.
   */
  async call(
    tool: string,
    args: unknown,
    options: { signal?: AbortSignal; seconds?: number },
  ): Promise<unknown> {
    const entry = this.#byTool.get(tool);
    if (!entry) throw new TypeError(`no MCP tool "${tool}"`);
    let result;
    try {
      result = await entry.client.callTool(
        { name: tool, arguments: (args ?? {}) as Record<string, unknown> },
        undefined,
        {
          ...(options.signal ? { signal: options.signal } : {}),
          ...(options.seconds ? { timeout: options.seconds * 1000 } : {}),
        },
      );
    } catch (error) {
      options.signal?.throwIfAborted();
      if ((error as { code?: number }).code === -32001) throw new ToolTimeout(tool, options.seconds ?? 0);
      throw error;
    }
    const content = (result.content ?? []) as { type: string; text?: string }[];
    const text = content.filter((c) => c.type === "text").map((c) => c.text ?? "").join("\n");
    if (result.isError) throw new ToolFailed(tool, "McpToolError", text || "the server reported an error");
    if (result.structuredContent) return result.structuredContent;
    return content.length === 1 && content[0]!.type === "text" ? text : content;
  }

  /**
   * Stops every server: its client closes (a stdio server's stdin ends, and it has 2 seconds to end), then a
   * stdio server's whole process group (the server and every process it started) gets SIGTERM, and SIGKILL
   * after {@linkcode MCP_STOP_SECONDS} for whatever is left.
   *
   * @returns How each stdio server ended: `exited`, or `killed` when provr had to kill any of its processes.
   */
  async close(): Promise<McpStopped[]> {
    const stopped: McpStopped[] = [];
    for (const [name, client] of this.#clients) {
      const child = this.#children.get(name);
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        client.close().catch(() => {}),
        new Promise<void>((resolve) => timer = setTimeout(resolve, MCP_STOP_SECONDS * 1000)),
      ]);
      clearTimeout(timer);
      if (child === undefined) continue;
      const ended = await child.stop(MCP_STOP_SECONDS * 1000);
      stopped.push({ server: name, pid: child.pid, ended });
    }
    this.#clients.clear();
    this.#children.clear();
    return stopped;
  }

  /** Closes the servers. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/** The first error line of a server's standard error (else its first line but Deno's downloads), plain. */
export function firstErrorLine(text: string): string {
  // deno-lint-ignore no-control-regex
  const plain = text.replace(/\x1b\[[0-9;]*m/g, "");
  const lines = plain.split("\n").map((l) => l.trim()).filter((l) => l !== "" && !/^Download /.test(l));
  const line = lines.find((l) => /^error\b/i.test(l)) ?? lines[0] ?? "";
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}

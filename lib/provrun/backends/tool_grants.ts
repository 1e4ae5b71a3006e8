/**
 * The broker's word on an agent program's tool call, asked by its blocking hook (Claude Code's and Codex's
 * `PreToolUse`) before the tool runs: the run's grants are the agent backend's sandbox, read `input/`,
 * `output/` and `scratch/`, write `output/` and `scratch/`, reach only the hosts `agent.net` lists. A call that
 * names a path or host outside them is refused, and so is a shell command unless the run file allows that
 * tool by name (`agent.allow_unsandboxed`), because a shell runs outside any sandbox of provrun's.
 * @module
 */
import { isAbsolute, join, resolve, sep } from "node:path";

/** What a run lets an agent program's tools reach. */
export interface ToolGrants {
  /** The folder relative paths are relative to (the run folder). */
  cwd: string;
  /** Folders the tools may read. */
  read: string[];
  /** Folders the tools may write. */
  write: string[];
  /** `host:port` entries the tools may reach. */
  hosts: string[];
  /** Tools the run file allows to run outside the sandbox (`agent.allow_unsandboxed`), such as `Bash`. */
  unsandboxed: string[];
}

/** The broker's decision. */
export interface ToolDecision {
  allow: boolean;
  /** Why, in one line; the program shows it to its model when the call is refused. */
  reason: string;
}

/**
 * The grants of a run folder: read `input/`, `output/`, `scratch/`; write `output/`, `scratch/`.
 *
 * @param folder The run folder.
 * @param options The hosts and the tools allowed outside the sandbox.
 * @returns The grants.
 */
export function runGrants(
  folder: string,
  options: { hosts?: string[]; unsandboxed?: string[] } = {},
): ToolGrants {
  const dir = resolve(folder);
  return {
    cwd: dir,
    read: ["input", "output", "scratch"].map((f) => join(dir, f)),
    write: ["output", "scratch"].map((f) => join(dir, f)),
    hosts: options.hosts ?? [],
    unsandboxed: options.unsandboxed ?? [],
  };
}

const READ_TOOLS: Record<string, string[]> = {
  Read: ["file_path"],
  Glob: ["path"],
  Grep: ["path"],
  LS: ["path"],
  NotebookRead: ["notebook_path"],
  view_image: ["path"],
};
const WRITE_TOOLS: Record<string, string[]> = {
  Write: ["file_path"],
  Edit: ["file_path"],
  MultiEdit: ["file_path"],
  NotebookEdit: ["notebook_path"],
};
const SHELLS = new Set(["Bash", "exec_command", "shell", "local_shell", "shell_command", "container.exec"]);
/** Tools that touch no file and no host themselves (their sub-agents' calls come through the hook too). */
const INNER = new Set([
  "Task",
  "Agent",
  "TodoWrite",
  "ToolSearch",
  "ExitPlanMode",
  "update_plan",
  "write_stdin",
  "ListAgents",
]);

function inside(path: string, roots: string[]): boolean {
  return roots.some((root) => path === root || path.startsWith(root + sep));
}

function absolute(path: string, cwd: string): string {
  return isAbsolute(path) ? resolve(path) : resolve(cwd, path);
}

function hostOf(url: string): string | null {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || (u.protocol === "https:" ? "443" : "80")}`;
  } catch {
    return null;
  }
}

const refuse = (reason: string): ToolDecision => ({ allow: false, reason });
const allow = (reason: string): ToolDecision => ({ allow: true, reason });

function checkPaths(paths: string[], roots: string[], verb: string, grants: ToolGrants): ToolDecision {
  for (const p of paths) {
    const abs = absolute(p, grants.cwd);
    if (!inside(abs, roots)) {
      return refuse(
        `${abs} is outside the folders this run may ${verb} (${roots.join(", ")}); provrun refused the call`,
      );
    }
  }
  return allow(`within the run's ${verb} grants`);
}

/** The paths an apply_patch text touches (`*** Add File: p`, `*** Update File: p`, `*** Move to: p`, …). */
function patchPaths(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$/gm)) {
    out.push((m[1] ?? m[2]!).trim());
  }
  return out;
}

/** The absolute paths and `..` segments a shell command names: a check of what it says, not what it does. */
function commandPaths(command: string): { paths: string[]; parent: boolean } {
  const words = command.split(/[\s;|&<>()'"`=]+/).filter((w) => w !== "");
  return {
    paths: words.filter((w) => w.startsWith("/") || w.startsWith("~")),
    parent: words.some((w) => w === ".." || w.startsWith("../") || w.includes("/../") || w.endsWith("/..")),
  };
}

function text(v: unknown): string | null {
  return typeof v === "string" ? v : null;
}

/**
 * Decides a tool call of an agent program by the run's grants.
 *
 * @param tool The tool's name, as the program's hook reports it (`Read`, `Bash`, `apply_patch`, …).
 * @param input The tool's input, as the hook reports it.
 * @param grants The run's grants.
 * @returns Allow or refuse, with the reason.
 * @example
 * ```ts
 * import { decideToolCall, runGrants } from "./tool_grants.ts";
 * decideToolCall("Read", { file_path: "/etc/passwd" }, runGrants("/runs/run-x")).allow; // false
 * decideToolCall("Write", { file_path: "output/a.md" }, runGrants("/runs/run-x")).allow; // true
 * ```
 */
export function decideToolCall(
  tool: string,
  input: Record<string, unknown>,
  grants: ToolGrants,
): ToolDecision {
  if (READ_TOOLS[tool]) {
    const paths = READ_TOOLS[tool].map((k) => text(input[k])).filter((p): p is string => p !== null);
    if (!paths.length) paths.push(grants.cwd);
    return checkPaths(paths, grants.read, "read", grants);
  }
  if (WRITE_TOOLS[tool]) {
    const paths = WRITE_TOOLS[tool].map((k) => text(input[k])).filter((p): p is string => p !== null);
    if (!paths.length) return refuse(`${tool} names no file; provrun refused the call`);
    return checkPaths(paths, grants.write, "write", grants);
  }
  if (tool === "apply_patch") {
    const patch = text(input.command) ?? text(input.patch) ?? text(input.input) ?? JSON.stringify(input);
    const paths = patchPaths(patch);
    if (!paths.length) return refuse("the patch names no file; provrun refused the call");
    return checkPaths(paths, grants.write, "write", grants);
  }
  if (tool === "WebFetch") {
    const host = hostOf(text(input.url) ?? "");
    if (host !== null && grants.hosts.includes(host)) return allow(`${host} is granted by agent.net`);
    return refuse(
      `${host ?? "the URL"} is not a host this run may reach (agent.net); provrun refused the call`,
    );
  }
  if (tool === "WebSearch" || tool === "web_search") {
    return refuse("a web search reaches hosts that provrun cannot name or check; provrun refused the call");
  }
  if (SHELLS.has(tool)) {
    if (!grants.unsandboxed.includes(tool)) {
      return refuse(
        `${tool} runs commands outside provrun's sandbox, and the run file does not allow it ` +
          `(agent.allow_unsandboxed: [${tool}]); provrun refused the call`,
      );
    }
    const command = text(input.command) ?? text(input.cmd) ??
      (Array.isArray(input.command) ? (input.command as unknown[]).join(" ") : "");
    const { paths, parent } = commandPaths(command);
    if (parent) return refuse("the command names a parent folder (..); provrun refused the call");
    return checkPaths(paths.map((p) => p.replace(/^~/, "/~")), grants.read, "read", grants);
  }
  if (tool.startsWith("mcp__")) {
    return refuse(
      `${tool} is a tool of an MCP server that this run does not grant; provrun refused the call`,
    );
  }
  if (INNER.has(tool)) return allow("the tool touches no file or host itself");
  return refuse(`${tool} is a tool provrun does not know, so it cannot check it against the run's grants`);
}

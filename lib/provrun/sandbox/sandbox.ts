/**
 * The sandbox: Deno child processes started with exactly the run's grants as `--allow-*` flags and
 * `--no-prompt` (read `input/` and `output/`, write `output/` and `scratch/`, net only the hosts the run
 * grants, no env, run, ffi, sys, and no remote import), each with its own stdin and stdout and a clean
 * environment. Every tool's `execute` runs in one, so no tool ever prompts, whatever flags the caller was
 * started with. A process runs one call at a time; a call that runs past its limit has its process killed
 * (its CPU freed at once), and the next call gets a fresh one. Before the first process starts, each tools
 * module's whole import graph is checked (`import_graph.ts`).
 * @module
 */
import { join, resolve } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";
import { ToolFailed, ToolSetError, ToolTimeout } from "../run/errors.ts";
import { MAX_TIMER_SECONDS } from "../run/run_file.ts";
import { checkImportGraph } from "./import_graph.ts";
import { forgetProcess, watchProcess } from "./reaper.ts";
import { configFlags, sandboxDeno } from "./sandbox_deno.ts";
import {
  checkCompiledDeno,
  type ChildModules,
  compiledDeno,
  isCompiled,
  ownModules,
  privateCopy,
} from "./sandbox_compiled.ts";
import type { ToolDefinition } from "./sandbox_worker.ts";

export type { ToolDefinition } from "./sandbox_worker.ts";

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
 * import { sandboxPermissions } from "./sandbox.ts";
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
 * import { sandboxFlags, sandboxPermissions } from "./sandbox.ts";
 * sandboxFlags(sandboxPermissions("/runs/run-x")); // ["--no-prompt", "--allow-read=…", "--allow-write=…"]
 * ```
 */
export function sandboxFlags(p: SandboxPermissions): string[] {
  const flags = ["--no-prompt", `--allow-read=${p.read.join(",")}`, `--allow-write=${p.write.join(",")}`];
  if (p.net) flags.push(`--allow-net=${p.net.join(",")}`);
  return flags;
}

/** Options of {@linkcode Sandbox.open}. */
export interface SandboxOptions {
  /** The hosts (`host:port`) tools may reach. */
  net?: string[];
  /** File URLs of tools modules, each exporting `TOOLS`. */
  modules?: string[];
  /** The tools folder the modules come from: their imports may not leave it (the modules' folder by default). */
  toolsFolder?: string;
  /** Offer the built-in filesystem tools (true by default). */
  builtins?: boolean;
  /** A call's time limit in seconds (30 by default). */
  toolSeconds?: number;
  /** The largest result of one call, as JSON bytes ({@linkcode DEFAULT_TOOL_RESULT_BYTES} by default). */
  resultBytes?: number;
  /** The heap of one sandbox process, in MB ({@linkcode DEFAULT_SANDBOX_MEMORY_MB} by default). */
  memoryMb?: number;
  /**
   * Run as a compiled provr does (`deno` from the PATH on a private copy of the sandbox's modules); by
   * default, when this process is a compiled binary. The tests force it.
   */
  compiled?: boolean;
  /** The Deno program of a compiled provr's sandbox (`deno` from the PATH by default). */
  denoBin?: string;
}

/** The default limit of one tool result, as JSON: 16 MB. */
export const DEFAULT_TOOL_RESULT_BYTES = 16 * 1024 * 1024;
/** The default heap of one sandbox process: 512 MB. */
export const DEFAULT_SANDBOX_MEMORY_MB = 512;

interface Reply {
  id?: number;
  op?: string;
  ok?: boolean;
  value?: unknown;
  console?: string;
  error?: { name: string; message: string };
  tools?: ToolDefinition[];
}

/** What a sandboxed call gives back beside its value. */
export interface CallOutcome {
  value: unknown;
  /** What the tool wrote to its console, stdout or stderr during the call ("" for nothing). */
  console: string;
}

/** The variables a Deno process needs to find its module cache; nothing else reaches a sandbox process. */
const CACHE_ENV = ["DENO_DIR", "XDG_CACHE_HOME", "HOME", "PATH"];
const LINE_SLACK = 64 * 1024 + 1024;
const decoder = new TextDecoder();

/** One sandbox process: its pipes, the call it serves, what it wrote beside its replies. */
class Child {
  readonly process: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  #waiting: ((reply: Reply) => void) | null = null;
  #failing: ((error: Error) => void) | null = null;
  #stray = "";
  #stderr = "";
  #killed = false;
  readonly exited: Promise<void>;

  constructor(deno: string, args: string[], env: Record<string, string>, readonly maxLine: number) {
    this.process = new Deno.Command(deno, {
      args,
      env,
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.#writer = this.process.stdin.getWriter();
    // A busy tool never reads its stdin, so it would not see provr end: the reaper kills it then.
    const pid = this.process.pid;
    watchProcess(pid);
    this.process.status.then(() => forgetProcess(pid), () => {});
    const out = this.#readLines();
    const err = this.#readStderr();
    this.exited = Promise.all([this.process.status, out, err]).then(() => {
      this.#fail(new Error(this.#killed ? "the sandbox process was stopped" : this.lastWords()));
    });
  }

  /** One line saying why the process ended, from what it wrote to stderr. */
  lastWords(): string {
    // deno-lint-ignore no-control-regex
    const lines = this.#stderr.replace(/\x1b\[[0-9;]*m/g, "").split("\n").map((l) => l.trim()).filter(
      Boolean,
    );
    const line = lines.find((l) => /^error\b/i.test(l)) ?? lines[0];
    return line ? `the sandbox process ended: ${line}` : "the sandbox process ended";
  }

  async #readLines(): Promise<void> {
    let parts: Uint8Array[] = [];
    let size = 0;
    try {
      for await (const chunk of this.process.stdout) {
        let from = 0;
        for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, from)) {
          parts.push(chunk.subarray(from, i));
          this.#line(parts.length === 1 ? parts[0]! : concat(parts, size + i - from));
          parts = [];
          size = 0;
          from = i + 1;
        }
        if (from < chunk.length) {
          parts.push(chunk.subarray(from));
          size += chunk.length - from;
          if (size > this.maxLine) {
            this.#fail(
              Object.assign(
                new Error(
                  `the tool's reply passed ${this.maxLine} bytes; the tool was stopped (agent.limits.tool_result_bytes)`,
                ),
                { name: "ResultTooLarge" },
              ),
            );
            this.kill();
            return;
          }
        }
      }
    } catch {
      // The pipe broke because the process was killed.
    }
  }

  async #readStderr(): Promise<void> {
    try {
      for await (const chunk of this.process.stderr) {
        this.#stderr = (this.#stderr + decoder.decode(chunk)).slice(-16_384);
      }
    } catch {
      // The pipe broke because the process was killed.
    }
  }

  #line(bytes: Uint8Array): void {
    const text = decoder.decode(bytes);
    let reply: Reply | null = null;
    try {
      reply = JSON.parse(text);
    } catch {
      reply = null;
    }
    if (reply && typeof reply === "object" && this.#waiting) {
      const waiting = this.#waiting;
      this.#waiting = null;
      this.#failing = null;
      waiting(reply);
    } else if (this.#stray.length < 65_536) this.#stray += text.slice(0, 65_536) + "\n";
  }

  #fail(error: Error): void {
    const failing = this.#failing;
    this.#waiting = null;
    this.#failing = null;
    failing?.(error);
  }

  /** Sends one line and waits for the next reply. */
  request(message: unknown): Promise<Reply> {
    return new Promise((resolve, reject) => {
      this.#waiting = resolve;
      this.#failing = reject;
      this.#writer.write(new TextEncoder().encode(JSON.stringify(message) + "\n")).catch(() => {});
    });
  }

  /** Whatever reached stdout outside a reply since the last call, and empties it. */
  takeStray(): string {
    const stray = this.#stray;
    this.#stray = "";
    return stray;
  }

  kill(): void {
    if (this.#killed) return;
    this.#killed = true;
    try {
      this.process.kill("SIGKILL");
    } catch {
      // It has already ended.
    }
    this.#writer.close().catch(() => {});
  }
}

function concat(parts: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * A pool of sandbox processes serving one run's tools.
 *
 * @example
 * ```ts
 * import { Sandbox } from "./sandbox.ts";
 * await using sandbox = await Sandbox.open("/runs/run-x", { toolSeconds: 5 });
 * const text = await sandbox.call("read_file", { path: "/input/revenue.csv" });
 * ```
 */
export class Sandbox implements AsyncDisposable {
  readonly permissions: SandboxPermissions;
  readonly toolSeconds: number;
  readonly resultBytes: number;
  #tools: ToolDefinition[] = [];
  #args: string[] = [];
  #deno = "deno";
  #own: ChildModules | null = null;
  readonly #options: SandboxOptions;
  readonly #env: Record<string, string> = {};
  readonly #idle: Child[] = [];
  readonly #all = new Set<Child>();
  #nextId = 1;
  #closed = false;
  /** How many processes were started, and how many were killed for a time limit, a cancel or a crash. */
  readonly stats = { started: 0, terminated: 0 };

  private constructor(readonly folder: string, options: SandboxOptions) {
    this.permissions = sandboxPermissions(folder, options.net ?? []);
    this.toolSeconds = options.toolSeconds ?? 30;
    if (!(this.toolSeconds > 0 && this.toolSeconds <= MAX_TIMER_SECONDS)) {
      throw new RangeError(`toolSeconds is more than 0 and at most ${MAX_TIMER_SECONDS}`);
    }
    this.resultBytes = options.resultBytes ?? DEFAULT_TOOL_RESULT_BYTES;
    this.#options = options;
    for (const name of CACHE_ENV) {
      try {
        const value = Deno.env.get(name);
        if (value !== undefined) this.#env[name] = value;
      } catch {
        // Not granted to this process: the child finds its cache as Deno does by default.
      }
    }
  }

  /**
   * Checks the tools modules' imports, starts the first process and reads the tool definitions.
   *
   * @param folder The run folder.
   * @param options The tools modules, the granted hosts, the limits.
   * @throws ToolSetError when a tools module imports from outside its folder and the pinned packages, cannot
   * be loaded, or its `TOOLS` is wrong.
   */
  static async open(folder: string, options: SandboxOptions = {}): Promise<Sandbox> {
    const sandbox = new Sandbox(folder, options);
    const compiled = options.compiled ?? isCompiled();
    let own: ChildModules;
    if (compiled) {
      sandbox.#deno = compiledDeno(options.denoBin);
      await checkCompiledDeno(sandbox.#deno);
      own = await privateCopy();
    } else {
      sandbox.#deno = sandboxDeno();
      own = ownModules(configFlags()[0]?.slice("--config=".length) ?? null);
    }
    sandbox.#own = own;
    try {
      if (options.modules?.length) {
        await checkImportGraph(options.modules, {
          folder: options.toolsFolder ?? join(fromFileUrl(options.modules[0]!), ".."),
          config: own.config,
        });
      }
      sandbox.#args = sandbox.#argsFor(own);
      const first = await sandbox.#spawn();
      sandbox.#idle.push(first.child);
      sandbox.#tools = first.tools;
    } catch (error) {
      await own.cleanup();
      throw error;
    }
    return sandbox;
  }

  /** Where the sandbox processes' own modules come from: the toolkit's files, or a compiled provr's copy. */
  get modulesFrom(): "files" | "copy" {
    return this.#own?.from ?? "files";
  }

  #argsFor(own: ChildModules): string[] {
    const options = this.#options;
    const modules = options.modules ?? [];
    // The main module is a bootstrap that imports the guard first (evaluated before any tools module, so no
    // tool ever sees the process's stdin and stdout), then the tools statically, which needs no read
    // permission on them, so nothing beyond the run's grants is given.
    const lines = [`import ${JSON.stringify(own.guard)};`];
    modules.forEach((url, i) => lines.push(`import * as m${i} from ${JSON.stringify(url)};`));
    lines.push(`import { serveProcess } from ${JSON.stringify(own.child)};`);
    lines.push(
      `await serveProcess([${
        modules.map((url, i) => `{ url: ${JSON.stringify(url)}, mod: m${i} }`).join(", ")
      }], ${JSON.stringify({ builtins: options.builtins ?? true, resultBytes: this.resultBytes })});`,
    );
    const bootstrap = `data:text/javascript;base64,${btoa(lines.join("\n"))}`;
    return [
      "run",
      ...sandboxFlags(this.permissions),
      ...(own.config ? [`--config=${own.config}`] : []),
      "--no-remote",
      "--cached-only",
      ...own.lockFlags,
      `--v8-flags=--max-old-space-size=${options.memoryMb ?? DEFAULT_SANDBOX_MEMORY_MB}`,
      bootstrap,
    ];
  }

  /** The definitions of the tools in the sandbox. */
  get tools(): ToolDefinition[] {
    return this.#tools;
  }

  async #spawn(): Promise<{ child: Child; tools: ToolDefinition[] }> {
    const child = new Child(this.#deno, this.#args, this.#env, this.resultBytes + LINE_SLACK);
    this.stats.started += 1;
    this.#all.add(child);
    child.exited.then(() => this.#forget(child));
    let reply: Reply;
    try {
      reply = await child.request({ op: "init", root: resolve(this.folder) });
    } catch (error) {
      this.#drop(child, false);
      throw new ToolSetError(
        `the sandbox's tools cannot be loaded: ${(error as Error).message}; fix the tools module, ` +
          `or remove it from agent.tools_folder`,
        { cause: error },
      );
    }
    if (reply.op !== "ready") {
      this.#drop(child, false);
      throw new ToolSetError(
        `the sandbox's tools cannot be loaded: ${reply.error?.name}: ${reply.error?.message}; fix the tools ` +
          `module named, or remove it from agent.tools_folder`,
      );
    }
    return { child, tools: reply.tools ?? [] };
  }

  #forget(child: Child): void {
    this.#all.delete(child);
    const i = this.#idle.indexOf(child);
    if (i >= 0) this.#idle.splice(i, 1);
  }

  #drop(child: Child, counted: boolean): void {
    child.kill();
    this.#forget(child);
    if (counted) this.stats.terminated += 1;
  }

  /**
   * Runs one tool call in a sandbox process.
   *
   * @param tool The tool's name.
   * @param args Its arguments (JSON).
   * @param options `callId`; `signal` stops the call (its process is killed); `seconds` overrides the limit.
   * @returns The tool's result, as JSON.
   * @throws ToolFailed with the tool's error name (`NotCapable`, `ResultTooLarge`, …); ToolTimeout past the
   * limit.
   */
  async call(
    tool: string,
    args: unknown,
    options: { callId?: string; signal?: AbortSignal; seconds?: number } = {},
  ): Promise<unknown> {
    return (await this.callWithConsole(tool, args, options)).value;
  }

  /**
   * Runs one tool call in a sandbox process, and gives what the tool wrote to its console beside its value.
   * A failed call's error carries the console as `console`.
   *
   * @param tool The tool's name.
   * @param args Its arguments (JSON).
   * @param options As {@linkcode Sandbox.call}.
   * @returns The value and the console text.
   * @throws As {@linkcode Sandbox.call}.
   */
  async callWithConsole(
    tool: string,
    args: unknown,
    options: { callId?: string; signal?: AbortSignal; seconds?: number } = {},
  ): Promise<CallOutcome> {
    if (this.#closed) throw new TypeError("the sandbox is closed");
    options.signal?.throwIfAborted();
    const child = this.#idle.pop() ?? (await this.#spawn()).child;
    const id = this.#nextId++;
    const seconds = Math.min(options.seconds ?? this.toolSeconds, MAX_TIMER_SECONDS);
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onAbort: (() => void) | undefined;
    try {
      const reply = await new Promise<Reply>((resolve, reject) => {
        timer = setTimeout(() => {
          this.#drop(child, true);
          reject(new ToolTimeout(tool, seconds));
        }, seconds * 1000);
        onAbort = () => {
          this.#drop(child, true);
          reject(options.signal!.reason);
        };
        options.signal?.addEventListener("abort", onAbort, { once: true });
        child.request({ id, tool, args, callId: options.callId ?? String(id) }).then(
          resolve,
          (error: Error) => {
            // A timeout or a cancel has already killed and counted it; a crash or an oversized reply has not.
            if (this.#all.has(child)) this.#drop(child, true);
            reject(
              new ToolFailed(tool, error.name === "Error" ? "SandboxExited" : error.name, error.message),
            );
          },
        );
      });
      const console = (reply.console ?? "") + child.takeStray();
      if (reply.id !== id) {
        this.#drop(child, true);
        throw new ToolFailed(
          tool,
          "SandboxError",
          "the sandbox process answered out of turn; it was replaced",
        );
      }
      if (!reply.ok) {
        throw Object.assign(
          new ToolFailed(tool, reply.error?.name ?? "Error", reply.error?.message ?? ""),
          { console },
        );
      }
      return { value: reply.value ?? null, console };
    } finally {
      clearTimeout(timer);
      if (onAbort) options.signal?.removeEventListener("abort", onAbort);
      if (this.#all.has(child) && !this.#closed) this.#idle.push(child);
    }
  }

  /** Kills every sandbox process and waits for each to end. */
  async close(): Promise<void> {
    this.#closed = true;
    const all = [...this.#all];
    for (const child of all) this.#drop(child, false);
    await Promise.all(all.map((c) => c.exited));
    await this.#own?.cleanup();
  }

  /** Closes the sandbox. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

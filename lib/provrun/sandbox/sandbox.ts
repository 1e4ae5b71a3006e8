/**
 * The sandbox: processes that run an agent's tools, each a main thread that talks to provr
 * (`sandbox_role.ts`) and a Worker whose permissions are exactly the run's grants (read `input/` and `output/`,
 * write `output/` and `scratch/`, net only the hosts the run grants, no env, run, ffi, sys, and no remote
 * import), where every tool's code runs. From source the process is `deno run` with the same grants as flags
 * and `--no-prompt`; a compiled provr starts itself in the sandbox role (`sandbox_launch.ts`). No tool ever
 * prompts, whatever flags the caller was started with. A process runs one call at a time; a call that runs past
 * its limit has its process killed (its CPU freed at once), and the next call gets a fresh one. The tools
 * folder's modules are sent to the process as a snapshot and load under `file:///tools/` through the worker's
 * module hooks (`_tools_hooks.ts`), which refuse any import outside it, the pinned packages and `node:`.
 * @module
 */
import { join, relative, resolve } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";
import CONFIG from "../../../deno.json" with { type: "json" };
import { concatBytes } from "../../provevi/evidence/bytes.ts";
import { ToolFailed, ToolSetError, ToolTimeout } from "../run/errors.ts";
import { MAX_TIMER_SECONDS } from "../run/run_file.ts";

/** How long a sandbox process may take to start, before its tools modules load (its own bound, not theirs). */
const START_SECONDS = 120;
import { PINNED_PACKAGES } from "./import_graph.ts";
import { forgetProcess, watchProcess } from "./reaper.ts";
import { isCompiled, type Launch, launchFor } from "./sandbox_launch.ts";
import type { RoleInit } from "./sandbox_role.ts";
import { fileHashes, toolsSnapshot } from "./tools_folder.ts";
import { npmRootOf } from "./_tools_hooks.ts";
import type { ToolDefinition } from "./sandbox_worker.ts";

export type { ToolDefinition } from "./sandbox_worker.ts";

export { sandboxFlags, type SandboxPermissions, sandboxPermissions } from "./sandbox_permissions.ts";
import { type SandboxPermissions, sandboxPermissions } from "./sandbox_permissions.ts";

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
  /**
   * How long the tools modules may take to load, in seconds (60 by default), from when the process begins to load
   * the first (its start has a bound of its own, 120 s or this if longer).
   */
  loadSeconds?: number;
  /** A call's time limit in seconds (30 by default). */
  toolSeconds?: number;
  /** The largest result of one call, as JSON bytes ({@linkcode DEFAULT_TOOL_RESULT_BYTES} by default). */
  resultBytes?: number;
  /**
   * The memory of one sandbox process, in MB ({@linkcode DEFAULT_SANDBOX_MEMORY_MB} by default): its heap under
   * `deno run`, and in both ways what it may use above its start before it is stopped.
   */
  memoryMb?: number;
  /**
   * Start each sandbox process as this program in the sandbox role, with this command: a compiled provr's is
   * `[Deno.execPath()]`, the default when this process is compiled; the tests give `deno run` with the
   * compiled binary's flags on `cli/provr.ts`. Null starts `deno run` on the role's module (from source).
   */
  self?: string[] | null;
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
  module?: string | null;
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
  readonly token: string;
  readonly maxLine: number;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  #waiting: ((reply: Reply) => void) | null = null;
  #failing: ((error: Error) => void) | null = null;
  #stray = "";
  #stderr = "";
  #killed = false;
  /** The tools module being loaded, as the process last said. */
  loading: string | null = null;
  readonly #began = Promise.withResolvers<void>();
  /** Settles when the process says it loads its first tools module. */
  readonly loadingBegan: Promise<void> = this.#began.promise;
  readonly exited: Promise<void>;
  readonly #prefix: string;

  constructor(launch: Launch, options: { env: Record<string, string>; cwd: string; maxLine: number }) {
    this.maxLine = options.maxLine;
    this.token = [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, "0"))
      .join("");
    this.#prefix = `${this.token} `;
    this.process = new Deno.Command(launch.program, {
      args: launch.args,
      env: options.env,
      clearEnv: true,
      cwd: options.cwd,
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
    const line = (lines.find((l) => /^error\b/i.test(l)) ?? lines[0] ?? "")
      .replace(/^error:\s*/i, "").replace(/^Uncaught (\(in [^)]*\) )?/, "");
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
          this.#line(parts.length === 1 ? parts[0]! : concatBytes(parts));
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
    if (text.startsWith(this.#prefix)) {
      try {
        reply = JSON.parse(text.slice(this.#prefix.length));
      } catch {
        reply = null;
      }
    }
    if (reply?.op === "loading") {
      this.loading = reply.module ?? null;
      this.#began.resolve();
      return;
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
  #launch: Launch | null = null;
  #init: Omit<RoleInit, "token"> | null = null;
  #toolsFolder = "";
  #loadConsole = "";
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
   * Reads the tools folder, starts the first process, loads the tools modules there and reads the tool
   * definitions.
   *
   * @param folder The run folder.
   * @param options The tools modules, the granted hosts, the limits.
   * @throws ToolSetError naming the module when a tools module imports from outside its folder and the pinned
   * packages, throws or does not finish at import, or exports a wrong `TOOLS`.
   */
  static async open(folder: string, options: SandboxOptions = {}): Promise<Sandbox> {
    const sandbox = new Sandbox(folder, options);
    const modules = options.modules ?? [];
    const toolsFolder = options.toolsFolder ?? (modules[0] ? join(fromFileUrl(modules[0]), "..") : "");
    sandbox.#toolsFolder = toolsFolder;
    const files = toolsFolder ? await toolsSnapshot(toolsFolder) : {};
    const memoryMb = options.memoryMb ?? DEFAULT_SANDBOX_MEMORY_MB;
    const self = options.self !== undefined ? options.self : isCompiled() ? [Deno.execPath()] : null;
    sandbox.#launch = launchFor(sandbox.permissions, { self, memoryMb });
    sandbox.#init = {
      op: "init",
      permissions: sandbox.permissions,
      memoryMb,
      files,
      modules: modules.map((url) => relative(toolsFolder, fromFileUrl(url)).split("\\").join("/")),
      builtins: options.builtins ?? true,
      resultBytes: sandbox.resultBytes,
      root: resolve(folder),
      npmRoot: npmRootOf(import.meta.resolve("zod")),
      importNames: Object.keys(CONFIG.imports),
      pinned: PINNED_PACKAGES,
    };
    const first = await sandbox.#spawn();
    sandbox.#idle.push(first.child);
    sandbox.#tools = first.tools;
    return sandbox;
  }

  /** How the sandbox processes start: `deno` (`deno run` with the grants as flags) or `self` (the role). */
  get mode(): "deno" | "self" {
    return this.#launch?.mode ?? "deno";
  }

  /** The SHA-256 of each file of the tools folder as the sandbox loads it, by path (`sandbox_started`'s `tools_files`). */
  get toolsFiles(): Record<string, string> {
    return fileHashes(this.#init?.files ?? {});
  }

  /** What the tools modules wrote to their console as they loaded ("" for nothing). */
  get loadConsole(): string {
    return this.#loadConsole;
  }

  /** The definitions of the tools in the sandbox. */
  get tools(): ToolDefinition[] {
    return this.#tools;
  }

  /** A path as a tool sees it (`/tools/x.ts`) as the user knows it. */
  #real(text: string): string {
    if (!this.#toolsFolder) return text;
    return text.replace(
      /(?:file:\/\/)?\/tools\/([^\s:;,)]+)/g,
      (_m, rel: string) => join(this.#toolsFolder, rel),
    );
  }

  /** The run folder, which tools are given anyway, so the working folder names nothing else. */
  #cwd(): string {
    const root = resolve(this.folder);
    try {
      return Deno.statSync(root).isDirectory ? root : "/";
    } catch {
      return "/";
    }
  }

  async #spawn(): Promise<{ child: Child; tools: ToolDefinition[] }> {
    let child: Child;
    const launch = this.#launch!;
    try {
      child = new Child(launch, { env: this.#env, cwd: this.#cwd(), maxLine: this.resultBytes + LINE_SLACK });
    } catch (error) {
      throw new ToolSetError(
        `the agent's tools run in a sandbox process, and ${launch.program} cannot be started ` +
          `(${(error as Error).name}): ${
            launch.mode === "self"
              ? "put provr on the PATH as provr"
              : "install Deno, or add --allow-run=deno"
          }`,
        { cause: error },
      );
    }
    this.stats.started += 1;
    this.#all.add(child);
    child.exited.then(() => this.#forget(child));
    let reply: Reply;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let settled = false;
    const seconds = Math.min(this.#options.loadSeconds ?? 60, MAX_TIMER_SECONDS);
    const limit = Promise.withResolvers<never>();
    const arm = (after: number, message: string) => {
      if (settled) return;
      clearTimeout(timer);
      timer = setTimeout(() => limit.reject(new Error(message)), after * 1000);
    };
    // The load limit is the tools modules': its clock starts when the process begins to load the first one, so
    // that a process slow to start (a loaded machine) is not taken for a module that never ends; the start has
    // its own bound.
    const start = Math.max(seconds, START_SECONDS);
    arm(start, `its process did not start within ${start} s`);
    void child.loadingBegan.then(() =>
      arm(seconds, `it did not finish loading within ${seconds} s (a top-level await that never ends?)`)
    );
    try {
      reply = await Promise.race([child.request({ ...this.#init, token: child.token }), limit.promise]);
    } catch (error) {
      this.#drop(child, false);
      const module = child.loading
        ? `the tools module ${join(this.#toolsFolder, child.loading)}`
        : "the tools";
      throw new ToolSetError(
        `${module} cannot be loaded: ${this.#real((error as Error).message)}; fix it, or remove it from ` +
          `agent.tools_folder`,
        { cause: error },
      );
    } finally {
      settled = true;
      clearTimeout(timer);
    }
    if (reply.op !== "ready") {
      this.#drop(child, false);
      const module = reply.module ? `the tools module ${join(this.#toolsFolder, reply.module)}` : "the tools";
      const why = this.#real(`${reply.error?.name}: ${reply.error?.message}`).split("\n")[0];
      throw new ToolSetError(
        `${module} cannot be loaded: ${why}; fix it, or remove it from agent.tools_folder`,
      );
    }
    if (this.stats.started === 1) this.#loadConsole = reply.console ?? "";
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
  }

  /** Closes the sandbox. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/**
 * The sandbox: Deno Workers whose permissions are exactly the run's grants (read `input/` and `output/`,
 * write `output/` and `scratch/`, net only the hosts the run grants, no env, run, ffi, sys or import). Every
 * tool's `execute` runs in one. A worker runs one call at a time; a call that runs past its limit has its
 * worker terminated, and the next call gets a fresh one. Needs `"unstable": ["worker-options"]`.
 * @module
 */
import { join, resolve } from "node:path";
import { ToolFailed, ToolSetError, ToolTimeout } from "../run/errors.ts";
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
  /** Offer the built-in filesystem tools (true by default). */
  builtins?: boolean;
  /** A call's time limit in seconds (30 by default). */
  toolSeconds?: number;
}

interface Handle {
  worker: Worker;
  busy: boolean;
}

interface Reply {
  id?: number;
  op?: string;
  ok?: boolean;
  value?: unknown;
  error?: { name: string; message: string };
  tools?: ToolDefinition[];
}

const WORKER_URL = new URL("./sandbox_worker.ts", import.meta.url).href;

/**
 * A pool of sandboxed workers serving one run's tools.
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
  #tools: ToolDefinition[] = [];
  readonly #bootstrap: string;
  readonly #idle: Handle[] = [];
  readonly #all = new Set<Handle>();
  #nextId = 1;
  #closed = false;
  /** How many workers were started, and how many were terminated for a time limit or a cancel. */
  readonly stats = { started: 0, terminated: 0 };

  private constructor(readonly folder: string, options: SandboxOptions) {
    this.permissions = sandboxPermissions(folder, options.net ?? []);
    this.toolSeconds = options.toolSeconds ?? 30;
    const modules = options.modules ?? [];
    // A Worker's dynamic import needs read permission on the module; static imports of its main module do
    // not. So the main module is a bootstrap that imports the tools statically, and nothing more is granted.
    const lines = [`import { serve } from ${JSON.stringify(WORKER_URL)};`];
    modules.forEach((url, i) => lines.push(`import * as m${i} from ${JSON.stringify(url)};`));
    lines.push(
      `serve([${modules.map((url, i) => `{ url: ${JSON.stringify(url)}, mod: m${i} }`).join(", ")}], ${
        JSON.stringify({ builtins: options.builtins ?? true })
      });`,
    );
    this.#bootstrap = `data:text/javascript;base64,${btoa(lines.join("\n"))}`;
  }

  /**
   * Starts the first worker and reads the tool definitions.
   *
   * @param folder The run folder.
   * @param options The tools modules, the granted hosts, the time limit.
   * @throws ToolSetError when a tools module cannot be loaded or its `TOOLS` is wrong.
   */
  static async open(folder: string, options: SandboxOptions = {}): Promise<Sandbox> {
    const sandbox = new Sandbox(folder, options);
    const first = await sandbox.#spawn();
    sandbox.#idle.push(first.handle);
    sandbox.#tools = first.tools;
    return sandbox;
  }

  /** The definitions of the tools in the sandbox. */
  get tools(): ToolDefinition[] {
    return this.#tools;
  }

  #spawn(): Promise<{ handle: Handle; tools: ToolDefinition[] }> {
    const worker = new Worker(this.#bootstrap, {
      type: "module",
      deno: { permissions: this.permissions },
    } as WorkerOptions);
    worker.postMessage({ op: "init", root: resolve(this.folder) });
    this.stats.started += 1;
    const handle: Handle = { worker, busy: false };
    this.#all.add(handle);
    return new Promise((resolve, reject) => {
      const fail = (message: string) => {
        this.#drop(handle, false);
        reject(
          new ToolSetError(
            `the sandbox's tools cannot be loaded: ${message}; fix the tools module named, or remove it from agent.tools_folder`,
          ),
        );
      };
      worker.onerror = (e) => {
        e.preventDefault();
        fail(e.message);
      };
      worker.onmessage = (e: MessageEvent<Reply>) => {
        if (e.data.op === "ready") resolve({ handle, tools: e.data.tools ?? [] });
        else if (e.data.op === "failed") fail(`${e.data.error?.name}: ${e.data.error?.message}`);
      };
    });
  }

  #drop(handle: Handle, counted: boolean): void {
    handle.worker.terminate();
    this.#all.delete(handle);
    const i = this.#idle.indexOf(handle);
    if (i >= 0) this.#idle.splice(i, 1);
    if (counted) this.stats.terminated += 1;
  }

  /**
   * Runs one tool call in a worker.
   *
   * @param tool The tool's name.
   * @param args Its arguments (JSON).
   * @param options `callId`; `signal` stops the call (its worker is terminated); `seconds` overrides the limit.
   * @returns The tool's result, as JSON.
   * @throws ToolFailed with the tool's error name (`NotCapable`, …); ToolTimeout past the limit.
   */
  async call(
    tool: string,
    args: unknown,
    options: { callId?: string; signal?: AbortSignal; seconds?: number } = {},
  ): Promise<unknown> {
    if (this.#closed) throw new TypeError("the sandbox is closed");
    options.signal?.throwIfAborted();
    const handle = this.#idle.pop() ?? (await this.#spawn()).handle;
    handle.busy = true;
    const id = this.#nextId++;
    const seconds = options.seconds ?? this.toolSeconds;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onAbort: (() => void) | undefined;
    try {
      return await new Promise<unknown>((resolve, reject) => {
        timer = setTimeout(() => {
          this.#drop(handle, true);
          reject(new ToolTimeout(tool, seconds));
        }, seconds * 1000);
        onAbort = () => {
          this.#drop(handle, true);
          reject(options.signal!.reason);
        };
        options.signal?.addEventListener("abort", onAbort, { once: true });
        handle.worker.onerror = (e) => {
          e.preventDefault();
          this.#drop(handle, false);
          reject(new ToolFailed(tool, "WorkerError", e.message));
        };
        handle.worker.onmessage = (e: MessageEvent<Reply>) => {
          if (e.data.id !== id) return;
          if (e.data.ok) resolve(e.data.value);
          else reject(new ToolFailed(tool, e.data.error?.name ?? "Error", e.data.error?.message ?? ""));
        };
        handle.worker.postMessage({ id, tool, args, callId: options.callId ?? String(id) });
      });
    } finally {
      clearTimeout(timer);
      if (onAbort) options.signal?.removeEventListener("abort", onAbort);
      handle.busy = false;
      if (this.#all.has(handle) && !this.#closed) this.#idle.push(handle);
    }
  }

  /** Terminates every worker. */
  close(): Promise<void> {
    this.#closed = true;
    for (const handle of [...this.#all]) this.#drop(handle, false);
    return Promise.resolve();
  }

  /** Closes the sandbox. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

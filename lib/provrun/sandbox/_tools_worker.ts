/**
 * The tools worker: the Worker, inside a sandbox process, whose permissions are exactly the run's grants and
 * where every tool's code runs, its tools modules' top-level code too. The process's main thread
 * (`sandbox_role.ts`) starts it and passes messages to and from provr; this worker never sees the process's
 * stdin or stdout.
 *
 * Messages in: `{ op: "init", … }` once (the tools folder's snapshot, which modules export `TOOLS`), then
 * `{ id, nonce, tool, args, callId }` per call. Messages out: `{ op: "ready", tools, console }` or
 * `{ op: "failed", module, error, console }` once, then `{ id, nonce, ok, text | error, console }` per call.
 * @module
 */
import { takeConsole } from "./_child_guard.ts"; // first: tools never see the real console
import { harden } from "./_worker_hardening.ts";
import { type HookOptions, installHooks, TOOLS_ROOT } from "./_tools_hooks.ts";
import { type LoadedModule, type LoadedTools, loadTools, runCall } from "./sandbox_worker.ts";

/** The first message: what the worker loads and its limits. */
export interface WorkerInit extends HookOptions {
  op: "init";
  /** The tools modules, as paths in the snapshot, in order. */
  modules: string[];
  builtins: boolean;
  resultBytes: number;
  /** The run folder. */
  root: string;
}

const post: (message: unknown) => void = (globalThis as unknown as Worker).postMessage.bind(globalThis);
const listen = EventTarget.prototype.addEventListener.bind(globalThis);
const encoder = new TextEncoder();

let shown = (text: string) => text;

function describe(error: unknown): { name: string; message: string } {
  if (error instanceof Error) {
    let name = "Error";
    let message = "";
    try {
      name = String(error.name || "Error");
      message = String(error.message);
    } catch {
      // A tool's error whose name or message throws.
    }
    return { name, message: shown(message) };
  }
  try {
    return { name: "Error", message: String(error) };
  } catch {
    return { name: "Error", message: "a value that cannot be shown" };
  }
}

/** A UTF-8 byte is at least one and at most three per UTF-16 unit, so most texts need no encoding here. */
function tooLarge(text: string, limit: number): boolean {
  if (text.length > limit) return true;
  if (text.length * 3 <= limit) return false;
  return encoder.encode(text).length > limit;
}

async function init(message: WorkerInit): Promise<LoadedTools | null> {
  try {
    harden({ npmRoot: message.npmRoot });
    shown = installHooks(message).shown;
  } catch (error) {
    post({ op: "failed", module: null, error: describe(error), console: takeConsole() });
    return null;
  }
  const modules: LoadedModule[] = [];
  for (const rel of message.modules) {
    post({ op: "loading", module: rel });
    try {
      const mod = await import(TOOLS_ROOT + rel.split("/").map(encodeURIComponent).join("/"));
      modules.push({ url: `/tools/${rel}`, mod });
    } catch (error) {
      post({ op: "failed", module: rel, error: describe(error), console: takeConsole() });
      return null;
    }
  }
  try {
    const tools = loadTools(modules, message.builtins);
    post({ op: "ready", tools: tools.map((t) => t.definition), console: takeConsole() });
    return new Map(tools.map((t) => [t.definition.name, t]));
  } catch (error) {
    post({ op: "failed", module: null, error: describe(error), console: takeConsole() });
    return null;
  }
}

let tools: LoadedTools | null = null;
let root = "";
let resultBytes = 0;

async function serve(
  message: { id: number; nonce: string; tool: string; args: unknown; callId: string },
): Promise<void> {
  const { id, nonce } = message;
  try {
    if (!tools) throw new TypeError("the sandbox's tools are not loaded");
    const text = await runCall(tools, root, message);
    if (tooLarge(text, resultBytes)) {
      throw Object.assign(
        new RangeError(
          `the result is ${text.length} characters as JSON, past the limit of ${resultBytes} bytes ` +
            `(agent.limits.tool_result_bytes); return less, or raise the limit`,
        ),
        { name: "ResultTooLarge" },
      );
    }
    post({ id, nonce, ok: true, text, console: takeConsole() });
  } catch (error) {
    post({ id, nonce, ok: false, error: describe(error), console: takeConsole() });
  }
}

// A tool's stray rejection or error must not end the worker: it goes into the console of the call.
listen("unhandledrejection", (event) => {
  event.preventDefault();
  console.error(`unhandled rejection: ${describe((event as PromiseRejectionEvent).reason).message}`);
});
listen("error", (event) => {
  event.preventDefault();
  console.error(`uncaught error: ${(event as ErrorEvent).message}`);
});

let started = false;
listen("message", (event) => {
  const message = (event as MessageEvent).data;
  if (message?.op === "init" && !started) {
    started = true;
    root = message.root;
    resultBytes = message.resultBytes;
    init(message as WorkerInit).then((loaded) => tools = loaded);
  } else if (started) serve(message);
});
// Tools may not read other calls' messages nor answer in the sandbox's name.
const refuse = () => {
  throw new Deno.errors.NotCapable("the sandbox's messages are not given to tools");
};
for (const key of ["postMessage", "onmessage", "onmessageerror"]) {
  Object.defineProperty(globalThis, key, { get: refuse, set: refuse, configurable: false });
}
// The listener is found through the prototype too, so the prototype's method is the one narrowed.
const protoListen = EventTarget.prototype.addEventListener;
const apply = Reflect.apply;
function narrowedListen(this: EventTarget, type: string, ...rest: unknown[]): void {
  if (this === globalThis && (type === "message" || type === "messageerror")) refuse();
  return apply(protoListen, this, [type, ...rest]);
}
for (const target of [EventTarget.prototype, globalThis]) {
  Object.defineProperty(target, "addEventListener", {
    value: narrowedListen,
    writable: false,
    configurable: false,
  });
}

/**
 * The sandbox role: the main thread of a sandbox process. It holds the process's stdin and stdout, the line
 * protocol with provr, and starts the tools worker (`_tools_worker.ts`) with exactly the run's grants; every
 * tool runs there. The same code runs in both ways a sandbox process is started: as this module under
 * `deno run` with the run's grants as flags (provr from source), and as a compiled provr started again with
 * {@linkcode SANDBOX_ROLE_ARG} (a compiled binary's flags are fixed, so the worker's grants are the narrow
 * ones). provr kills the process at a time limit; this thread ends it when provr's end closes its stdin, and
 * when the process passes its memory limit, even while a tool spins in the worker.
 *
 * Lines in: `{ op: "init", token, permissions, memoryMb, … }` first, then `{ id, tool, args, callId }` per call.
 * Lines out, each `TOKEN JSON`: `{ op: "loading", module }`, `{ op: "ready", tools, console }` or
 * `{ op: "failed", module, error, console }`, then `{ id, ok, value | error, console }` per call. A line
 * without the token (a tool writing to the file descriptor itself) is not the sandbox's.
 * @module
 */
import type { SandboxPermissions } from "./sandbox_permissions.ts";
import type { WorkerInit } from "./_tools_worker.ts";

/** The argument that starts a compiled provr as a sandbox process (cli/provr.ts checks it first). */
export const SANDBOX_ROLE_ARG = "--provr-sandbox-process";

/** The first line provr sends. */
export interface RoleInit extends Omit<WorkerInit, "op"> {
  op: "init";
  /** The token that starts each of this process's lines, so that no tool can answer in its name. */
  token: string;
  permissions: SandboxPermissions;
  /** The process's memory limit above what it used at the start, in MB. */
  memoryMb: number;
}

const encoder = new TextEncoder();
const WORKER_URL = new URL("./_tools_worker.ts", import.meta.url);

async function write(text: string): Promise<void> {
  const bytes = encoder.encode(text);
  let done = 0;
  while (done < bytes.length) done += await Deno.stdout.write(bytes.subarray(done));
}

async function* lines(): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  const buf = new Uint8Array(64 * 1024);
  let rest = "";
  for (;;) {
    const n = await Deno.stdin.read(buf);
    if (n === null) return;
    rest += decoder.decode(buf.subarray(0, n), { stream: true });
    let i: number;
    while ((i = rest.indexOf("\n")) >= 0) {
      yield rest.slice(0, i);
      rest = rest.slice(i + 1);
    }
  }
}

function watchMemory(limitMb: number): void {
  const start = Deno.memoryUsage().rss;
  const limit = start + limitMb * 1024 * 1024;
  const timer = setInterval(() => {
    if (Deno.memoryUsage().rss <= limit) return;
    clearInterval(timer);
    // Written whole, synchronously: the process ends on the next line.
    Deno.stderr.writeSync(
      encoder.encode(`error: the sandbox process passed its memory limit of ${limitMb} MB; it was stopped\n`),
    );
    Deno.exit(70);
  }, 50);
  Deno.unrefTimer(timer);
}

function randomNonce(): string {
  return [...crypto.getRandomValues(new Uint8Array(12))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** One reply of the worker for a call. */
interface CallReply {
  id: number;
  nonce: string;
  ok: boolean;
  text?: string;
  error?: unknown;
  console?: string;
}

/**
 * Serves one sandbox process until provr closes its stdin, then ends the process (a tool may still be running).
 *
 * @example
 * ```ts ignore
 * // cli/provr.ts, first of all: a compiled provr started as a sandbox process serves and ends.
 * if (Deno.args[0] === SANDBOX_ROLE_ARG) await serveSandboxRole();
 * ```
 */
export async function serveSandboxRole(): Promise<never> {
  let token = "";
  let worker: Worker | null = null;
  let waiting: { id: number; nonce: string } | null = null;
  const say = (body: string) => write(`${token} ${body}\n`);
  for await (const line of lines()) {
    const message = JSON.parse(line);
    if (message.op === "init" && !worker) {
      const init = message as RoleInit;
      token = init.token;
      watchMemory(init.memoryMb);
      worker = new Worker(WORKER_URL, {
        type: "module",
        name: "tools",
        deno: { permissions: init.permissions },
      } as WorkerOptions);
      worker.onerror = (event) => {
        event.preventDefault();
        say(JSON.stringify({ op: "failed", module: null, error: { name: "Error", message: event.message } }));
      };
      worker.onmessage = (event) => {
        const reply = event.data as CallReply & { op?: string };
        if (reply.op) {
          say(JSON.stringify(reply));
          return;
        }
        if (!waiting || reply.id !== waiting.id || reply.nonce !== waiting.nonce) return; // not the call's answer
        waiting = null;
        const console = JSON.stringify(reply.console ?? "");
        say(
          reply.ok
            ? `{"id":${reply.id},"ok":true,"console":${console},"value":${reply.text}}`
            : JSON.stringify({ id: reply.id, ok: false, error: reply.error, console: reply.console ?? "" }),
        );
      };
      const { token: _t, permissions: _p, memoryMb: _m, ...rest } = init;
      worker.postMessage({ ...rest, op: "init" });
    } else if (worker && typeof message.id === "number") {
      waiting = { id: message.id, nonce: randomNonce() };
      worker.postMessage({ ...message, nonce: waiting.nonce });
    }
  }
  Deno.exit(0); // provr has ended or closed the sandbox: a tool still running in the worker ends with it
}

if (import.meta.main) await serveSandboxRole();

/**
 * The first module the tools worker evaluates, before any tools module: the process's stdin and stdout belong
 * to the sandbox's own messages (read and written by the process's main thread, `sandbox_role.ts`), so tools
 * get a console that writes into the current call's record instead (escaped there as JSON), a `Deno.stdin`
 * that refuses to read, and a `Deno.stdout` / `Deno.stderr` that write into the same record. Importing it has
 * these effects, so nothing but the tools worker imports it (it is not re-exported).
 * @module
 */
import process from "node:process";

/** At most this much console text is kept per call; the rest is counted. */
export const CONSOLE_LIMIT = 64 * 1024;

let kept = "";
let dropped = 0;

function push(text: string): void {
  const room = CONSOLE_LIMIT - kept.length;
  if (room >= text.length) kept += text;
  else {
    kept += text.slice(0, Math.max(room, 0));
    dropped += text.length - Math.max(room, 0);
  }
}

/**
 * The console text written since the last call, and empties it.
 * @returns The text, with a last line saying how much was cut, or "" when nothing was written.
 */
export function takeConsole(): string {
  const text = dropped ? `${kept}\n[console cut: ${dropped} more characters]\n` : kept;
  kept = "";
  dropped = 0;
  return text;
}

const show = (args: unknown[]) =>
  args.map((a) => typeof a === "string" ? a : Deno.inspect(a, { colors: false, depth: 4 })).join(" ") + "\n";
const decoder = new TextDecoder();
const sink = {
  write(p: Uint8Array): Promise<number> {
    push(decoder.decode(p));
    return Promise.resolve(p.length);
  },
  writeSync(p: Uint8Array): number {
    push(decoder.decode(p));
    return p.length;
  },
  get writable(): WritableStream<Uint8Array> {
    return new WritableStream({ write: (chunk) => push(decoder.decode(chunk)) });
  },
  isTerminal: () => false,
  close() {},
};
const refuse = () => {
  throw new Deno.errors.NotCapable("a tool gets no stdin in the sandbox; pass what it needs as arguments");
};
const noStdin = {
  read: refuse,
  readSync: refuse,
  get readable(): ReadableStream<Uint8Array> {
    return refuse();
  },
  setRaw: refuse,
  isTerminal: () => false,
  close() {},
};

const quiet = new Set([
  "group",
  "groupCollapsed",
  "groupEnd",
  "time",
  "timeEnd",
  "timeLog",
  "count",
  "countReset",
]);
const tools: Record<string, unknown> = {};
for (const name of Object.keys(console)) {
  tools[name] = quiet.has(name) ? () => {} : (...args: unknown[]) => push(show(args));
}
tools.assert = (ok: unknown, ...args: unknown[]) => {
  if (!ok) push(show(["Assertion failed:", ...args]));
};
Object.defineProperty(globalThis, "console", { value: tools, writable: true, configurable: true });
for (const [name, value] of [["stdin", noStdin], ["stdout", sink], ["stderr", sink]] as const) {
  Object.defineProperty(Deno, name, { value, writable: false, configurable: false });
}
// node:process reads and writes the same file descriptors on its own, so it gets the same treatment.
const nodeSink = {
  write(chunk: string | Uint8Array, ...rest: unknown[]): boolean {
    push(typeof chunk === "string" ? chunk : decoder.decode(chunk));
    const done = rest.find((r) => typeof r === "function") as (() => void) | undefined;
    done?.();
    return true;
  },
  isTTY: false,
  on: () => nodeSink,
  once: () => nodeSink,
  end() {},
};
Object.defineProperty(process, "stdin", { get: refuse, configurable: false });
Object.defineProperty(process, "stdout", { value: nodeSink, configurable: false });
Object.defineProperty(process, "stderr", { value: nodeSink, configurable: false });

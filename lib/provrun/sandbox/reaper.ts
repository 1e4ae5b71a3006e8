/**
 * The reaper: one small Deno process per provr process that makes the processes provr starts for a run
 * (sandbox processes, stdio MCP servers and whatever those start) die with provr, even when provr itself is
 * killed with SIGKILL and has no chance to stop them. provr tells it, one line on its stdin, each process or
 * process group to watch; when that stdin closes (provr ended, however it ended, so the kernel closed the
 * pipe), the reaper sends SIGKILL to every one still watched, then exits. It also stops a process group on
 * provr's request (SIGTERM, a grace period, then SIGKILL), which provr cannot do itself without a full
 * `--allow-run`: the reaper holds that grant, runs only the code below (a `data:` module, no file), and has
 * no read, write, net or env.
 *
 * When no reaper can start (no `deno` to run), watching does nothing and a group is stopped through its
 * leader's handle only; {@linkcode reaperState} says which.
 * @module
 */
import { sandboxDeno } from "./sandbox_deno.ts";

// Lines in: `w TARGET` watch, `u TARGET` forget, `s ID TARGET GRACE_MS` stop now. TARGET is a PID, or minus a
// process group's ID. Lines out: `ID exited` (the group was gone before SIGKILL) or `ID killed`.
const REAPER_CODE = `
const watched = new Set();
const alive = (t) => { try { Deno.kill(t, "SIGCONT"); return true; } catch { return false; } };
const send = (t, s) => { try { Deno.kill(t, s); } catch { /* gone */ } };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const out = new TextEncoder();
async function stop(id, t, grace) {
  send(t, "SIGTERM");
  const until = Date.now() + grace;
  while (alive(t) && Date.now() < until) await sleep(25);
  let ended = "exited";
  if (alive(t)) {
    ended = "killed";
    send(t, "SIGKILL");
    for (let i = 0; i < 80 && alive(t); i++) await sleep(25);
  }
  watched.delete(t);
  await Deno.stdout.write(out.encode(id + " " + ended + "\\n"));
}
const decoder = new TextDecoder();
const buf = new Uint8Array(4096);
let rest = "";
for (;;) {
  const n = await Deno.stdin.read(buf);
  if (n === null) break;
  rest += decoder.decode(buf.subarray(0, n), { stream: true });
  let i;
  while ((i = rest.indexOf("\\n")) >= 0) {
    const [op, a, b, c] = rest.slice(0, i).split(" ");
    rest = rest.slice(i + 1);
    if (op === "w") watched.add(Number(a));
    else if (op === "u") watched.delete(Number(a));
    else if (op === "s") stop(a, Number(b), Number(c));
  }
}
for (const t of watched) send(t, "SIGKILL");
`;

interface Reaper {
  process: Deno.ChildProcess;
  writer: WritableStreamDefaultWriter<Uint8Array>;
  reader: ReadableStreamDefaultReader<Uint8Array>;
  waiting: Map<string, (ended: "exited" | "killed") => void>;
  reading: boolean;
  rest: string;
}

let reaper: Reaper | null | undefined;
let nextId = 1;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

function start(): Reaper | null {
  if (reaper !== undefined) return reaper;
  try {
    const env: Record<string, string> = {};
    for (const name of ["DENO_DIR", "XDG_CACHE_HOME", "HOME", "PATH"]) {
      try {
        const value = Deno.env.get(name);
        if (value !== undefined) env[name] = value;
      } catch {
        // Not granted: the reaper finds Deno's cache as Deno does by default.
      }
    }
    const process = new Deno.Command(sandboxDeno(), {
      args: [
        "run",
        "--no-prompt",
        "--no-config",
        "--allow-run",
        `data:text/javascript;base64,${btoa(REAPER_CODE)}`,
      ],
      env,
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    // It must not keep provr alive: provr's end closes its stdin, which is the reaper's signal.
    process.unref();
    reaper = {
      process,
      writer: process.stdin.getWriter(),
      reader: process.stdout.getReader(),
      waiting: new Map(),
      reading: false,
      rest: "",
    };
    process.status.then(() => reaper = null, () => reaper = null);
  } catch {
    reaper = null;
  }
  return reaper;
}

function tell(line: string): boolean {
  const r = start();
  if (!r) return false;
  r.writer.write(encoder.encode(line + "\n")).catch(() => {});
  return true;
}

/**
 * Whether processes started for a run die with provr: `reaper` when the reaper runs, `none` when it could not
 * start (no `deno` that this process may run).
 */
export function reaperState(): "reaper" | "none" {
  return start() ? "reaper" : "none";
}

/**
 * Watches a process, or a process group (a negative ID), so that it is killed when provr ends.
 *
 * @param target A PID, or minus a process group's ID.
 * @returns False when there is no reaper.
 * @example
 * ```ts ignore
 * import { watchProcess } from "./reaper.ts";
 * watchProcess(child.pid);
 * ```
 */
export function watchProcess(target: number): boolean {
  return tell(`w ${target}`);
}

/**
 * Stops watching a process that has ended.
 *
 * @param target As given to {@linkcode watchProcess}.
 * @example
 * ```ts ignore
 * import { forgetProcess } from "./reaper.ts";
 * forgetProcess(child.pid);
 * ```
 */
export function forgetProcess(target: number): void {
  if (reaper) tell(`u ${target}`);
}

/**
 * Stops every process of a group: SIGTERM, up to `graceMs` for them to end, then SIGKILL.
 *
 * @param pgid The group's ID (its leader's PID).
 * @param graceMs How long the group has to end after SIGTERM.
 * @returns `exited` when the group ended before SIGKILL, `killed` when it needed SIGKILL; null when there is
 * no reaper (the caller stops the leader itself).
 * @example
 * ```ts ignore
 * import { stopGroup } from "./reaper.ts";
 * await stopGroup(server.pid, 2000); // "killed"
 * ```
 */
export async function stopGroup(pgid: number, graceMs: number): Promise<"exited" | "killed" | null> {
  const r = start();
  if (!r) return null;
  const id = String(nextId++);
  const done = new Promise<"exited" | "killed">((resolve) => r.waiting.set(id, resolve));
  tell(`s ${id} ${-pgid} ${Math.max(0, Math.round(graceMs))}`);
  if (!r.reading) readReplies(r);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const ended = await Promise.race([
    done,
    new Promise<null>((resolve) => timer = setTimeout(() => resolve(null), graceMs + 5000)),
  ]);
  clearTimeout(timer);
  r.waiting.delete(id);
  return ended;
}

/** Reads the reaper's replies while one is awaited, so that an idle reaper holds no read open. */
async function readReplies(r: Reaper): Promise<void> {
  r.reading = true;
  try {
    while (r.waiting.size) {
      const { value, done } = await r.reader.read();
      if (done) break;
      r.rest += decoder.decode(value, { stream: true });
      let i: number;
      while ((i = r.rest.indexOf("\n")) >= 0) {
        const [id, ended] = r.rest.slice(0, i).split(" ");
        r.rest = r.rest.slice(i + 1);
        r.waiting.get(id!)?.(ended === "killed" ? "killed" : "exited");
        r.waiting.delete(id!);
      }
    }
  } catch {
    // The reaper ended.
  } finally {
    r.reading = false;
  }
}

/**
 * The tests' child processes: the words and flags a task runs its program with, a clean environment for a child, and
 * the processes on the machine (to tell that a child and what it started are gone).
 * @module
 */
import { join } from "node:path";
import { permissionFlags } from "../cli/_permissions.ts";

const ROOT = new URL("../", import.meta.url).pathname;

/**
 * The permission flags of a task that runs `cli/NAME.ts` (`--no-prompt` and the `--allow-*` of its permission set
 * in deno.json), with programs added to its `--allow-run` when a test's run starts more.
 */
export function taskFlags(name: "prove" | "provr" | "provtrace", morePrograms: string[] = []): string[] {
  return permissionFlags(name).map((f) =>
    f.startsWith("--allow-run=") && morePrograms.length ? `${f},${morePrograms.join(",")}` : f
  );
}

/**
 * The words of `deno run` that start `cli/NAME.ts` as its task in deno.json does (`deno run -q` and the task's
 * flags), for a test that runs a command in a child and reads what it printed. `-q` matters: without it, Deno
 * prints its own progress on the child's standard error (`Download https://registry.npmjs.org/…` for each npm
 * package its cache lacks, on every start while it lacks them), which the task never shows, and a test that
 * expects one line of refusal there fails from a fresh copy or cache whose test graph did not fetch `cli/`'s
 * packages first.
 */
export function taskRun(name: "prove" | "provr" | "provtrace", morePrograms: string[] = []): string[] {
  return ["run", "-q", ...taskFlags(name, morePrograms), join(ROOT, `cli/${name}.ts`)];
}

/**
 * This process's PATH, HOME, DENO_DIR, TMPDIR and LANG, for a child started with `clearEnv`: test files share
 * one process, and some set variables for a while that a child must not take.
 */
export function cleanEnv(): Record<string, string> {
  return Object.fromEntries(
    ["PATH", "HOME", "DENO_DIR", "TMPDIR", "LANG"].flatMap((n) => {
      const v = Deno.env.get(n);
      return v === undefined ? [] : [[n, v]];
    }),
  );
}

/**
 * The Deno cache this process uses (`DENO_DIR`, else Deno's default under `XDG_CACHE_HOME` or `HOME`), for a
 * child given a scratch `HOME`: without it, the child's Deno makes a fresh cache under that home, fetches
 * every npm package again and compiles every module without V8's code cache.
 */
export function denoDir(): string {
  const cache = Deno.env.get("XDG_CACHE_HOME") || join(Deno.env.get("HOME") ?? "/root", ".cache");
  return Deno.env.get("DENO_DIR") || join(cache, "deno");
}

/** Every process: its parent, state and command line, from `ps` (the test task may not list /proc). */
export function processes(): Map<number, { ppid: number; state: string; cmd: string }> {
  const out = new Deno.Command("ps", { args: ["-e", "-o", "pid=,ppid=,stat=,args="], stdout: "piped" })
    .outputSync();
  const all = new Map<number, { ppid: number; state: string; cmd: string }>();
  for (const line of new TextDecoder().decode(out.stdout).split("\n")) {
    const m = line.trim().match(/^(\d+)\s+(\d+)\s+(\S+)\s+(.*)$/);
    if (m) all.set(Number(m[1]), { ppid: Number(m[2]), state: m[3]!, cmd: m[4]! });
  }
  return all;
}

/** True while a process exists and is not a zombie. */
export function alive(pid: number): boolean {
  const p = processes().get(pid);
  return p !== undefined && !p.state.startsWith("Z");
}

/** Every process below `root`, with its command line. */
export function descendants(root: number): { pid: number; cmd: string }[] {
  const all = processes();
  const below = (pid: number): boolean => {
    for (let p = all.get(pid)?.ppid, n = 0; p !== undefined && n < 64; p = all.get(p)?.ppid, n++) {
      if (p === root) return true;
    }
    return false;
  };
  return [...all.keys()].filter(below).map((pid) => ({ pid, cmd: all.get(pid)!.cmd }));
}

/**
 * The standard load that `deno task bench --load` runs beside the benchmarks, the same each time, so that a
 * figure "under load" means one thing: one process that writes 1 MiB to a file in 64 KiB writes and fsyncs it,
 * file after file (what a build, a database or another run's seal does to the disk), and one that keeps one core
 * busy. Each is a Deno process of this file (`io` or `cpu` as its argument), started with only the permissions
 * it needs, and killed by `stop()`.
 *
 * While the load runs, the load average is sampled every second, so the line that closes it says what the
 * figures ran under, beside what the machine ran at before the load started.
 * @module
 */

/** The kinds of load: the disk writer, the busy core, or both (the standard). */
export type LoadKind = "io" | "cpu" | "io+cpu";

/** A load under way: what it is, and how to stop it. */
export interface Load {
  /** The kind, as it prints in each figure's line. */
  readonly kind: LoadKind;
  /** The process IDs of the load's processes. */
  readonly pids: readonly number[];
  /** Stops the load's processes and gives the line that says what the bench ran under. */
  stop(): Promise<string>;
}

/**
 * Reads `--load`, `--load=io`, `--load=cpu` from a bench's arguments, else `BENCH_LOAD` (`env`) set to one of
 * `io+cpu`, `io`, `cpu` (or `1`); gives the other arguments back.
 *
 * @throws RangeError naming the value when it is none of these.
 */
export function loadOption(
  args: readonly string[],
  env: string | undefined,
): { kind: LoadKind | null; rest: string[] } {
  const rest: string[] = [];
  let kind: LoadKind | null = null;
  const named = (value: string): LoadKind => {
    if (value === "" || value === "1" || value === "io+cpu") return "io+cpu";
    if (value === "io" || value === "cpu") return value;
    throw new RangeError(`bench: --load (or BENCH_LOAD) takes io, cpu or io+cpu, not "${value}"`);
  };
  for (const arg of args) {
    if (arg === "--load") kind = "io+cpu";
    else if (arg.startsWith("--load=")) kind = named(arg.slice("--load=".length));
    else rest.push(arg);
  }
  if (kind === null && env !== undefined && env !== "" && env !== "0") kind = named(env);
  return { kind, rest };
}

/**
 * Starts the standard load of `kind` and waits until each of its processes is under way.
 *
 * @param kind The disk writer, the busy core, or both.
 * @param options `dir`: where the disk writer writes (a new temporary folder by default; removed by `stop`).
 */
export async function startLoad(kind: LoadKind, options: { dir?: string } = {}): Promise<Load> {
  const dir = options.dir ?? await Deno.makeTempDir({ prefix: "bench-load-" });
  const here = new URL(import.meta.url).pathname;
  const before = Deno.loadavg();
  const children: Deno.ChildProcess[] = [];
  for (const part of kind === "io+cpu" ? ["io", "cpu"] : [kind]) {
    const perms = part === "io" ? [`--allow-write=${dir}`, `--allow-read=${dir}`] : [];
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-q", "--no-prompt", ...perms, here, part, dir],
      stdin: "null",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    children.push(child);
    // Each writes one line once its loop is under way: the bench starts under load, not beside a start-up.
    const reader = child.stdout.getReader();
    await reader.read();
    reader.releaseLock();
    child.stdout.cancel().catch(() => {});
  }
  const samples: number[] = [];
  const timer = setInterval(() => samples.push(Deno.loadavg()[0]!), 1000);
  return {
    kind,
    pids: children.map((c) => c.pid),
    async stop() {
      clearInterval(timer);
      const after = Deno.loadavg();
      for (const child of children) {
        try {
          child.kill("SIGKILL");
        } catch { /* already gone */ }
        await child.status;
      }
      await Deno.remove(dir, { recursive: true });
      const one = (l: number) => l.toFixed(1);
      const range = samples.length
        ? `${one(Math.min(...samples))}–${one(Math.max(...samples))}`
        : one(after[0]!);
      return `bench ran under load (${kind}): 1-minute load average ${range} while it ran (${
        after.map(one).join(" ")
      } at the end; ${before.map(one).join(" ")} before the load started)`;
    },
  };
}

/**
 * True while the bench that started this process runs. A bench killed before it could stop its load (a
 * `kill`, a timeout) leaves it to the init process: the load then ends itself rather than loading the machine
 * for good.
 */
function benchAlive(parent: number): boolean {
  return Deno.ppid === parent;
}

/**
 * Writes 1 MiB in 64 KiB writes to one of eight files, truncated first, and fsyncs it, then the next, until
 * killed: each round gives the file system new blocks to allocate and its journal a commit to wait for.
 */
function diskLoop(dir: string, parent: number): void {
  const chunk = new Uint8Array(64 * 1024).fill(120);
  console.log("io load under way");
  for (let n = 0; benchAlive(parent); n = (n + 1) % 8) {
    const file = Deno.openSync(`${dir}/load-${n}.bin`, { create: true, write: true, truncate: true });
    for (let i = 0; i < 16; i++) {
      for (let at = 0; at < chunk.length;) at += file.writeSync(chunk.subarray(at));
    }
    file.syncSync();
    file.close();
  }
}

/** Keeps one core busy until killed. */
function coreLoop(parent: number): void {
  console.log("cpu load under way");
  let x = 0;
  while (benchAlive(parent)) {
    for (let i = 0; i < 1_000_000; i++) x = (x * 1103515245 + 12345) % 2147483648;
  }
}

if (import.meta.main) {
  const [part, dir] = Deno.args;
  const parent = Deno.ppid;
  if (part === "io") diskLoop(dir!, parent);
  else if (part === "cpu") coreLoop(parent);
  else throw new RangeError(`_load.ts: give io or cpu, not "${part}"`);
}

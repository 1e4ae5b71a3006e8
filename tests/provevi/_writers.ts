/**
 * What the reliability tests of the sqlite and postgres stores share: a writer process
 * (`sqlite/_sqlite_writer.ts`, `postgres/_pg_writer.ts`) that prints `open ID` and `sealed ID` lines, killed
 * with SIGKILL a while after its first run opened, and the check of the run it was writing when killed.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { RunDetail } from "../../lib/provevi/store/store_questions.ts";

/**
 * Starts a writer program: `deno run FLAGS WRITER STORE RUNS PREFIX COUNT NOTES`.
 * @param writer The writer's path.
 * @param flags Its permission flags.
 * @param args The store (a sqlite file or a postgres URI), the runs root, the prefix of the run IDs, how many
 * runs, how many notes in each.
 */
export function spawnWriter(
  writer: string,
  flags: string[],
  args: [store: string, runs: string, prefix: string, count: number, notes: number],
): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", ...flags, writer, ...args.map(String)],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

/**
 * Starts writer programs that each print `ready` and wait for their input to close (the last argument
 * `together`), and closes every input once all are ready: their writes start at once and overlap, however long
 * each process takes to start on a busy machine.
 * @param writer The writer's path.
 * @param flags Its permission flags.
 * @param each The arguments of each writer, as {@linkcode spawnWriter} takes them.
 * @param onLine Called with each line the writers print after `ready`.
 * @returns Each writer's exit code and standard error, in order.
 */
export async function writeTogether(
  writer: string,
  flags: string[],
  each: [store: string, runs: string, prefix: string, count: number, notes: number][],
  onLine: (line: string) => void,
): Promise<{ code: number; stderr: string }[]> {
  const children = each.map((args) =>
    new Deno.Command(Deno.execPath(), {
      args: ["run", ...flags, writer, ...args.map(String), "together"],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn()
  );
  let waiting = children.length;
  let go!: () => void;
  const allReady = new Promise<void>((resolve) => (go = resolve));
  const released = allReady.then(() => Promise.all(children.map((c) => c.stdin.close().catch(() => {}))));
  const ended = children.map(async (child) => {
    const stderr = new Response(child.stderr).text();
    await readLines(child.stdout, (line) => {
      if (line !== "ready") onLine(line);
      else if (--waiting === 0) go();
    });
    const status = await child.status;
    if (waiting > 0) go(); // a writer that ended before it was ready: let the others go, and report it
    return { code: status.code, stderr: await stderr };
  });
  const results = await Promise.all(ended);
  await released;
  return results;
}

/** Calls `onLine` with each line of a stream, until it ends. */
export async function readLines(
  stream: ReadableStream<Uint8Array>,
  onLine: (line: string) => void,
): Promise<void> {
  let rest = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    const parts = (rest + chunk).split("\n");
    rest = parts.pop()!;
    parts.forEach(onLine);
  }
}

/** A small seeded generator (mulberry32), so the kill times are the same on every run of a test. */
export function seeded(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The number of lines of a file. */
export async function lineCount(path: string): Promise<number> {
  return (await Deno.readTextFile(path)).split("\n").filter(Boolean).length;
}

/**
 * Kills a writer with SIGKILL `wait` milliseconds after it opened its first run.
 * @returns The runs it opened and the runs it sealed before it died.
 */
export async function killWriter(
  child: Deno.ChildProcess,
  wait: number,
): Promise<{ opened: string[]; sealed: string[] }> {
  const opened: string[] = [];
  const sealed: string[] = [];
  let ready!: () => void;
  const started = new Promise<void>((r) => (ready = r));
  const reading = readLines(child.stdout, (line) => {
    if (line.startsWith("open ")) (opened.push(line.slice(5)), ready());
    if (line.startsWith("sealed ")) sealed.push(line.slice(7));
  });
  const stderr = new Response(child.stderr).text();
  await started;
  await new Promise((r) => setTimeout(r, wait));
  child.kill("SIGKILL");
  const status = await child.status;
  await reading;
  assert.equal(status.signal, "SIGKILL", await stderr);
  return { opened, sealed };
}

/**
 * Checks the run a killed writer left cut: the store has no row of it, or its folder is sealed and only the
 * row's seal columns differ, or its rows are its lines or one fewer and the check says it was not sealed.
 * @param store The store, opened again after the kill.
 * @param runs The runs root.
 * @param id The cut run.
 */
export async function assertCutRun(
  store: { run(id: string): Promise<RunDetail | null>; checkRun(id: string): Promise<{ message: string }[]> },
  runs: string,
  id: string,
): Promise<void> {
  const row = await store.run(id);
  if (!row) return; // killed before its row was committed: the store holds nothing of it
  const lines = await lineCount(join(runs, id, "evidence", "events.jsonl"));
  const problems = (await store.checkRun(id)).map((p) => p.message);
  const sealedFolder = await Deno.stat(join(runs, id, "evidence", "manifest.json")).then(
    () => true,
    () => false,
  );
  if (sealedFolder) {
    // Killed between the manifest and the row's seal: only the run's seal columns differ.
    for (const p of problems) {
      assert.match(p, /provevi_runs \(run_id "[^"]+"\): (manifest_sha256|last_hash|status|ended_at)/);
    }
    return;
  }
  assert.ok(lines - row.events === 0 || lines - row.events === 1, `${row.events} rows, ${lines} lines`);
  assert.ok(
    problems.includes(
      `run "${id}" was not sealed: provevi_events holds ${row.events} rows and events.jsonl ${lines} lines`,
    ),
    problems.join("\n"),
  );
}

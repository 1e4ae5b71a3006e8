/**
 * What a process pays to load each entry point before it does anything: the CPU time (user and system, all
 * of its threads) of a Deno child that imports `cli/_provr.ts` (provr's commands, which `cli/provr.ts` loads
 * when it is not a sandbox process; `provr run` then loads the runner, which `lib/provrun/mod.ts` holds),
 * `cli/prove.ts`, `cli/provtrace.ts` or `lib/provrun/mod.ts` and exits, against a child that imports nothing,
 * in the same run. Every `provr run`, every `prove` command and every test child that runs a run pays it
 * (issue #25: the test command under five minutes on two cores). CPU time, not wall time, so that a machine shared with others does not move the
 * figure much. Target: `provr` under 10× an empty child (11× before the MCP SDK, the OTLP exporter, ajv,
 * postgres, the receiver and the MLflow client were imported only where used: 0.83 against 0.59 CPU s).
 * @module
 */
import { median, report } from "./_report.ts";

const ROOT = new URL("../../", import.meta.url);
const CONFIG = new URL("deno.json", ROOT).pathname;
const ROUNDS = 5;

/** The CPU seconds of one child that imports `module` (none: an empty child) and exits. */
async function childCpu(module: string | null): Promise<number> {
  const load = module ? `await import(${JSON.stringify(new URL(module, ROOT).href)});` : "";
  const code = `${load} const u = process.cpuUsage(); console.log(u.user + u.system);`;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--config", CONFIG, `import process from "node:process"; ${code}`],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!out.success) throw new Error(`a child importing ${module ?? "nothing"} failed`);
  return Number(new TextDecoder().decode(out.stdout).trim()) / 1e6;
}

/** Runs the benchmark and prints its lines. */
export async function main(): Promise<void> {
  const entries = ["cli/_provr.ts", "cli/prove.ts", "cli/provtrace.ts", "lib/provrun/mod.ts"];
  await childCpu(null); // the first child may still compile what the cache lacks
  for (const e of entries) await childCpu(e);
  const samples = new Map<string | null, number[]>([null, ...entries].map((e) => [e, []]));
  // Rounds interleave the entries and the empty child, so that a change in the machine's load meets all alike.
  for (let round = 0; round < ROUNDS; round++) {
    for (const [module, values] of samples) values.push(await childCpu(module));
  }
  const empty = median(samples.get(null)!);
  for (const e of entries) {
    const target = e === "cli/_provr.ts" ? "under 10× an empty child" : "lower is better";
    report(`start: a child importing ${e} (CPU s)`, median(samples.get(e)!), empty, "s", target);
  }
}

if (import.meta.main) await main();

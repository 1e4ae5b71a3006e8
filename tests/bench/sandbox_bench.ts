/**
 * The cost of one sandboxed tool call (a round trip over pipes to a warm sandbox process, a Deno child with
 * the run's grants as flags) in microseconds, against calling the same function in the main thread, in the
 * same run. Target: under 2 ms per call once the process is warm. Also printed: how long a fresh process
 * takes to start and serve its first call (paid once per run, and again after a call is killed).
 * @module
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { toolContext } from "../../lib/provrun/sandbox/fs_tools.ts";
import { Sandbox } from "../../lib/provrun/sandbox/sandbox.ts";
import { median } from "./_report.ts";

const MODULE = new URL("../../fixtures/agent/tools/reach.ts", import.meta.url);

/** Runs the benchmark and prints its line. */
export async function main(): Promise<void> {
  const N = 2_000;
  const folder = await Deno.makeTempDir({ prefix: "bench-sandbox-" });
  for (const sub of ["input", "output", "scratch"]) await Deno.mkdir(join(folder, sub));
  const mod = await import(MODULE.href) as {
    TOOLS: { name: string; execute(args: unknown, ctx: unknown): unknown }[];
  };
  const echo = mod.TOOLS.find((t) => t.name === "echo")!;
  const sandbox = await Sandbox.open(folder, { modules: [pathToFileURL(MODULE.pathname).href] });
  const args = { n: 1, text: "x".repeat(200) };
  for (let i = 0; i < 200; i++) await sandbox.call("echo", args); // warm up
  const workerUs: number[] = [];
  const directUs: number[] = [];
  for (let round = 0; round < 5; round++) {
    let t = performance.now();
    for (let i = 0; i < N; i++) await sandbox.call("echo", args, { callId: `c${i}` });
    workerUs.push(((performance.now() - t) * 1000) / N);
    t = performance.now();
    for (let i = 0; i < N; i++) {
      // The same function, the same JSON round trip of its result, in the main thread.
      JSON.parse(JSON.stringify(await echo.execute(args, toolContext(folder, `c${i}`))));
    }
    directUs.push(((performance.now() - t) * 1000) / N);
  }
  await sandbox.close();
  const starts: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    await using fresh = await Sandbox.open(folder, { modules: [pathToFileURL(MODULE.pathname).href] });
    await fresh.call("echo", args);
    starts.push(performance.now() - t);
  }
  const worker = median(workerUs);
  const direct = median(directUs);
  console.log(
    `sandboxed tool call (warm process round trip): ${
      worker.toFixed(1)
    } µs; the same call in the main thread ` +
      `${direct.toFixed(1)} µs; the sandbox adds ${(worker - direct).toFixed(1)} µs per call ` +
      `(target: under 2,000 µs per call); a fresh sandbox, its import check and first call: ` +
      `${median(starts).toFixed(0)} ms`,
  );
  await Deno.remove(folder, { recursive: true });
}

if (import.meta.main) await main();

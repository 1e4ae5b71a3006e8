/**
 * `deno task bench`: runs every benchmark in tests/bench/ and prints each figure beside its reference.
 *
 * `deno task bench --load [NAME…]` runs them beside the standard load of `_load.ts` (a process that writes and
 * fsyncs files, and one that keeps a core busy; `--load=io` or `--load=cpu` for one of them, or `BENCH_LOAD`),
 * marks each figure's line "under load", and closes with the load average they ran under.
 * @module
 */
import { loadOption, startLoad } from "./_load.ts";

const here = new URL(".", import.meta.url);
const names: string[] = [];
for await (const e of Deno.readDir(here)) if (e.name.endsWith("_bench.ts")) names.push(e.name);
let parsed: ReturnType<typeof loadOption>;
try {
  parsed = loadOption(Deno.args, Deno.env.get("BENCH_LOAD"));
} catch (error) {
  console.error((error as Error).message);
  Deno.exit(2);
}
const { kind, rest: only } = parsed;
const unknown = only.filter((o) => !names.some((name) => name.includes(o)));
if (unknown.length) {
  const known = names.map((n) => n.replace(/_bench\.ts$/, "")).sort().join(", ");
  console.error(
    `bench: no benchmark is named ${unknown.map((u) => `"${u}"`).join(", ")}; the benchmarks are ${known}`,
  );
  Deno.exit(2);
}
const load = kind ? await startLoad(kind) : null;
const log = console.log;
if (load) {
  // Each benchmark prints its own lines; marking them here keeps every bench as it is, and a figure measured
  // under load never reads as a quiet one.
  console.log = (...data: unknown[]) => log(`under load (${load.kind}):`, ...data);
}
try {
  for (const name of names.sort()) {
    if (only.length && !only.some((o) => name.includes(o))) continue;
    const mod = await import(new URL(name, here).href);
    await mod.main();
  }
} finally {
  if (load) log(await load.stop());
}

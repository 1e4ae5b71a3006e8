/**
 * `deno task bench`: runs every benchmark in tests/bench/ and prints each figure beside its reference.
 * @module
 */
const here = new URL(".", import.meta.url);
const names: string[] = [];
for await (const e of Deno.readDir(here)) if (e.name.endsWith("_bench.ts")) names.push(e.name);
const only = Deno.args;
for (const name of names.sort()) {
  if (only.length && !only.some((o) => name.includes(o))) continue;
  const mod = await import(new URL(name, here).href);
  await mod.main();
}

/**
 * `deno task bench`: runs every benchmark in tests/bench/ and prints each figure beside its reference.
 * @module
 */
const here = new URL(".", import.meta.url);
const names: string[] = [];
for await (const e of Deno.readDir(here)) if (e.name.endsWith("_bench.ts")) names.push(e.name);
const only = Deno.args;
const unknown = only.filter((o) => !names.some((name) => name.includes(o)));
if (unknown.length) {
  const known = names.map((n) => n.replace(/_bench\.ts$/, "")).sort().join(", ");
  console.error(
    `bench: no benchmark is named ${unknown.map((u) => `"${u}"`).join(", ")}; the benchmarks are ${known}`,
  );
  Deno.exit(2);
}
for (const name of names.sort()) {
  if (only.length && !only.some((o) => name.includes(o))) continue;
  const mod = await import(new URL(name, here).href);
  await mod.main();
}

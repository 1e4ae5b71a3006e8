import assert from "node:assert/strict";

const ROOT = new URL("../", import.meta.url).pathname;

Deno.test("the public API of mod.ts is the names in tests/api_names.txt, each of the same kind", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "--json", "mod.ts"],
    cwd: ROOT,
    stdout: "piped",
    stderr: "null",
  }).output();
  assert.ok(out.success, "deno doc --json mod.ts failed");
  const doc = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    nodes: Record<string, { symbols: { name: string; declarations: { kind: string }[] }[] }>;
  };
  const symbols = Object.values(doc.nodes)[0]!.symbols;
  const names = [
    ...new Set(symbols.map((s) => `${s.name} ${[...new Set(s.declarations.map((d) => d.kind))].sort()}`)),
  ]
    .sort();
  const expected = (await Deno.readTextFile(`${ROOT}tests/api_names.txt`)).trim().split("\n");
  assert.deepEqual(names, expected);
});

/**
 * The public API: what `mod.ts` and each part's sub-path export (`deno.json`'s `exports`), frozen in
 * `tests/api_names.txt`; each export documented, each function and class with an example that asserts, and
 * the examples run by `deno task test:examples` (tests/_examples_task.ts), which CI runs after the tests.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../", import.meta.url).pathname;
const PARTS = ["provcat", "provevi", "provrun", "provtrace"];

interface DocSymbol {
  name: string;
  declarations: {
    kind: string;
    location: { filename: string };
    jsDoc?: { doc?: string; tags?: { kind: string; doc?: string }[] };
  }[];
}

/**
 * The symbols each module exports, as `deno doc --json` gives them, in one run for the modules (a module that
 * re-exports another documented in the same run gets references instead of its symbols: mod.ts runs alone).
 */
async function exportsOf(modules: string[]): Promise<Map<string, DocSymbol[]>> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "--json", ...modules],
    cwd: ROOT,
    stdout: "piped",
    stderr: "null",
  }).output();
  assert.ok(out.success, `deno doc --json ${modules.join(" ")} failed`);
  const doc = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    nodes: Record<string, { symbols: DocSymbol[] }>;
  };
  return new Map(modules.map((m) => {
    const node = doc.nodes[new URL(m, `file://${ROOT}`).href];
    assert.ok(node, `deno doc --json gave nothing for ${m}`);
    return [m, node.symbols];
  }));
}

/** `name kind,kind` for each symbol, sorted: a name that changes kind changes its line. */
function lines(symbols: DocSymbol[]): string[] {
  return [
    ...new Set(symbols.map((s) => `${s.name} ${[...new Set(s.declarations.map((d) => d.kind))].sort()}`)),
  ]
    .sort();
}

const [documented, root] = await Promise.all([
  exportsOf(PARTS.map((p) => `lib/${p}/mod.ts`)),
  exportsOf(["mod.ts"]).then((m) => m.get("mod.ts")!),
]);

Deno.test("the public API of mod.ts is the names in tests/api_names.txt, each of the same kind", async () => {
  const expected = (await Deno.readTextFile(`${ROOT}tests/api_names.txt`)).trim().split("\n");
  assert.deepEqual(lines(root), expected);
});

Deno.test("mod.ts exports each part's public API whole, and deno.json has a sub-path for each part and command", async () => {
  const parts = PARTS.flatMap((p) => documented.get(`lib/${p}/mod.ts`)!);
  assert.deepEqual(lines(root), lines(parts));
  const config = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)) as {
    exports: Record<string, string>;
  };
  assert.deepEqual(config.exports, {
    ".": "./mod.ts",
    ...Object.fromEntries(PARTS.map((p) => [`./lib/${p}`, `./lib/${p}/mod.ts`])),
    "./prove": "./cli/prove.ts",
    "./provr": "./cli/provr.ts",
    "./provtrace": "./cli/provtrace.ts",
  });
});

Deno.test("every export has a doc comment, and every function and class an @example that asserts", () => {
  const wrong: string[] = [];
  for (const symbol of root) {
    for (const d of symbol.declarations) {
      if (!d.jsDoc?.doc?.trim()) wrong.push(`${symbol.name}: no doc comment`);
      if (d.kind !== "function" && d.kind !== "class") continue;
      const examples = (d.jsDoc?.tags ?? []).filter((t) => t.kind === "example");
      if (!examples.some((t) => /\bassert\b/.test(t.doc ?? ""))) {
        wrong.push(`${symbol.name}: no @example that asserts`);
      }
    }
  }
  assert.deepEqual([...new Set(wrong)], []);
});

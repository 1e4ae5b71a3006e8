import assert from "node:assert/strict";
import { join, relative } from "node:path";

const ROOT = new URL("../", import.meta.url).pathname;
const ALLOWED: Record<string, string[]> = {
  provcat: ["provcat"],
  provevi: ["provevi", "provcat"],
  provrun: ["provrun", "provevi", "provcat"],
  provtrace: ["provtrace", "provevi", "provcat"],
};

async function* files(dir: string): AsyncGenerator<string> {
  for await (const e of Deno.readDir(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory) yield* files(p);
    else if (p.endsWith(".ts")) yield p;
  }
}

Deno.test("the parts import only in the allowed direction: provrun → provevi → provcat, provtrace → provevi", async () => {
  const wrong: string[] = [];
  for (const part of Object.keys(ALLOWED)) {
    for await (const file of files(join(ROOT, "lib", part))) {
      const text = await Deno.readTextFile(file);
      for (const m of text.matchAll(/(?:from|import)\s*\(?\s*"(\.[^"]+)"/g)) {
        const full = join(file, "..", m[1]!);
        if (full === join(ROOT, "deno.json")) continue; // the package manifest: its pins are the installed packages
        const target = relative(join(ROOT, "lib"), full).split("/")[0]!;
        if (!ALLOWED[part]!.includes(target)) wrong.push(`${relative(ROOT, file)} imports ${m[1]}`);
      }
    }
  }
  assert.deepEqual(wrong, []);
});

Deno.test("no library file imports from cli/ or tests/", async () => {
  for await (const file of files(join(ROOT, "lib"))) {
    const text = await Deno.readTextFile(file);
    assert.doesNotMatch(text, /from "(\.\.\/)+(cli|tests)\//, file);
  }
});

/**
 * The house rule "functions under 80 lines", as a test over the library and the CLI: each function, method
 * and arrow function is counted from its first line to its last.
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";

const ROOT = new URL("../", import.meta.url).pathname;
const LIMIT = 80;
const KEPT = ["lib", "cli"];

/** A lint plugin that reports each function longer than the limit. */
const longFunctions: Deno.lint.Plugin = {
  name: "house",
  rules: {
    "function-lines": {
      create(context) {
        const check = (node: Deno.lint.Node) => {
          const [start, end] = node.range;
          const lines = context.sourceCode.text.slice(start, end).split("\n").length;
          if (lines > LIMIT) context.report({ node, message: `a function of ${lines} lines` });
        };
        return { FunctionDeclaration: check, FunctionExpression: check, ArrowFunctionExpression: check };
      },
    },
  },
};

async function* files(path: string): AsyncGenerator<string> {
  if ((await Deno.stat(path)).isFile) {
    yield path;
    return;
  }
  for await (const e of Deno.readDir(path)) {
    const p = join(path, e.name);
    if (e.isDirectory) yield* files(p);
    else if (p.endsWith(".ts")) yield p;
  }
}

/** The line of a character offset. */
function lineOf(text: string, offset: number): number {
  return text.slice(0, offset).split("\n").length;
}

Deno.test("the plugin counts a function from its first line to its last", () => {
  const long = `function f() {\n${"  1;\n".repeat(LIMIT - 2)}}\nconst g = () => {\n${
    "  2;\n".repeat(LIMIT - 1)
  }};\n`;
  const found = Deno.lint.runPlugin(longFunctions, "x.ts", long);
  assert.deepEqual(found.map((d) => d.message), [`a function of ${LIMIT + 1} lines`]);
});

Deno.test(`every function in ${KEPT.join(", ")} is at most ${LIMIT} lines`, async () => {
  const long: string[] = [];
  for (const root of KEPT) {
    for await (const file of files(join(ROOT, root))) {
      const text = await Deno.readTextFile(file);
      for (const d of Deno.lint.runPlugin(longFunctions, file, text)) {
        long.push(`${relative(ROOT, file)}:${lineOf(text, d.range[0])}: ${d.message}`);
      }
    }
  }
  assert.deepEqual(long, []);
});

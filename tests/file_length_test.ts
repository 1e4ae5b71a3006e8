/**
 * The house rule "one concept per file; a file over ~600 lines is two", as a test over the library and the CLI.
 * A generated file is exempt by name, with the generator that writes it and the test that keeps it so; a file
 * that another branch is splitting is listed as pending until that branch lands.
 * @module
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";

const ROOT = new URL("../", import.meta.url).pathname;
const LIMIT = 600;
const KEPT = ["lib", "cli"];

/** Files written by a generator, not by hand: their length is the data's, and no one edits them here. */
const GENERATED: Record<string, string> = {
  // `deno task viewer:bundle` bundles lib/provevi/viewer/app/; viewer_script_test.ts bundles it again and compares.
  "lib/provevi/viewer/viewer_script.ts": "the viewer's bundled script",
  // `deno task sandbox:packages` (_package_types_build.ts) from deno.lock; package_types_test.ts makes it again.
  "lib/provrun/sandbox/_package_types.ts": "the module type of each locked npm package",
};

/** Files over the limit that a branch now splits; the lead removes the line when that branch lands. */
const PENDING: Record<string, string> = {};

/** The number of lines of a text, as `wc -l` counts them (a last line without a newline counts too). */
function lineCount(text: string): number {
  const newlines = text.split("\n").length - 1;
  return text === "" || text.endsWith("\n") ? newlines : newlines + 1;
}

async function* files(dir: string): AsyncGenerator<string> {
  for await (const e of Deno.readDir(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory) yield* files(p);
    else if (p.endsWith(".ts")) yield p;
  }
}

/** Each .ts file of lib/ and cli/ with its length, by its path from the repository's root. */
async function lengths(): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const root of KEPT) {
    for await (const file of files(join(ROOT, root))) {
      out.set(relative(ROOT, file), lineCount(await Deno.readTextFile(file)));
    }
  }
  return out;
}

Deno.test("lines are counted as wc -l counts them", () => {
  assert.equal(lineCount(""), 0);
  assert.equal(lineCount("a\n"), 1);
  assert.equal(lineCount("a\nb"), 2);
  assert.equal(lineCount("a\n\nb\n"), 3);
});

Deno.test(`every file in ${KEPT.join(", ")} is at most ${LIMIT} lines, but the generated ones`, async () => {
  const long = [...await lengths()]
    .filter(([file, n]) => n > LIMIT && !(file in GENERATED) && !(file in PENDING))
    .map(([file, n]) => `${file}: ${n} lines; split it along its concepts`);
  assert.deepEqual(long, []);
});

Deno.test("each exempt file is there and says it is generated; each pending one is still over the limit", async () => {
  const all = await lengths();
  const wrong: string[] = [];
  for (const file of Object.keys(GENERATED)) {
    if (!all.has(file)) {
      wrong.push(`${file} is exempt but gone: remove its line`);
      continue;
    }
    const head = (await Deno.readTextFile(join(ROOT, file))).slice(0, 400);
    if (!/generated|bundle/i.test(head)) {
      wrong.push(`${file} is exempt but its header does not say it is generated`);
    }
  }
  for (const [file, branch] of Object.entries(PENDING)) {
    if ((all.get(file) ?? 0) <= LIMIT) {
      wrong.push(`${file} is split (${branch} landed): remove its pending line`);
    }
  }
  assert.deepEqual(wrong, []);
});

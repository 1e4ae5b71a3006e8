/**
 * Keeps a class of flaky test out: `deno test --parallel` runs the test files in workers of one process, so a
 * test that bounds the growth of `Deno.memoryUsage().rss` counts what every other file holds at that moment (a
 * file alone took 0 MiB, 121 MiB beside the others). A test that bounds RSS measures it in a process of its own
 * (`measuredInChild`, tests/attacks/_setup.ts); one that bounds what its own code holds measures its isolate
 * (`isolateBytes`, tests/_memory.ts). This test fails when a test file, or a module of tests/ it imports, reads
 * the process's RSS.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { localClosure, testFiles } from "./_test_task.ts";

const ROOT = new URL("../", import.meta.url).pathname;
/** This file, whose examples of the spellings are no reading. */
const THIS = "tests/rss_measure_test.ts";

/** A reading of the process's RSS: `Deno.memoryUsage().rss`, or `rss` taken apart from it. */
const READS_RSS = /memoryUsage\(\)\s*\.\s*rss\b|\{[^}]*\brss\b[^}]*\}\s*=\s*Deno\.memoryUsage\(\)/;

Deno.test("no test file, nor a module of tests/ it imports, reads the RSS of the process the files share", async () => {
  const found = new Set<string>();
  const read = new Map<string, boolean>();
  for (const file of (await testFiles()).filter((f) => f !== THIS)) {
    for (const module of await localClosure(file)) {
      if (!read.has(module)) read.set(module, READS_RSS.test(await Deno.readTextFile(join(ROOT, module))));
      if (read.get(module)) found.add(`${file}${module === file ? "" : ` (through ${module})`}`);
    }
  }
  assert.deepEqual([...found], []);
});

Deno.test("the reading of RSS is seen in each of its spellings, and a reading of the isolate's memory is not", () => {
  assert.ok(READS_RSS.test("const before = Deno.memoryUsage().rss;"));
  assert.ok(READS_RSS.test("const { rss } = Deno.memoryUsage();"));
  assert.ok(!READS_RSS.test("const m = Deno.memoryUsage(); return m.heapUsed + m.external;"));
});

import assert from "node:assert/strict";
import { problem } from "../../../lib/provevi/evidence/problem.ts";
import { PROBLEM_CODES } from "../../../lib/provevi/evidence/problem_codes.ts";

const DOC = new URL("../../../docs/evidence-format.md", import.meta.url);

Deno.test("docs/evidence-format.md lists every problem code with its check, family and meaning, and no other", async () => {
  const text = await Deno.readTextFile(DOC);
  const table = text.slice(text.indexOf("## Problem codes"));
  const rows = [...table.matchAll(/^\| `([a-z_]+\.[a-z_0-9]+)` +\| ([0-9-]+) +\| ([a-z]+) +\| (.+?) +\|$/gm)]
    .map((m) => [m[1], m[2] === "-" ? null : Number(m[2]), m[3], m[4]]);
  const registry = Object.entries(PROBLEM_CODES).map(([code, i]) => [code, i.check, i.family, i.meaning]);
  assert.deepEqual(rows, registry);
});

Deno.test("problem() refuses a code that is not in the registry, and keeps every message to one line", () => {
  assert.throws(() => problem("chain.bent" as never, "x"), RangeError);
  const p = problem("line.not_json", "events.jsonl line 2\n  is not JSON", { file: "events.jsonl", line: 2 });
  assert.deepEqual(p, {
    code: "line.not_json",
    file: "events.jsonl",
    line: 2,
    seq: null,
    message: "events.jsonl line 2 is not JSON",
  });
});

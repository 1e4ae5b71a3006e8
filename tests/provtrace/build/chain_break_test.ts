import assert from "node:assert/strict";
import canonicalize from "canonicalize";
import { sha256Hex } from "../../../lib/provevi/evidence/hash.ts";
import { chainBreak } from "../../../lib/provtrace/build/check_run.ts";

/** A chain of canonical event-like lines, each with its `prev`, and the last line's hash. */
function chain(datas: unknown[]): { lines: string[]; last: string } {
  const lines: string[] = [];
  let prev: string | null = null;
  for (const [seq, data] of datas.entries()) {
    const line: string = canonicalize({ data, prev, refs: [], seq, type: "step" })!;
    lines.push(line);
    prev = sha256Hex(line);
  }
  return { lines, last: prev! };
}

const text = (lines: string[]) => lines.join("\n") + "\n";

Deno.test("the chain walk of a run built verified gives the words of the full walk, for every break", () => {
  for (const built of [false, true]) {
    const { lines, last } = chain([{ a: 1 }, { b: 2 }, { c: 3 }, { d: 4 }]);
    assert.equal(chainBreak(text(lines), last, built), null);
    assert.equal(chainBreak(null, last, built), "the store's run has no events.jsonl now");
    const changed = [...lines];
    changed[1] = changed[1]!.replace('"b":2', '"b":3');
    assert.equal(
      chainBreak(text(changed), last, built),
      "events.jsonl line 3 no longer chains to the line before it",
    );
    const broken = [...lines];
    broken[2] = "{not json";
    assert.equal(chainBreak(text(broken), last, built), "events.jsonl line 3 is not JSON now");
    assert.equal(
      chainBreak(text(lines.slice(0, 3)), last, built),
      "the last line of events.jsonl no longer hashes to the manifest's last hash",
    );
    const dropped = [lines[0]!, lines[2]!, lines[3]!];
    assert.equal(
      chainBreak(text(dropped), last, built),
      "events.jsonl line 2 no longer chains to the line before it",
    );
  }
});

Deno.test("a line swapped for a forgery that the next line names under a nested prev key breaks the chain walk", () => {
  const canonical = (seq: number, data: unknown, prev: string | null) =>
    canonicalize({ data, prev, refs: [], seq, type: "step" })!;
  const first = canonical(0, { a: 1 }, null);
  const forged = canonical(1, { b: "forged" }, sha256Hex(first));
  const second = canonical(1, { b: 2 }, sha256Hex(first));
  // The third line was written with the forgery's hash in its data, under a key "prev", before its own prev:
  // a reader of the first `"prev":` would take it, and pass the forgery.
  const third = canonical(2, { prev: sha256Hex(forged) }, sha256Hex(second));
  assert.ok(third.indexOf(sha256Hex(forged)) < third.indexOf(sha256Hex(second)));
  const last = sha256Hex(third);
  assert.equal(chainBreak(text([first, second, third]), last, true), null);
  assert.equal(
    chainBreak(text([first, forged, third]), last, true),
    "events.jsonl line 3 no longer chains to the line before it",
  );
  // A key whose text ends in `"prev"` is another place that says it: the line is parsed, and chains.
  const keyed = canonical(2, { 'x"prev': sha256Hex(forged) }, sha256Hex(second));
  assert.equal(keyed.split('"prev":').length - 1, 2);
  assert.equal(chainBreak(text([first, second, keyed]), sha256Hex(keyed), true), null);
  assert.match(chainBreak(text([first, forged, keyed]), sha256Hex(keyed), true)!, /line 3 no longer chains/);
});

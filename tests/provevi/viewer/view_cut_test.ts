import assert from "node:assert/strict";
import { cutJson, parseJsonHead } from "../../../lib/provevi/viewer/view_cut.ts";

const LIMITS = { strings: 5, items: 3, depth: 3 };

Deno.test("cutJson() cuts long strings, long lists and objects, and deep nesting, and says so", () => {
  assert.deepEqual(cutJson({ a: "abc", b: [1, 2] }, LIMITS), { value: { a: "abc", b: [1, 2] }, cut: false });
  assert.deepEqual(cutJson("abcdefgh", LIMITS), { value: "abcde…", cut: true });
  assert.deepEqual(cutJson([1, 2, 3, 4, 5], LIMITS), { value: [1, 2, 3], cut: true });
  assert.deepEqual(cutJson({ a: 1, b: 2, c: 3, d: 4 }, LIMITS), { value: { a: 1, b: 2, c: 3 }, cut: true });
  assert.deepEqual(cutJson({ a: { b: { c: { d: 1 } } } }, LIMITS), {
    value: { a: { b: { c: "…" } } },
    cut: true,
  });
  assert.deepEqual(cutJson("abcdefgh", { ...LIMITS, more: "" }), { value: "abcde", cut: true });
});

Deno.test("cutJson() keeps a __proto__ key as data, and never changes the value it was given", () => {
  const value = JSON.parse('{"__proto__": {"x": "abcdefgh"}, "y": [1, 2, 3, 4]}');
  const before = JSON.stringify(value);
  const cut = cutJson(value, LIMITS);
  assert.equal(JSON.stringify(value), before);
  assert.equal(JSON.stringify(cut.value), '{"__proto__":{"x":"abcde…"},"y":[1,2,3]}');
  assert.equal(({} as Record<string, unknown>).x, undefined);
});

Deno.test("parseJsonHead() reads a JSON text cut anywhere, closing what is open", () => {
  const big = { strings: 100, items: 100, depth: 10 };
  const text = JSON.stringify({
    prompt: [{ role: "user", content: 'What was "Q3"?\n' }],
    n: -1.5e3,
    ok: true,
  });
  for (let end = 1; end < text.length; end++) {
    const head = parseJsonHead(text.slice(0, end), big);
    assert.ok(head !== null, text.slice(0, end));
    assert.equal(head.cut, true, text.slice(0, end));
  }
  assert.deepEqual(parseJsonHead(text, big), { value: JSON.parse(text), cut: false });
  assert.deepEqual(parseJsonHead('{"text":"Revenue gr', big), { value: { text: "Revenue gr…" }, cut: true });
  assert.deepEqual(parseJsonHead('{"text":"a\\u00e9b\\u00', big), { value: { text: "aéb…" }, cut: true });
  assert.deepEqual(parseJsonHead("[1, 2, tr", big), { value: [1, 2, null], cut: true });
  assert.deepEqual(parseJsonHead('{"a": 1.', big), { value: { a: 1 }, cut: true });
});

Deno.test("parseJsonHead() says null for a text that is not JSON, so that it is shown as text", () => {
  for (
    const text of [
      "Revenue grew",
      "",
      "  ",
      "{a: 1}",
      '{"a" 1}',
      "[1 2]",
      "[1,]x",
      '"a\u0001"',
      "12 monkeys",
      "{}}",
    ]
  ) {
    assert.equal(parseJsonHead(text, LIMITS), null, text);
  }
});

Deno.test("parseJsonHead() cuts as cutJson does, and a nest too deep to show, even one that never closes", () => {
  const head = parseJsonHead('{"a": "abcdefgh", "b": [1, 2, 3, 4, 5], "c": {"d": {"e": {"f": 1}}}}', LIMITS);
  assert.deepEqual(head, { value: { a: "abcde…", b: [1, 2, 3], c: { d: { e: "…" } } }, cut: true });
  const deep = "[".repeat(100_000);
  assert.deepEqual(parseJsonHead(deep, LIMITS), { value: [[["…"]]], cut: true });
});

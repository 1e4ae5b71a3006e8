import assert from "node:assert/strict";
import canonicalize from "canonicalize";
import { canonicalJson } from "../../../lib/provtrace/build/_values.ts";

/** The package's answer: its text, or the fact that it refused. */
function reference(value: unknown): { text: string | undefined } | { refused: true } {
  try {
    return { text: canonicalize(value) };
  } catch {
    return { refused: true };
  }
}

function ours(value: unknown): { text: string | undefined } | { refused: true } {
  try {
    return { text: canonicalJson(value) };
  } catch {
    return { refused: true };
  }
}

/** A generator of JSON-like values, seeded, so each run draws the same thousands of values. */
function values(seed: number, count: number): unknown[] {
  let s = seed;
  const next = () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const strings = [
    "",
    "a",
    "é",
    "😀",
    "\u2028",
    '"\\',
    "\u0000\u001f",
    "\ud800",
    "z\udc00",
    "10",
    "__proto__",
  ];
  const numbers = [0, -0, 1, -1.5, 1e21, 1e-7, 0.1 + 0.2, 9007199254740993, NaN, Infinity, 5e-324];
  const draw = (depth: number): unknown => {
    const r = next();
    if (depth > 3 || r < 0.35) {
      const k = Math.floor(next() * 5);
      if (k === 0) return strings[Math.floor(next() * strings.length)];
      if (k === 1) return numbers[Math.floor(next() * numbers.length)];
      if (k === 2) return next() < 0.5;
      if (k === 3) return null;
      return next() < 0.5 ? undefined : `text ${Math.floor(next() * 1000)}`;
    }
    if (r < 0.65) return Array.from({ length: Math.floor(next() * 4) }, () => draw(depth + 1));
    const out: Record<string, unknown> = {};
    for (let i = Math.floor(next() * 5); i > 0; i--) {
      out[strings[Math.floor(next() * strings.length)]! + (next() < 0.5 ? "" : "k")] = draw(depth + 1);
    }
    return out;
  };
  return Array.from({ length: count }, () => draw(0));
}

Deno.test("canonicalJson writes what the canonicalize package writes, and refuses what it refuses, for 5,000 drawn values", () => {
  for (const [i, value] of values(7, 5_000).entries()) {
    assert.deepEqual(ours(value), reference(value), `value ${i}: ${String(JSON.stringify(value))}`);
  }
});

Deno.test("canonicalJson leaves what is not plain JSON to the package: toJSON, dates, boxed values, functions, deep nesting, cycles", () => {
  let deep: unknown = "leaf";
  for (let i = 0; i < 5_000; i++) deep = { d: [deep] };
  const cycle: Record<string, unknown> = { a: 1 };
  cycle.self = cycle;
  const cases: unknown[] = [
    { when: new Date(0), n: new Number(3), s: new String("x"), b: new Boolean(false) },
    { toJSON: () => ({ b: 2, a: 1 }) },
    { keep: 1, drop: () => 1, sym: Symbol("s") },
    [() => 1, Symbol("s"), undefined],
    Object.assign(Object.create(null), { b: 1, a: [1, { c: null }] }),
    { big: 10n },
    new Uint8Array([1, 2]),
    deep,
    cycle,
    undefined,
  ];
  for (const [i, value] of cases.entries()) assert.deepEqual(ours(value), reference(value), `case ${i}`);
});

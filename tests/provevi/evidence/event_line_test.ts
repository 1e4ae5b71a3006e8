import assert from "node:assert/strict";
import canonicalize from "canonicalize";
import { fastEventLine, plainCanonicalText } from "../../../lib/provevi/evidence/event_line.ts";
import { eventLine } from "../../../lib/provevi/evidence/event.ts";
import type { EvidenceEvent } from "../../../lib/provevi/evidence/event.ts";

function event(data: unknown, more: Record<string, unknown> = {}): EvidenceEvent {
  return {
    run_id: "run-20261130T120000Z-0000abcd",
    seq: 3,
    time: "2026-11-30T12:00:00.000001Z",
    type: "span_recorded",
    component: "SpanReceiver",
    actor: "ada",
    refs: ["data://a/b/c/d", "é"],
    data: data as EvidenceEvent["data"],
    payload: null,
    confidence: "parsed",
    prev: "0".repeat(64),
    trace_id: "a".repeat(32),
    span_id: "b".repeat(16),
    parent_span_id: null,
    started_at: null,
    ...more,
  } as EvidenceEvent;
}

/** Random JSON values with the texts and numbers JCS is particular about. */
function randomJson(depth: number, rand: () => number): unknown {
  const texts = [
    "",
    "a",
    "é",
    "\u2028",
    "\u0000\u001f",
    '"\\',
    "😀",
    "z",
    "Z",
    "\ud83d\ude00b",
    "€",
    "__proto__",
  ];
  const numbers = [0, -0, 1, -1.5, 1e21, 1e-7, 123456789012345680000, 5e-324, 0.1 + 0.2, 2 ** 53];
  const r = rand();
  if (depth <= 0 || r < 0.4) {
    const k = Math.floor(rand() * 4);
    if (k === 0) return texts[Math.floor(rand() * texts.length)]!;
    if (k === 1) return numbers[Math.floor(rand() * numbers.length)]!;
    return k === 2 ? rand() < 0.5 : null;
  }
  if (r < 0.6) return Array.from({ length: Math.floor(rand() * 4) }, () => randomJson(depth - 1, rand));
  const out: Record<string, unknown> = {};
  for (let i = Math.floor(rand() * 5); i > 0; i--) {
    const key = texts[Math.floor(rand() * texts.length)]! + String(Math.floor(rand() * 3));
    Object.defineProperty(out, key, {
      value: randomJson(depth - 1, rand),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

Deno.test("fastEventLine() gives the text of the general RFC 8785 canonicalizer for any plain event", () => {
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  let fast = 0;
  for (let i = 0; i < 2000; i++) {
    const e = event({ value: randomJson(4, rand), __proto__x: 1 });
    const line = fastEventLine(e);
    if (line !== null) {
      assert.equal(line, canonicalize(e));
      fast++;
    }
    assert.equal(eventLine(e), canonicalize(e));
  }
  assert.ok(fast > 1000, `only ${fast} of 2000 took the fast way`);
  const proto = JSON.parse('{"__proto__": {"a": 1}, "b": [1, "x"]}');
  assert.equal(fastEventLine(event(proto)), canonicalize(event(proto)));
});

Deno.test("fastEventLine() leaves an event out of the ordinary to the general canonicalizer, which refuses the same", () => {
  assert.equal(fastEventLine(event({}, { extra: 1 })), null);
  const missing = event({}) as unknown as Record<string, unknown>;
  delete missing.payload;
  assert.equal(fastEventLine(missing), null);
  assert.equal(fastEventLine(event({ when: new Date(0) })), null);
  // a key that is an array index comes first in any object, out of JCS's order
  assert.equal(fastEventLine(event({ b: 1, "2": 2 })), null);
  assert.equal(eventLine(event({ b: 1, "2": 2 })), canonicalize(event({ b: 1, "2": 2 })));
  assert.equal(eventLine(event({ when: new Date(0) })), canonicalize(event({ when: new Date(0) })));
  for (const bad of [{ text: "\ud800" }, { n: NaN }, { n: Infinity }]) {
    assert.equal(fastEventLine(event(bad)), null);
    assert.throws(() => eventLine(event(bad)));
  }
  const cycle: Record<string, unknown> = {};
  cycle.self = cycle;
  assert.equal(fastEventLine(event(cycle)), null);
  assert.throws(() => eventLine(event(cycle)), /Circular/);
});

Deno.test("plainCanonicalText() gives the general RFC 8785 canonicalizer's text for plain JSON, sorted or not", () => {
  let seed = 11;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  let fast = 0;
  for (let i = 0; i < 2000; i++) {
    const value = randomJson(5, rand);
    const text = plainCanonicalText(value);
    if (text !== null) {
      assert.equal(text, canonicalize(value));
      fast++;
    }
    // read back from its canonical line (keys in order: the walk, no copy) and from a line in another order
    const line = canonicalize(value)!;
    assert.equal(plainCanonicalText(JSON.parse(line)) ?? line, line);
    const unsorted = JSON.parse(JSON.stringify(value, (_k, v) => isRecord(v) ? reversed(v) : v));
    assert.equal(plainCanonicalText(unsorted) ?? canonicalize(unsorted), line);
  }
  assert.ok(fast > 1000, `only ${fast} of 2000 took the fast way`);
  for (
    const text of [
      '{"b":1,"__proto__":{"z":1,"a":2},"a":[{"y":1,"x":2}]}',
      '{"__proto__":[1,{"b":null,"a":"é"}],"a":{"c":{"e":1,"d":[{"g":1,"f":2}]}},"z":[]}',
      '{"a":{"b":{"c":[1,2,{"e":1,"d":2}]}},"b":[[[{"y":[],"x":{}}]]]}',
    ]
  ) {
    const value = JSON.parse(text);
    assert.equal(plainCanonicalText(value), canonicalize(value), text);
  }
});

Deno.test("plainCanonicalText() leaves what is not plain JSON to the general canonicalizer", () => {
  class Point {
    x = 1;
  }
  const cycle: Record<string, unknown> = {};
  cycle.self = cycle;
  let deep: unknown = 1;
  for (let i = 0; i < 100_000; i++) deep = [deep];
  const listWithToJson = Object.assign([1, 2], { toJSON: () => "list" });
  for (
    const value of [
      { when: new Date(0) },
      { at: new Point() },
      { t: { toJSON: () => 5 } },
      { f: () => 1 },
      listWithToJson,
      [1, undefined],
      { b: 1, "2": 2 },
      JSON.parse('{"text":"\\ud800"}'),
      JSON.parse('{"n":1e400}'),
      { n: NaN },
      10n,
      cycle,
      deep,
    ]
  ) {
    assert.equal(plainCanonicalText(value), null, `${Deno.inspect(value, { depth: 2 })} took the fast way`);
  }
  // what the package writes of them stays the package's
  assert.equal(canonicalize({ t: { toJSON: () => 5 } }), '{"t":5}');
  assert.equal(
    plainCanonicalText({ a: undefined, b: [-0, "é"] }),
    canonicalize({ a: undefined, b: [-0, "é"] }),
  );
});

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The same object with its keys in the reverse of JCS's order. */
function reversed(v: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(v).sort().reverse()) {
    Object.defineProperty(out, key, { value: v[key], enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/**
 * The OTLP/protobuf decoder at `prove serve`'s door (`otlp_wire.ts`) under attack by anyone who can POST a body:
 * bodies that make far more objects than their size, groups nested a byte a level, IDs of half a megabyte,
 * tags and lengths past 32 bits, a field 0 in a group, and values a first-wins or BOM-dropping reader records
 * differently from every other reader. Each must be refused with a one-line `Error` that says where (or read as
 * protobuf's rules and protobufjs read it), and at the door answered 400 while the run keeps what it had and
 * still verifies. A table of the cases that were already stopped is kept with them, so that the corpus keeps
 * trying them. And a body small on the wire whose rows would be huge (a long scope name, which a row repeats in
 * each span) is refused, at `prove serve` and at a run's own receiver, in protobuf and in JSON.
 * @module
 */
import assert from "node:assert/strict";
import { findRun } from "../../lib/provevi/runs/find_run.ts";
import { verifyRun } from "../../lib/provevi/runs/verify_run.ts";
import { appendSealedSpans } from "../../lib/provevi/receiver/daemon_client.ts";
import { decodeTraceRequest } from "../../lib/provevi/receiver/otlp_receiver.ts";
import type { OtlpValue } from "../../lib/provevi/receiver/otlp_wire.ts";
import { receiver } from "../../lib/provevi/receiver/run_receiver.ts";
import { SpanDaemon } from "../../lib/provevi/receiver/span_daemon.ts";
import { OTLP_TRACE_REQUEST } from "../../lib/provevi/telemetry/otlp_proto.ts";
import { openInStore, openWith, sealWith, sendSpans, tempStore } from "../provevi/receiver/_daemon.ts";
import { Tally } from "./_tally.ts";
import { isolateBytes } from "../_memory.ts";

const tally = new Tally("OTLP wire decoder attacks");

/** A varint's bytes. */
function varint(n: number): number[] {
  const out: number[] = [];
  for (;; n = Math.floor(n / 128)) {
    if (n < 128) return [...out, n];
    out.push((n & 0x7f) | 0x80);
  }
}

/** A length-delimited field: its tag byte, its length, its bytes. */
function field(tag: number, inner: Uint8Array | number[]): Uint8Array<ArrayBuffer> {
  const length = varint(inner.length);
  const out = new Uint8Array(1 + length.length + inner.length);
  out[0] = tag;
  out.set(length, 1);
  out.set(inner, 1 + length.length);
  return out;
}

/** `unit` repeated to about `bytes`. */
function repeat(unit: number[], bytes: number): Uint8Array {
  const out = new Uint8Array(Math.floor(bytes / unit.length) * unit.length);
  for (let i = 0; i < out.length; i++) out[i] = unit[i % unit.length]!;
  return out;
}

const IDS = [...field(0x0a, new Uint8Array(16).fill(1)), ...field(0x12, new Uint8Array(8).fill(2))];

/** The parts' bytes one after the other (copied, not spread: a body of megabytes spread into an array is slow). */
function concat(...parts: (Uint8Array | number[])[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) (out.set(p, at), at += p.length);
  return out;
}

/** A request of one span of these fields (after its IDs). */
function oneSpan(fields: Uint8Array | number[]): Uint8Array {
  return field(0x0a, field(0x12, field(0x12, concat(IDS, fields))));
}

/** A request of one span with one attribute `a` of this `AnyValue`. */
function oneValue(value: Uint8Array | number[]): Uint8Array {
  return oneSpan(field(0x4a, concat([0x0a, 0x01, 0x61], field(0x12, value))));
}

/** A group of field 15 nested `depth` deep, then closed. */
function groups(depth: number): Uint8Array {
  return new Uint8Array(2 * depth).fill(0x7b, 0, depth).fill(0x7c, depth);
}

const MIB = 1024 * 1024;

/** Bodies the decoder took before (or threw a stack overflow for) that it now refuses, with what it says. */
const HOLES: [string, () => Uint8Array, RegExp][] = [
  // a few MiB of empty spans made some 150 bytes of objects a byte: 16 MiB, the body limit, made 2.5 GB
  [
    "4 MiB of empty spans",
    () => field(0x0a, field(0x12, repeat([0x12, 0x00], 4 * MIB))),
    /bytes of spans, events/,
  ],
  [
    "4 MiB of empty events in one span",
    () => oneSpan(repeat([0x5a, 0x00], 4 * MIB)),
    /bytes of spans, events/,
  ],
  [
    "4 MiB of empty links in one span",
    () => oneSpan(repeat([0x6a, 0x00], 4 * MIB)),
    /bytes of spans, events/,
  ],
  [
    "4 MiB of empty mappings in a list",
    () => oneValue(field(0x2a, repeat([0x0a, 0x02, 0x32, 0x00], 4 * MIB))),
    /bytes of spans, events/,
  ],
  [
    "4 MiB of empty bytes values in a list",
    () => oneValue(field(0x2a, repeat([0x0a, 0x02, 0x3a, 0x00], 4 * MIB))),
    /bytes of spans, events/,
  ],
  // groups were skipped by recursion: one byte a level overflowed the stack (a RangeError, not the decoder's)
  ["unknown groups nested 300,000 deep at the top", () => groups(300_000), /groups are nested more than 32/],
  [
    "unknown groups nested 300,000 deep in a value",
    () => oneValue(groups(300_000)),
    /groups are nested more/,
  ],
  // an ID was turned to hex with one call of two arguments a byte: past some 100,000, a RangeError
  [
    "a trace ID of 512 KiB",
    () => field(0x0a, field(0x12, field(0x12, field(0x0a, new Uint8Array(MIB / 2))))),
    /an ID of/,
  ],
  ["a link span ID of 512 KiB", () => oneSpan(field(0x6a, field(0x12, new Uint8Array(MIB / 2)))), /an ID of/],
  // tags and lengths kept their low 32 bits: a length of 2^32 read as 0, 2^63 + 2 as 2; the Collector refuses
  ["a length of 2^32", () => new Uint8Array([0x0a, 0x80, 0x80, 0x80, 0x80, 0x10]), /does not fit 32 bits/],
  [
    "a length of 2^63 + 2",
    () => new Uint8Array([0x0a, 0x82, ...Array(8).fill(0x80), 0x01, 0, 0]),
    /fit 32 bits/,
  ],
  [
    "a tag of 2^32 + 0x0a",
    () => new Uint8Array([0x8a, 0x80, 0x80, 0x80, 0x10, 0x00]),
    /does not fit 32 bits/,
  ],
  ["a string length of 2^32 + 1", () => oneSpan([0x2a, 0x81, 0x80, 0x80, 0x80, 0x10, 0x78]), /fit 32 bits/],
  // protobufjs refused a field numbered 0 inside an unknown group; the wire decoder skipped it
  ["a field numbered 0 in a group", () => new Uint8Array([0x7b, 0x00, 0x00, 0x7c]), /a field numbered 0/],
];

Deno.test("the wire decoder refuses what makes far more objects than its size, deep groups, huge IDs and 33-bit tags, each with an Error that says where", () => {
  for (const [name, make, says] of HOLES) {
    let error: unknown = null;
    try {
      decodeTraceRequest(make());
    } catch (e) {
      error = e;
    }
    const stopped = error instanceof Error && error.constructor === Error;
    const message = error instanceof Error ? error.message : "";
    tally.add(name, { stopped, recorded: says.test(message) && /at byte \d+ of \d+$/.test(message) });
    assert.ok(stopped, `${name}: ${error}`);
    assert.match(message, says, name);
    assert.doesNotMatch(message, /\n/);
  }
});

Deno.test("the wire decoder reads a value as protobuf and protobufjs do: the last member of a oneof wins, a leading U+FEFF is kept", () => {
  const text = (s: string) => field(0x0a, new TextEncoder().encode(s));
  const cases: [string, Uint8Array, OtlpValue][] = [
    ["a text then an integer: the integer", oneValue([...text("admin"), 0x18, 0x07]), 7],
    ["an integer then a text: the text", oneValue([0x18, 0x07, ...text("admin")]), "admin"],
    ["a yes then a list: the list", oneValue([0x10, 0x01, ...field(0x2a, [])]), []],
    [
      "a mapping then bytes: the bytes",
      oneValue([...field(0x32, []), ...field(0x3a, [9])]),
      new Uint8Array([9]),
    ],
    ["a text that starts with U+FEFF", oneValue(text("\uFEFFsecret")), "\uFEFFsecret"],
  ];
  for (const [name, body, want] of cases) {
    const got = decodeTraceRequest(body)[0]!.attributes.a;
    const same = JSON.stringify(got) === JSON.stringify(want) && typeof got === typeof want;
    tally.add(name, { stopped: same, recorded: same });
    assert.deepEqual(got, want, name);
  }
  const key = decodeTraceRequest(oneSpan(field(0x4a, [...text("\uFEFFk"), ...field(0x12, text("v"))])));
  assert.deepEqual(Object.keys(key[0]!.attributes), ["\uFEFFk"]);
});

/** Cases the decoder stopped before these fixes, kept so that the corpus keeps trying them. */
const ALREADY_STOPPED: [string, Uint8Array, RegExp][] = [
  ["a varint of 11 bytes", new Uint8Array([0x10, ...Array(10).fill(0xff), 0x01]), /longer than 10 bytes/],
  ["a length of 2^31 - 1", new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0xff, 0x07]), /runs past its message/],
  [
    "a length of -1 as an int32",
    new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]),
    /runs past its message/,
  ],
  ["a span's kind packed (wire type 2)", oneSpan([0x32, 0x01, 0x01]), /Span.kind has wire type 2/],
  ["values nested 33 deep: mapping in list in mapping", oneValue(nestMixed(33)), /nested more than 32 deep/],
  ["wire type 6", new Uint8Array([0x0e]), /wire type 6/],
  ["wire type 7", new Uint8Array([0x0f]), /wire type 7/],
  ["a field numbered 0", new Uint8Array([0x02, 0x00]), /a field numbered 0/],
  ["a group closed by another number", new Uint8Array([0x7b, 0x84, 0x01]), /group 15 closes as 16/],
  ["a group that never closes", new Uint8Array([0x7b, 0x08, 0x01]), /does not close/],
  ["a span cut in its times", oneSpan([0x39, 1, 2, 3]), /cut/],
];

/** A value of mappings in lists in mappings, `depth` values deep (the attribute's own value is depth 0). */
function nestMixed(depth: number): Uint8Array {
  let value: Uint8Array = field(0x0a, [0x78]);
  for (let i = 0; i < depth; i++) {
    value = i % 2
      ? field(0x32, field(0x0a, [0x0a, 0x01, 0x6b, ...field(0x12, value)]))
      : field(0x2a, field(0x0a, value));
  }
  return value;
}

Deno.test("cases the wire decoder already stopped stay stopped, and what it already read stays read", () => {
  for (const [name, body, says] of ALREADY_STOPPED) {
    let message = "";
    try {
      decodeTraceRequest(body);
    } catch (e) {
      if (e instanceof Error && e.constructor === Error) message = e.message;
    }
    tally.add(name, { stopped: says.test(message), recorded: /at byte \d+ of \d+$/.test(message) });
    assert.match(message, says, name);
  }
  let leaf = decodeTraceRequest(oneValue(nestMixed(32)))[0]!.attributes.a;
  for (let i = 31; i >= 0; i--) {
    leaf = i % 2 ? (leaf as Record<string, OtlpValue>).k! : (leaf as OtlpValue[])[0]!;
  }
  const read: [string, Uint8Array, (s: ReturnType<typeof decodeTraceRequest>) => boolean][] = [
    ["a value nested 32 deep is read", oneValue(nestMixed(32)), () => leaf === "x"],
    [
      "`__proto__` and `constructor` keys are data",
      oneSpan([
        ...field(0x4a, [...field(0x0a, new TextEncoder().encode("__proto__")), ...field(0x12, [0x18, 0x01])]),
        ...field(0x4a, [
          ...field(0x0a, new TextEncoder().encode("constructor")),
          ...field(0x12, [0x18, 0x02]),
        ]),
      ]),
      (s) =>
        Object.getPrototypeOf(s[0]!.attributes) === Object.prototype &&
        (s[0]!.attributes.constructor as unknown) === 2,
    ],
    [
      "an int64 past 2^53 is exact text",
      oneValue([0x18, ...varint(2 ** 53)]),
      (s) => s[0]!.attributes.a === "9007199254740992",
    ],
    [
      "a duplicate name: the last wins",
      oneSpan([...field(0x2a, [0x61]), ...field(0x2a, [0x62])]),
      (s) => s[0]!.name === "b",
    ],
    [
      "invalid UTF-8 reads as U+FFFD, as the OTLP/JSON decoder reads it",
      oneSpan(field(0x2a, [0xff, 0xed, 0xa0, 0x80])),
      (s) => s[0]!.name === "\uFFFD".repeat(4),
    ],
    [
      "unknown fields of every wire type are skipped",
      oneSpan([
        0x80,
        0x01,
        0x01,
        0x81,
        0x01,
        ...Array(8).fill(0),
        0x85,
        0x01,
        0,
        0,
        0,
        0,
        0x83,
        0x01,
        0x84,
        0x01,
      ]),
      (s) => s.length === 1,
    ],
  ];
  for (const [name, body, ok] of read) {
    const good = ok(decodeTraceRequest(body));
    tally.add(name, { stopped: good, recorded: good });
    assert.ok(good, name);
  }
  const big = decodeTraceRequest(oneValue([0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]));
  assert.equal(big[0]!.attributes.a, "9223372036854775807");
});

Deno.test("prove serve answers each hole 400 with one line, grows by a bounded amount, and keeps the spans it took: the run verifies", async () => {
  await using t = await tempStore();
  await using daemon = SpanDaemon.start(t.store);
  const run = await openInStore(t.store, "run-20261201T230000Z-0000a1e7");
  const opened = await openWith(daemon, run.writer.runId);
  await sendSpans(opened, ["claude_code.tool", "claude_code.llm_request"]);
  const before = isolateBytes();
  let most = before;
  const bodies: [string, Uint8Array<ArrayBuffer>][] = [
    ["16 MiB of empty spans", field(0x0a, field(0x12, repeat([0x12, 0x00], 16 * MIB - 16)))],
    ...HOLES.map(([name, make]) => [name, new Uint8Array(make())] as [string, Uint8Array<ArrayBuffer>]),
  ];
  for (const [name, body] of bodies) {
    const r = await fetch(opened.traces_url, {
      method: "POST",
      headers: { authorization: `Bearer ${opened.ingest_key}`, "content-type": "application/x-protobuf" },
      body,
    });
    const text = new TextDecoder().decode(new Uint8Array(await r.arrayBuffer()));
    most = Math.max(most, isolateBytes());
    const message = text.replace(/^[^a-z]*/i, "");
    tally.add(`${name} at prove serve`, {
      stopped: r.status === 400,
      recorded: /at byte \d+ of \d+/.test(message) && !message.includes("\n"),
    });
    assert.equal(r.status, 400, `${name}: ${text}`);
  }
  // printed, and bounded generously: before the fix the 16 MiB body alone made some 2.5 GB
  console.log(`prove serve: resident memory +${((most - before) / MIB).toFixed(0)} MiB over the bodies`);
  assert.ok(most - before < 1536 * MIB, `grew by ${most - before} bytes`);
  const sealed = await sealWith(opened);
  assert.equal(sealed.spans, 2);
  const problems = sealed.events.filter((e) => e.type === "telemetry_problem");
  assert.equal(problems.length, bodies.length);
  await appendSealedSpans(run.recorder, sealed, { folder: run.writer.folder });
  await run.recorder.seal();
  const check = await verifyRun(await findRun(run.writer.folder));
  assert.ok(check.ok, JSON.stringify(check.problems));
});

Deno.test("a long scope name in each of many small spans' rows is refused 400 by prove serve and a run's receiver, in protobuf and JSON, and neither grows by gigabytes", async () => {
  // 1 MiB of scope name and 12,000 spans of two IDs: twelve gigabytes of rows, had each been made
  const spans = Array.from(
    { length: 12_000 },
    () => ({ trace_id: "ab".repeat(16), span_id: "cd".repeat(8) }),
  );
  const request = { resource_spans: [{ scope_spans: [{ scope: { name: "s".repeat(MIB) }, spans }] }] };
  const protobufBody = new Uint8Array(
    OTLP_TRACE_REQUEST.encode(OTLP_TRACE_REQUEST.fromObject({
      resource_spans: [{
        scope_spans: [{
          scope: { name: "s".repeat(MIB) },
          spans: spans.map(() => ({
            trace_id: new Uint8Array(16).fill(0xab),
            span_id: new Uint8Array(8).fill(0xcd),
          })),
        }],
      }],
    })).finish(),
  );
  const jsonBody = new TextEncoder().encode(JSON.stringify({
    resourceSpans: [{
      scopeSpans: [{
        scope: request.resource_spans[0]!.scope_spans[0]!.scope,
        spans: spans.map((s) => ({ traceId: s.trace_id, spanId: s.span_id })),
      }],
    }],
  }));
  await using t = await tempStore();
  await using daemon = SpanDaemon.start(t.store);
  const run = await openInStore(t.store, "run-20261202T053000Z-0000a1e7");
  const opened = await openWith(daemon, run.writer.runId);
  await using own = receiver(t.store, run.recorder);
  const before = isolateBytes();
  let most = before;
  for (
    const [door, url, key] of [
      ["prove serve", opened.traces_url, `Bearer ${opened.ingest_key}`],
      ["a run's receiver", own.tracesUrl, own.headers.authorization!],
    ] as const
  ) {
    for (
      const [type, body] of [["application/x-protobuf", protobufBody], [
        "application/json",
        jsonBody,
      ]] as const
    ) {
      const r = await fetch(url, {
        method: "POST",
        headers: { authorization: key, "content-type": type },
        body,
      });
      const text = await r.text();
      most = Math.max(most, isolateBytes());
      tally.add(`a 1 MiB scope name in 12,000 rows (${type}) at ${door}`, {
        stopped: r.status === 400,
        recorded: /scope's name and version in each row/.test(text),
      });
      assert.equal(r.status, 400, `${door}, ${type}: ${text.slice(0, 300)}`);
    }
  }
  console.log(`a long scope name in every row: memory +${((most - before) / MIB).toFixed(0)} MiB`);
  assert.ok(most - before < 1024 * MIB, `grew by ${most - before} bytes`);
});

Deno.test("the OTLP wire decoder attack counts", () => {
  console.log(tally.line());
  assert.equal(tally.missed.length, 0, tally.line());
});

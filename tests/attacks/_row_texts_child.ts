/**
 * The cases of row_texts_attacks_test.ts, run in a process of their own with V8's `gc()` exposed: each posts
 * bodies of texts never seen before to the rows' pass (`decodeTraceRows`), whose texts' JSON is kept from body to
 * body (`row_texts.ts`), and measures what the process holds after a collection, once the rows are let go of.
 * Prints one JSON line: `{ case: bytes held }`.
 * @module
 */
import { decodeTraceRows } from "../../lib/provevi/receiver/otlp_rows.ts";
import { Texts } from "../../lib/provevi/receiver/row_texts.ts";

/** The texts a run's writer keeps from a body to the next (`received_rows.ts`). */
const texts = new Texts();
const gc = (globalThis as unknown as { gc?: () => void }).gc;
if (!gc) throw new Error("run with --v8-flags=--expose-gc");

async function held(): Promise<number> {
  gc!();
  await new Promise((resolve) => setTimeout(resolve, 100)); // buffers are freed by a task of their own
  gc!();
  const m = Deno.memoryUsage();
  return m.heapUsed + m.external;
}

const utf8 = new TextEncoder();

/** A varint's bytes. */
function varint(n: number): number[] {
  const out: number[] = [];
  for (; n >= 128; n = Math.floor(n / 128)) out.push((n & 127) | 128);
  out.push(n);
  return out;
}

/** A length-delimited field: its tag, length and bytes. */
function field(n: number, bytes: readonly number[] | Uint8Array): number[] {
  return [(n << 3) | 2, ...varint(bytes.length), ...bytes];
}

const text = (s: string) => [...utf8.encode(s)];
let fresh = 0;
/** A text no body has held before. */
const next = (prefix: string) => `${prefix}${(fresh++).toString(36).padStart(7, "0")}`;

/** A span of its own IDs, its name, a status and kept attributes, as protobuf. */
function span(i: number, o: { name: string; message?: string; kept?: readonly string[] }): number[] {
  const id = (n: number) => Array.from({ length: n }, (_, k) => (i >> (8 * (k % 4))) & 255 ^ k);
  return [
    ...field(1, id(16)),
    ...field(2, id(8)),
    ...field(5, text(o.name)),
    0x30,
    1, // kind: internal
    ...(o.message === undefined ? [] : field(15, [...field(2, text(o.message)), 0x18, 2])),
    ...(o.kept ?? []).flatMap((value, k) =>
      field(9, [
        ...field(1, text(["gen_ai.response.id", "gen_ai.tool.call.id", "gen_ai.conversation.id"][k % 3]!)),
        ...field(2, field(1, text(value))),
      ])
    ),
  ];
}

/** A request of one `ResourceSpans` holding these `ScopeSpans` (each a scope's name and its spans). */
function request(scopes: readonly { scope: string; spans: readonly number[][] }[]): Uint8Array {
  const scopeSpans = scopes.flatMap(({ scope, spans }) =>
    field(2, [
      ...field(1, [...field(1, text(scope)), ...field(2, text("1"))]),
      ...spans.flatMap((s) => field(2, s)),
    ])
  );
  return new Uint8Array(field(1, scopeSpans));
}

/** Spans of fresh names (and, as asked, fresh status messages and kept values) in one scope. */
function freshSpans(count: number, what: "name" | "message" | "kept"): Uint8Array {
  const spans = Array.from({ length: count }, (_, i) =>
    span(i, {
      name: what === "name" ? next("n") : "chat",
      ...(what === "message" ? { message: next("m") } : {}),
      ...(what === "kept" ? { kept: [next("v"), next("v"), next("v")] } : {}),
    }));
  return request([{ scope: "claude_code", spans }]);
}

/** One span in each of `count` scopes of fresh names. */
function freshScopes(count: number): Uint8Array {
  return request(
    Array.from({ length: count }, (_, i) => ({ scope: next("s"), spans: [span(i, { name: "chat" })] })),
  );
}

/**
 * The spare buffers of the pass's lines filled first, with two of the most they keep (8 MiB): a later body's
 * lines take one and give it back, or (past 8 MiB) take none, so what a case holds after is what the pass kept.
 */
function fillSpares(): void {
  const empty = (bytes: number) => {
    // a ResourceSpans of one unknown field: no spans, lines of (bytes * 2 + 4096) bytes
    const inner = field(9, new Uint8Array(bytes - 16));
    return new Uint8Array(field(1, inner));
  };
  const size = (8 * 1024 * 1024 - 4096) / 2 - 32;
  const a = decodeTraceRows(empty(size))!;
  const b = decodeTraceRows(empty(size))!;
  a.release();
  b.release();
}

/**
 * Makes the bodies and puts them through the pass, each body's lines let go of as a writer lets go of them (in a
 * function of its own: the module's await would keep its temporaries, the bodies).
 */
function pass(make: () => Uint8Array[]): void {
  for (const body of make()) {
    const rows = decodeTraceRows(body, texts);
    if (rows === null) throw new Error("the pass handed a body back");
    rows.release();
  }
}

fillSpares();
const before = await held();
const cases: Record<string, () => Uint8Array[]> = {
  "16,384 spans of fresh names (a request's most)": () => [freshSpans(16_384, "name")],
  "200,000 spans of fresh names (a receiver's pass reads a body before it counts its spans)": () => [
    freshSpans(200_000, "name"),
  ],
  "16,384 spans of fresh status messages": () => [freshSpans(16_384, "message")],
  "16,384 spans of three fresh kept values each (response and tool call IDs)":
    () => [freshSpans(16_384, "kept")],
  "16,384 scopes of fresh names": () => [freshScopes(16_384)],
  "a span of a fresh name and a fresh status message of 4 MB each": () => [
    request([{
      scope: "claude_code",
      spans: [span(1, { name: next("n").repeat(500_000), message: next("m").repeat(500_000) })],
    }]),
  ],
  "12 bodies of 6,000 spans of fresh names": () =>
    Array.from({ length: 12 }, () => freshSpans(6_000, "name")),
};
const out: Record<string, number> = {};
// what the process holds after each case, over what it held before the first: what the pass keeps of the
// bodies, this case's and what it kept of the cases before
for (const [name, bodies] of Object.entries(cases)) {
  pass(bodies);
  out[name] = await held() - before;
}
console.log(JSON.stringify(out));

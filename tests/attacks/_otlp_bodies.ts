/**
 * The bodies of the OTLP decoders' differential checks: mutated copies of a body that holds every kind of value,
 * random protobuf trees of the schema's field numbers, and random OTLP requests written by protobufjs (oneofs of
 * two members, BOMs, int64 edges, odd keys, the keys a span row keeps). Used by the fuzzer
 * (`_otlp_wire_fuzz.ts`) and by the test of the rows' one pass (`tests/provevi/receiver/otlp_rows_test.ts`).
 * @module
 */
import { OTLP_TRACE_REQUEST } from "../../lib/provevi/telemetry/otlp_proto.ts";
import { everyKindOfValue } from "../provevi/receiver/_otlp_reference.ts";

/**
 * A maker of bodies from a seed: the same seed makes the same bodies.
 *
 * @param first The seed.
 * @returns The maker: `body(round)` makes the round's body (a mutation, a tree or a request, in turn).
 */
export function otlpBodies(first: number): { body(round: number): Uint8Array } {
  const seeds = [everyKindOfValue()];
  let seed = first;
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const rnd = (n: number) => Math.floor(next() * n);
  // structured generator: random well-formed-ish protobuf trees from the schema's tags
  const varint = (n: number, out: number[]) => {
    for (;; n = Math.floor(n / 128)) {
      if (n < 128) {
        out.push(n);
        return;
      }
      out.push((n & 127) | 128);
    }
  };
  function msg(depth: number): number[] {
    const out: number[] = [];
    const k = rnd(5);
    for (let i = 0; i < k; i++) {
      const field = [1, 2, 3, 4, 5, 6, 7, 9, 11, 13, 15, rnd(20), rnd(1 << 29)][rnd(13)]!;
      const wt = [0, 1, 2, 2, 2, 5, 3][rnd(7)]!;
      varint(field * 8 + wt, out);
      if (wt === 0) {
        const b = rnd(11);
        for (let j = 0; j < b; j++) out.push(0x80 | rnd(128));
        out.push(rnd(128));
      } else if (wt === 1) { for (let j = 0; j < 8; j++) out.push(rnd(256)); }
      else if (wt === 5) { for (let j = 0; j < 4; j++) out.push(rnd(256)); }
      else if (wt === 3) {
        out.push(...(depth < 6 ? msg(depth + 1) : []));
        varint(field * 8 + 4, out);
      } else {
        const inner = depth < 6 && rnd(3)
          ? msg(depth + 1)
          : Array.from({ length: rnd(20) }, () => rnd(3) ? 0x61 + rnd(26) : rnd(256));
        varint(inner.length, out);
        out.push(...inner);
      }
    }
    return out;
  }

  const TEXTS = [
    "",
    "a",
    "service.name",
    "__proto__",
    "constructor",
    "toString",
    "hasOwnProperty",
    "\uFEFF",
    "\uFEFFx",
    "x\uFEFF",
    "ü",
    "😀",
    "\u0000",
    "é".repeat(40),
    "k".repeat(65),
    "\uFFFD",
    "gen_ai.request.model",
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
    "gen_ai.tool.name",
    "server.port",
    "claude_code.llm_request",
    "claude-sonnet-4-5",
    "chat gpt-4o",
  ];
  const pick = <T>(xs: T[]): T => xs[rnd(xs.length)]!;
  const INTS = [
    "0",
    "1",
    "-1",
    "9007199254740991",
    "9007199254740992",
    "-9007199254740993",
    "9223372036854775807",
    "-9223372036854775808",
    "562949953421311",
    "562949953421312",
    "-562949953421312",
    String(rnd(2 ** 31)),
  ];
  function anyV(d: number): Record<string, unknown> {
    const k = rnd(d > 5 ? 5 : 8);
    const v: Record<string, unknown> = {};
    const n = rnd(4) === 0 ? 2 : 1;
    for (let i = 0; i < n; i++) {
      const kind = (k + i) % 8;
      if (kind === 0) v.string_value = pick(TEXTS);
      else if (kind === 1) v.bool_value = rnd(2) === 1;
      else if (kind === 2) v.int_value = pick(INTS);
      else if (kind === 3) v.double_value = pick([0, -0, 1.5, NaN, Infinity, -Infinity, 1e308, 5e-324]);
      else if (kind === 4) v.bytes_value = new Uint8Array(rnd(4)).fill(rnd(256));
      else if (kind === 5) v.array_value = { values: Array.from({ length: rnd(4) }, () => anyV(d + 1)) };
      else if (kind === 6) v.kvlist_value = { values: kvs(d + 1) };
    }
    return v;
  }
  function kvs(d: number) {
    return Array.from(
      { length: rnd(5) },
      () => ({ key: pick(TEXTS), ...(rnd(5) ? { value: anyV(d) } : {}) }),
    );
  }
  const fixed = () =>
    pick(["0", "1", "18446744073709551615", "9007199254740993", "1764590400123456789", String(rnd(2 ** 31))]);
  function genBody(): Uint8Array {
    return OTLP_TRACE_REQUEST.encode(OTLP_TRACE_REQUEST.fromObject({
      resource_spans: Array.from({ length: 1 + rnd(2) }, () => ({
        ...(rnd(2) ? { resource: { attributes: kvs(0) } } : {}),
        scope_spans: Array.from({ length: rnd(3) }, () => ({
          ...(rnd(2) ? { scope: { name: pick(TEXTS), version: pick(TEXTS) } } : {}),
          spans: Array.from({ length: rnd(3) }, () => ({
            trace_id: new Uint8Array(pick([16, 16, 0, 15, 17])).fill(rnd(256)),
            span_id: new Uint8Array(pick([8, 8, 0, 7])).fill(rnd(256)),
            ...(rnd(2) ? { parent_span_id: new Uint8Array(pick([8, 0])).fill(rnd(256)) } : {}),
            name: pick(TEXTS),
            kind: pick([0, 1, 3, -1, 2147483647, -2147483648]),
            start_time_unix_nano: fixed(),
            end_time_unix_nano: fixed(),
            attributes: kvs(0),
            events: Array.from(
              { length: rnd(3) },
              () => ({ time_unix_nano: fixed(), name: pick(TEXTS), attributes: kvs(0) }),
            ),
            links: Array.from(
              { length: rnd(2) },
              () => ({ trace_id: new Uint8Array(16), span_id: new Uint8Array(8), attributes: kvs(0) }),
            ),
            ...(rnd(2) ? { status: { code: pick([0, 1, 2, -7]), message: pick(TEXTS) } } : {}),
          })),
        })),
      })),
    })).finish();
  }
  return {
    body(round: number): Uint8Array {
      if (round % 3 === 2) return genBody();
      if (round % 3 === 0) {
        const base = seeds[0]!;
        const copy = base.slice();
        const k = 1 + rnd(6);
        for (let j = 0; j < k; j++) copy[rnd(copy.length)] = rnd(256);
        return copy.subarray(0, rnd(4) ? copy.length : rnd(copy.length) + 1);
      }
      return new Uint8Array(msg(0));
    },
  };
}

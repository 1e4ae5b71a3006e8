import assert from "node:assert/strict";
import { decodeTraceRows } from "../../../lib/provevi/receiver/otlp_rows.ts";
import { Texts } from "../../../lib/provevi/receiver/row_texts.ts";
import { OTLP_TRACE_REQUEST } from "../../../lib/provevi/telemetry/otlp_proto.ts";
import { spanBodies } from "../../bench/_spans.ts";
import { generalRows } from "./_rows_reference.ts";

const text = new TextDecoder();

let seed = 5;
const rnd = (n: number) => Math.floor((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32 * n);
const pick = <T>(xs: readonly T[]): T => xs[rnd(xs.length)]!;
const id = (n: number) => Uint8Array.from({ length: n }, () => rnd(256));
let fresh = 0;
const next = (prefix: string) => `${prefix}${(fresh++).toString(36)}`;

/**
 * A body of `count` spans in scopes of eight spans: a third of names, messages and kept values fresh, the
 * others a few that repeat under other kinds, codes and scopes.
 */
function mixed(count: number): Uint8Array {
  const span = () => ({
    trace_id: id(16),
    span_id: id(8),
    name: rnd(3) ? pick(["chat", "chat gpt-4o", "execute_tool Read", 'a"b', "é"]) : next("n"),
    kind: pick([0, 1, 2, 3, -1]),
    status: { code: pick([0, 1, 2, -7]), message: rnd(3) ? pick(["", "ok", "a b"]) : next("m") },
    attributes: [
      { key: "gen_ai.request.model", value: { string_value: pick(["claude-sonnet-4-5", "a b", "é"]) } },
      {
        key: "gen_ai.response.id",
        value: { string_value: rnd(3) ? pick(["msg_01", "a b", "é"]) : next("msg_") },
      },
      {
        key: "gen_ai.tool.call.id",
        value: rnd(3) ? { string_value: next("toolu_") } : { int_value: rnd(9) },
      },
      { key: "gen_ai.usage.input_tokens", value: { int_value: rnd(5000) } },
    ],
  });
  return OTLP_TRACE_REQUEST.encode(OTLP_TRACE_REQUEST.fromObject({
    resource_spans: [{
      scope_spans: Array.from({ length: count / 8 }, () => ({
        scope: { name: rnd(3) ? pick(["claude_code", "", "é"]) : next("s"), version: pick(["", "1.2"]) },
        spans: Array.from({ length: 8 }, span),
      })),
    }],
  })).finish();
}

Deno.test("the rows' pass writes the general way's lines when its texts pass their bound in the middle of a body, and in the bodies after", () => {
  // 12,000 spans of fresh texts and repeated ones: the texts kept are emptied twice or more in each body
  const bodies = [mixed(12_000), mixed(12_000), ...spanBodies(2), mixed(800)];
  const texts = new Texts(); // a writer's, kept from a body to the next
  for (const [i, body] of bodies.entries()) {
    const rows = decodeTraceRows(body, texts);
    assert.ok(rows !== null, `body ${i}: the pass takes it`);
    assert.equal(text.decode(rows.lines), generalRows(body)!.lines, `body ${i}`);
    rows.release();
  }
});

Deno.test("a name under kinds and scopes in turn, and a message under codes in turn, are made once each, not at each span", () => {
  // a batch's error spans (code 2, no message) among its others, an HTTP name as client and server: before, the
  // last of each name or message only was kept, and each span in turn made its bytes again
  const texts = new Texts();
  const [a, b] = [texts.scope("claude_code", "1"), texts.scope("http", "")];
  const first = [texts.lead("GET", 2, a), texts.lead("GET", 1, a), texts.lead("GET", 2, b)];
  const statuses = [texts.status(0, ""), texts.status(2, ""), texts.status(-7, "")];
  for (let round = 0; round < 3; round++) {
    assert.equal(texts.lead("GET", 2, a), first[0]);
    assert.equal(texts.lead("GET", 1, a), first[1]);
    assert.equal(texts.lead("GET", 2, b), first[2]);
    statuses.forEach((s, i) => assert.equal(texts.status([0, 2, -7][i]!, ""), s));
  }
  assert.equal(
    text.decode(first[2]),
    '"GET","kind":2,"scope":{"name":"http","version":null},"start_time":"',
  );
  assert.equal(text.decode(statuses[2]), '","status":{"code":-7,"message":null},"attributes":{');
});

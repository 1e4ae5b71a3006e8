import assert from "node:assert/strict";
import { checkTraceRows, decodeTraceRows } from "../../../lib/provevi/receiver/otlp_rows.ts";
import { receiver } from "../../../lib/provevi/receiver/run_receiver.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { findRun } from "../../../lib/provevi/runs/find_run.ts";
import { readEventsText } from "../../../lib/provevi/evidence/read_events.ts";
import { indexedSpans } from "../../../lib/provevi/store/trace.ts";
import { OTLP_TRACE_REQUEST } from "../../../lib/provevi/telemetry/otlp_proto.ts";
import { EvidenceRecorder } from "../../../lib/provrun/run/recorder.ts";
import { spanBodies } from "../../bench/_spans.ts";
import { otlpBodies } from "../../attacks/_otlp_bodies.ts";
import { removeWritable } from "../../_files.ts";
import { everyKindOfValue } from "./_otlp_reference.ts";
import { generalRows, rowsDiffer } from "./_rows_reference.ts";

const text = new TextDecoder();

/** Asserts that the one pass took the body and made the general way's lines, spans and services. */
function assertSameRows(body: Uint8Array, what: string): void {
  const direct = decodeTraceRows(body);
  const general = generalRows(body);
  assert.ok(general !== null, `${what}: the general way takes it`);
  assert.ok(direct !== null, `${what}: the one pass takes it`);
  assert.equal(text.decode(direct.lines), general.lines, what);
  assert.equal(direct.spans, general.spans, what);
  assert.deepEqual([...direct.services].sort(), general.services, what);
}

let seed = 11;
const rnd = (n: number) => Math.floor((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32 * n);
const pick = <T>(xs: readonly T[]): T => xs[rnd(xs.length)]!;

const KEYS = [
  "gen_ai.request.model",
  "gen_ai.response.model",
  "gen_ai.usage.input_tokens",
  "gen_ai.usage.output_tokens",
  "gen_ai.usage.cost",
  "gen_ai.tool.name",
  "gen_ai.response.id",
  "gen_ai.tool.call.id",
  "server.port",
  "error.type",
  "session.id",
  "gen_ai.prompt",
  "tool.name",
  "__proto__",
  "",
];
const TEXTS = [
  "claude-sonnet-4-5",
  "gpt-4o",
  "Read",
  "a prompt with words",
  "sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
  "ü",
  "😀",
  'a "quote" and \\ and \n',
  "\u0000\u001f",
  "\uFEFFbom",
  "",
  "x".repeat(250),
];
const INTS = ["0", "1", "-1", "9007199254740991", "9007199254740993", "-9223372036854775808", "1234"];
/** Times around every edge of the fast way: under a second, 2^53, 9e18 and the top of 64 bits. */
const TIMES = [
  "0",
  "1",
  "999999999",
  "1000000000",
  "9007199254740991",
  "9007199254740993",
  "1764590400123456789",
  "1764590400999999999",
  // one second whose start is under the high 32 bits before (a time's low bits are less than its nanoseconds),
  // and one whose nanoseconds run across the low 32 bits' end
  "1760936591360000005",
  "1760936591860000000",
  "1760936595000000000",
  "1760936595654967295",
  "1760936595654967297",
  "8999999999999999999",
  "9000000000000000000",
  "18446744073709551615",
];

function value(depth: number): Record<string, unknown> {
  const kind = rnd(depth > 2 ? 5 : 8);
  if (kind === 0 || kind === 1) return { string_value: pick(TEXTS) };
  if (kind === 2) return { int_value: pick(INTS) };
  if (kind === 3) return { double_value: pick([0, -0, 1.5, NaN, Infinity, -Infinity, 1e21, 5e-324]) };
  if (kind === 4) return { bool_value: rnd(2) === 1 };
  if (kind === 5) return { bytes_value: new Uint8Array([rnd(256), rnd(256)]) };
  if (kind === 6) return { array_value: { values: Array.from({ length: rnd(3) }, () => value(depth + 1)) } };
  return { kvlist_value: { values: [{ key: pick(KEYS), value: value(depth + 1) }] } };
}

const id = (n: number) => Uint8Array.from({ length: n }, () => rnd(256));

/** A request that real exporters could send: IDs of their lengths, every kind of value, kept keys and not. */
function request(): Uint8Array {
  const span = () => ({
    trace_id: id(16),
    span_id: id(8),
    ...(rnd(2) ? { parent_span_id: id(8) } : {}),
    name: pick(["chat gpt-4o", "claude_code.tool", "execute_tool Read", "a span\nname", "", "x".repeat(300)]),
    kind: pick([0, 1, 2, 3, 5, 9, -1]),
    start_time_unix_nano: pick(TIMES),
    end_time_unix_nano: pick(TIMES),
    attributes: Array.from({ length: rnd(7) }, () => ({ key: pick(KEYS), value: value(0) })),
    events: Array.from(
      { length: rnd(2) },
      () => ({ time_unix_nano: pick(TIMES), name: "e", attributes: [] }),
    ),
    links: Array.from({ length: rnd(3) }, () => ({ trace_id: id(pick([16, 0, 3])), span_id: id(8) })),
    ...(rnd(2) ? { status: { code: pick([0, 1, 2, -7]), message: pick(TEXTS) } } : {}),
  });
  return OTLP_TRACE_REQUEST.encode(OTLP_TRACE_REQUEST.fromObject({
    resource_spans: Array.from({ length: 1 + rnd(2) }, () => ({
      ...(rnd(3) ? { resource: { attributes: [{ key: "service.name", value: value(2) }] } } : {}),
      scope_spans: Array.from({ length: 1 + rnd(2) }, () => ({
        ...(rnd(3) ? { scope: { name: pick(TEXTS), version: pick(["", "1.2.3", "ü"]) } } : {}),
        spans: Array.from({ length: 1 + rnd(4) }, span),
      })),
    })),
  })).finish();
}

Deno.test("the one pass writes the lines the general way wrote for the OpenTelemetry SDK's bodies", () => {
  for (const [i, body] of spanBodies(3).entries()) assertSameRows(body, `SDK body ${i}`);
  // its IDs are not OTLP's lengths: both refuse it
  assert.equal(rowsDiffer(everyKindOfValue()), null);
  assert.equal(generalRows(everyKindOfValue()), null);
});

Deno.test("a buffer of lines let go of is taken by the next body's lines, which are whole, whatever the sizes", () => {
  const [big, small] = spanBodies(2).map((b, i) => i ? b.subarray(0, 0) : b);
  const expected = (body: Uint8Array) => decodeTraceRows(body)!.lines.slice(); // not released: a buffer of its own
  const wants = [big!, small!, big!].map(expected);
  const first = decodeTraceRows(big!)!;
  const buffer = first.lines.buffer;
  first.release();
  first.release(); // once only: a second call gives nothing back
  const bodies = [big!, small!, big!];
  const taken = bodies.map((body) => decodeTraceRows(body)!);
  assert.equal(taken[0]!.lines.buffer, buffer);
  assert.notEqual(taken[1]!.lines.buffer, buffer);
  taken.forEach((t, i) => assert.deepEqual(t.lines, wants[i]));
});

Deno.test("the one pass writes the general way's lines for generated requests of every value, time and name", () => {
  for (let i = 0; i < 1500; i++) assertSameRows(request(), `generated request ${i}`);
});

Deno.test("the one pass takes no body the general way refuses, and writes the same lines for those it takes", () => {
  const bodies = otlpBodies(5);
  const kinds: Record<string, number> = {};
  let took = 0;
  for (let round = 0; round < 6000; round++) {
    const body = bodies.body(round);
    const differ = rowsDiffer(body);
    if (differ !== null) kinds[differ] = (kinds[differ] ?? 0) + 1;
    if (decodeTraceRows(body) !== null) took++;
  }
  assert.deepEqual(kinds, {});
  assert.ok(took > 1000, `the pass took ${took} of the mutated and random bodies`);
});

Deno.test("the one pass hands back a body of empty spans past the decoder's memory count, as the decoder refuses it", () => {
  const empty = new Uint8Array(4 * 1024 * 1024);
  // one ResourceSpans of one ScopeSpans holding 2-byte empty spans (field 2, length 0)
  const inner = new Uint8Array(empty.length - 16);
  for (let i = 0; i < inner.length; i += 2) (inner[i] = 0x12, inner[i + 1] = 0);
  const scopeSpans = [0x12, ...varint(inner.length)];
  const resourceSpans = [0x0a, ...varint(scopeSpans.length + inner.length)];
  const body = new Uint8Array([...resourceSpans, ...scopeSpans, ...inner]);
  assert.equal(decodeTraceRows(body), null);
  assert.equal(generalRows(body), null);
});

Deno.test("the one pass hands back a body whose rows would be far bigger than it (a long scope name in each row)", () => {
  const body = OTLP_TRACE_REQUEST.encode(OTLP_TRACE_REQUEST.fromObject({
    resource_spans: [{
      scope_spans: [{
        scope: { name: "s".repeat(100_000) },
        spans: Array.from({ length: 200 }, () => ({ trace_id: id(16), span_id: id(8), name: "chat" })),
      }],
    }],
  })).finish();
  assert.equal(decodeTraceRows(body), null);
  assert.equal(generalRows(body)!.spans, 200); // the general way takes it
  const small = OTLP_TRACE_REQUEST.encode(OTLP_TRACE_REQUEST.fromObject({
    resource_spans: [{
      scope_spans: [{
        scope: { name: "s".repeat(1000) },
        spans: Array.from({ length: 200 }, () => ({ trace_id: id(16), span_id: id(8), name: "chat" })),
      }],
    }],
  })).finish();
  assertSameRows(small, "a scope name of 1,000 characters in 200 rows");
});

/** Asserts that the check took only a body the general way takes, with its count of spans and its services. */
function assertCheckAgrees(body: Uint8Array, what: string): boolean {
  const checked = checkTraceRows(body);
  if (checked === null) return false;
  const general = generalRows(body);
  assert.ok(general !== null, `${what}: the check took a body the general way refuses`);
  assert.equal(checked.spans, general.spans, what);
  assert.deepEqual([...checked.services].sort(), general.services, what);
  return true;
}

Deno.test("the check (prove serve's, whose rows the run's writer makes) takes only bodies the general way takes, with their spans and services", () => {
  for (const [i, body] of spanBodies(3).entries()) assert.ok(assertCheckAgrees(body, `SDK body ${i}`));
  for (let i = 0; i < 1500; i++) {
    const body = request();
    const took = assertCheckAgrees(body, `generated request ${i}`);
    const rows = decodeTraceRows(body);
    if (rows !== null) assert.ok(took, `generated request ${i}: the one pass takes it, the check does not`);
    rows?.release();
  }
  const bodies = otlpBodies(9);
  let took = 0;
  for (let round = 0; round < 6000; round++) {
    if (assertCheckAgrees(bodies.body(round), `body ${round}`)) took++;
  }
  assert.ok(took > 1000, `the check took ${took} of the mutated and random bodies`);
});

Deno.test("the check hands back what the general way refuses past its bounds: empty spans past the memory count, a long scope name in each row", () => {
  const inner = new Uint8Array(4 * 1024 * 1024 - 16);
  for (let i = 0; i < inner.length; i += 2) (inner[i] = 0x12, inner[i + 1] = 0);
  const scopeSpans = [0x12, ...varint(inner.length)];
  const resourceSpans = [0x0a, ...varint(scopeSpans.length + inner.length)];
  assert.equal(checkTraceRows(new Uint8Array([...resourceSpans, ...scopeSpans, ...inner])), null);
  const long = OTLP_TRACE_REQUEST.encode(OTLP_TRACE_REQUEST.fromObject({
    resource_spans: [{
      scope_spans: [{
        scope: { name: "s".repeat(200_000) },
        spans: Array.from({ length: 200 }, () => ({ trace_id: id(16), span_id: id(8), name: "chat" })),
      }],
    }],
  })).finish();
  assert.equal(checkTraceRows(long), null); // 40 million characters of scope in 200 rows: the general way refuses
});

function varint(n: number): number[] {
  const out: number[] = [];
  for (; n >= 128; n = Math.floor(n / 128)) out.push((n & 127) | 128);
  out.push(n);
  return out;
}

Deno.test("a reader of a run's spans makes the general way's lines from its protobuf payloads, also for a scope after its spans", async () => {
  const runs = await Deno.makeTempDir({ prefix: "provevi-rows-" });
  try {
    const store = new FileStore({ runs });
    const writer = await store.openRun("run-20261202T050000Z-0000abcd");
    const recorder = new EvidenceRecorder(writer, { actor: "ada", mode: "strict" });
    await recorder.record({ type: "run_created", component: "RunContext", data: {} });
    const sdk = spanBodies(1)[0]!;
    // a ScopeSpans whose scope comes after its span: the pass hands it back, the general way writes its row
    const late = OTLP_TRACE_REQUEST.encode(OTLP_TRACE_REQUEST.fromObject({
      resource_spans: [{ scope_spans: [{ spans: [{ trace_id: id(16), span_id: id(8), name: "chat" }] }] }],
    })).finish();
    const scope = OTLP_TRACE_REQUEST.encode(OTLP_TRACE_REQUEST.fromObject({
      resource_spans: [{ scope_spans: [{ scope: { name: "late", version: "2" } }] }],
    })).finish();
    const lateScope = mergeScopeSpans(late, scope);
    assert.equal(decodeTraceRows(lateScope), null);
    assert.ok(generalRows(lateScope)!.lines.includes('"scope":{"name":"late","version":"2"}'));
    {
      await using spans = receiver(store, recorder);
      for (const body of [sdk, lateScope] as Uint8Array<ArrayBuffer>[]) {
        const r = await fetch(spans.tracesUrl, {
          method: "POST",
          headers: { ...spans.headers, "content-type": "application/x-protobuf" },
          body,
        });
        assert.equal(r.status, 200, await r.text());
      }
    }
    await recorder.seal();
    // the receiver wrote no rows of them: a reader makes them
    await assert.rejects(Deno.lstat(`${writer.folder}/spans.jsonl`), Deno.errors.NotFound);
    const record = await findRun(writer.folder);
    const rows = await indexedSpans(record, readEventsText((await record.eventsText())!).events);
    const want = (generalRows(sdk)!.lines + generalRows(lateScope)!.lines).split("\n").filter(Boolean);
    assert.deepEqual(rows, want.map((l) => JSON.parse(l)));
  } finally {
    await removeWritable(runs);
  }
});

/**
 * One request whose only ScopeSpans holds the first body's spans and then the second body's scope: the bytes of
 * the two ScopeSpans messages joined (protobuf merges a message's fields when it comes twice).
 */
function mergeScopeSpans(spans: Uint8Array, scope: Uint8Array): Uint8Array<ArrayBuffer> {
  const inner = (body: Uint8Array) => {
    // resource_spans (1) > scope_spans (2): each a tag and a one-byte length, in these small bodies
    assert.ok(body[1]! < 128 && body[3]! < 128);
    return body.subarray(4, 4 + body[3]!);
  };
  const joined = [...inner(spans), ...inner(scope)];
  const scopeSpans = [0x12, ...varint(joined.length), ...joined];
  return new Uint8Array([0x0a, ...varint(scopeSpans.length), ...scopeSpans]);
}

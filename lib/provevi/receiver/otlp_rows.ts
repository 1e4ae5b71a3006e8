/**
 * An OTLP/protobuf `ExportTraceServiceRequest` read straight into the lines of the run's span index
 * (`spans.jsonl`): one pass over the body writes each span's row as UTF-8 bytes into one growing buffer. The
 * general path (`otlp_wire.ts` makes each span an object, `span_events.ts` makes it a row, `JSON.stringify` a
 * line, `TextEncoder` its bytes) spent as much time a span as the decode did, on objects the row never shows: the
 * attributes it leaves out, the events, the hex of IDs, the nanoseconds as text.
 *
 * The pass reads the body with the same cursor, the same checks and the same count of memory as the general
 * decoder, so it accepts exactly the bodies that one does; it writes the bytes `JSON.stringify` writes for the
 * same rows (`tests/provevi/receiver/otlp_rows_test.ts` compares both on SDK, generated and mutated bodies). A
 * body it does not read whole, or reads in a shape real exporters do not send (a scope after its spans, a
 * repeated attribute key that changes from a body to a name), is handed back, and the caller takes the general
 * path: its answer, and its error for a bad body, are the answer.
 * @module
 */
import {
  anyValue,
  BYTES,
  COST,
  expect,
  FIXED64,
  MAX_ID,
  type OtlpValue,
  resource,
  scope,
  spanStatus,
  VARINT,
  Wire,
} from "./otlp_wire.ts";
import { json, nanoTime } from "./span_events.ts";
import { attributeLevel, NAME_KEYS, USAGE_KEYS } from "../telemetry/attributes.ts";
import { plainName } from "../telemetry/plain_name.ts";
import { Texts } from "./row_texts.ts";
import { formatMicros } from "../evidence/event.ts";
import { Lines } from "./row_bytes.ts";
import { skipAnyValue, skipEvent, skipKeyValue } from "./otlp_skip.ts";

/** A request's spans as the lines of `spans.jsonl`. */
export interface RowLines {
  /** The rows, one JSON object a line, each ending in a newline, as UTF-8. */
  lines: Uint8Array;
  /** How many spans (and lines). */
  spans: number;
  /** The plain names of the services that sent them (`service.name`), each once. */
  services: Set<string>;
  /** Lets go of the lines' bytes once they are written, for the next body's lines (optional: else collected). */
  release(): void;
}

const utf8 = new TextEncoder();
const bytes = (text: string) => utf8.encode(text);
/** The row's start, its two IDs to fill (at 13 and 58), up to its parent's ID. */
const HEAD = `{"trace_id":"${"0".repeat(32)}","span_id":"${"0".repeat(16)}","parent_span_id":`;
/** The parts of a row that never change, each written with one copy. */
const PART = {
  head: bytes(HEAD),
  /** The head of a row without a parent, through the key of its name. */
  headNull: bytes(`${HEAD}null,"name":`),
  parentEnd: bytes('","name":'),
  end: bytes('","end_time":"'),
  /** The end of the attributes (their opening brace ends the status's part) and of a row without links. */
  noLinks: bytes('},"events":[],"links":[]}\n'),
  /** The end of the attributes and the start of the links. */
  links: bytes('},"events":[],"links":['),
  close: bytes("]}\n"),
  linkSpan: bytes('","span_id":"'),
  linkEnd: bytes('"}'),
  traceId: bytes('{"trace_id":"'),
} as const;
/** Where the row's head holds its trace ID and span ID. */
const AT_TRACE = 13;
const AT_SPAN = 58;
const COMMA = 0x2c;
/** The keys a row keeps: only their values are made objects; the others are read and left. */
const KEPT: ReadonlySet<string> = new Set([...NAME_KEYS, ...USAGE_KEYS]);
/** The kept keys, by the length of their UTF-8 bytes: each with its bytes. */
const KEPT_BY_LENGTH: readonly (readonly { key: string; bytes: Uint8Array }[] | undefined)[] = (() => {
  const out: { key: string; bytes: Uint8Array }[][] = [];
  for (const key of KEPT) {
    const utf8 = bytes(key);
    (out[utf8.length] ??= []).push({ key, bytes: utf8 }); // by the bytes' length: a key need not be ASCII
  }
  return out;
})();
/**
 * The kept keys whose values are new in each span (a response's ID, a tool call's): written as they come, not kept
 * from body to body (a body of 512 spans of fresh response IDs took twice the time when each was kept).
 */
const FRESH_KEYS: ReadonlySet<string> = new Set(["gen_ai.response.id", "gen_ai.tool.call.id"]);
/** 9e18 ns, the first time the general path writes by its slow way, as the high and low 32 bits. */
const SLOW_HI = 0x7ce66c50;
const SLOW_LO = 0xe2840000;
const TWO_32 = 4294967296;

/** The places of keys in the order of a canonical line (`<`, as `sortedKeys` orders them). */
function sortedOrder(keys: readonly string[]): number[] | null {
  let sorted = true;
  for (let i = 1; i < keys.length && sorted; i++) sorted = keys[i - 1]! < keys[i]!;
  if (sorted) return null;
  return keys.map((_, i) => i).sort((a, b) => keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : 0);
}

/** No `Status` on the wire: code 0, no message. */
const NO_STATUS: Readonly<{ code: number; message: string }> = Object.freeze({ code: 0, message: "" });
/**
 * The last second a time was written in, and its text up to the microseconds (times repeat their second); and
 * where that second lies in the low 32 bits of nanoseconds under the same high 32 (`lo0` to `lo1`, empty when
 * the second starts under another), so that a time of the same second needs no division.
 */
const prefix = { second: -1, bytes: new Uint8Array(), hi: -1, lo0: 0, lo1: 0 };

/** The lines of a pass that writes none (a check): never written to. */
const NO_LINES = new Lines(0);

/** The body needs the general path: thrown inside the pass, never out of it. */
class General extends Error {}

/** One span as the pass keeps it until its end: where its IDs are in the body, and the few values a row shows. */
interface SpanState {
  trace: [number, number];
  span: [number, number];
  parent: [number, number];
  name: string;
  kind: number;
  /** The low and high 32 bits of the start and end times. */
  times: [number, number, number, number];
  /** The kept attributes' keys and values, a later one of a key in the place of the earlier. */
  keys: string[];
  values: OtlpValue[];
  /** Each link's trace ID and span ID, as four positions in the body. */
  links: number[];
  status: Readonly<{ code: number; message: string }>;
}

/** The pass over one body. */
class RowPass {
  readonly wire: Wire;
  readonly out: Lines;
  readonly services = new Set<string>();
  spans = 0;
  readonly #span: SpanState = {
    trace: [0, 0],
    span: [0, 0],
    parent: [0, 0],
    name: "",
    kind: 0,
    times: [0, 0, 0, 0],
    keys: [],
    values: [],
    links: [],
    status: { code: 0, message: "" },
  };

  /** Characters of scope names and versions the rows would repeat, one a span (counted by a check only). */
  repeated = 0;

  /**
   * @param body The request's bytes.
   * @param emit Whether to write the rows (else only check the body as the pass would, and count the spans).
   * @param texts The texts' JSON kept from a body to the next (a writer's), or none.
   */
  constructor(readonly body: Uint8Array, readonly emit = true, readonly texts = new Texts()) {
    this.wire = new Wire(body);
    this.out = emit ? new Lines(body.length) : NO_LINES;
  }

  /** The request's `resource_spans`, in order. */
  request(): void {
    const wire = this.wire;
    const end = this.body.length;
    wire.fields(end, (n, t) => {
      if (n !== 1) return false;
      expect(wire, t, BYTES, "ExportTraceServiceRequest.resource_spans");
      this.resourceSpans(wire.delimited(end));
      return true;
    });
  }

  /** A `ResourceSpans`: its resource (wherever it stands) names the service of its spans. */
  resourceSpans(end: number): void {
    const wire = this.wire;
    let attrs: Record<string, OtlpValue> = {};
    let spans = 0;
    wire.fields(end, (n, t) => {
      if (n === 1) {
        (expect(wire, t, BYTES, "ResourceSpans.resource"), attrs = resource(wire, wire.delimited(end)));
      } else if (n === 2) {
        expect(wire, t, BYTES, "ResourceSpans.scope_spans");
        spans += this.scopeSpans(wire.delimited(end));
      } else return false;
      return true;
    });
    const service = attrs["service.name"];
    if (spans > 0 && typeof service === "string" && plainName(service)) this.services.add(service);
  }

  /** A `ScopeSpans`: its scope, then its spans (a scope after a span goes the general way). */
  scopeSpans(end: number): number {
    const wire = this.wire;
    let part = this.texts.scope("", "");
    let scopeLength = 0;
    let spans = 0;
    wire.fields(end, (n, t) => {
      if (n === 1) {
        expect(wire, t, BYTES, "ScopeSpans.scope");
        if (spans > 0) throw new General("a scope after its spans");
        const s = scope(wire, wire.delimited(end));
        if (this.emit) part = this.texts.scope(s.name, s.version);
        scopeLength = s.name.length + s.version.length;
      } else if (n === 2) {
        expect(wire, t, BYTES, "ScopeSpans.spans");
        this.span(wire.delimited(end));
        if (this.emit) this.row(part);
        else (this.ids(), this.repeated += scopeLength);
        spans++;
      } else return false;
      return true;
    });
    this.spans += spans;
    return spans;
  }

  /** An ID's place in the body, checked as `Wire.hex` checks it. */
  id(end: number, into: [number, number]): void {
    const wire = this.wire;
    const stop = wire.delimited(end);
    if (stop - wire.pos > MAX_ID) wire.fail(`an ID of ${stop - wire.pos} bytes (OTLP's are 16 and 8)`);
    into[0] = wire.pos;
    into[1] = stop;
    wire.pos = stop;
  }

  /** A `Span`'s fields, kept in the span state. */
  span(end: number): void {
    const wire = this.wire;
    wire.spend(COST.span);
    const s = this.#span;
    s.trace[0] =
      s.trace[1] =
      s.span[0] =
      s.span[1] =
      s.parent[0] =
      s.parent[1] =
        0;
    s.name = "";
    s.kind = 0;
    s.times[0] =
      s.times[1] =
      s.times[2] =
      s.times[3] =
        0;
    s.keys.length = 0;
    s.values.length = 0;
    s.links.length = 0;
    s.status = NO_STATUS;
    while (wire.pos < end) {
      const tag = wire.tag();
      const n = tag >>> 3;
      const t = tag & 7;
      if (n === 1) (check(wire, t, BYTES, "trace_id"), this.id(end, s.trace));
      else if (n === 2) (check(wire, t, BYTES, "span_id"), this.id(end, s.span));
      else if (n === 4) (check(wire, t, BYTES, "parent_span_id"), this.id(end, s.parent));
      else if (n === 5) {
        check(wire, t, BYTES, "name");
        if (this.emit) s.name = wire.string(end);
        else wire.pos = wire.delimited(end); // a check makes no text
      } else if (n === 6) (check(wire, t, VARINT, "kind"), s.kind = wire.uint32() | 0);
      else if (n === 7) {
        (check(wire, t, FIXED64, "start_time_unix_nano"),
          s.times[0] = wire.fixed32(),
          s.times[1] = wire.fixed32());
      } else if (n === 8) {
        (check(wire, t, FIXED64, "end_time_unix_nano"),
          s.times[2] = wire.fixed32(),
          s.times[3] = wire.fixed32());
      } else if (n === 9) {
        check(wire, t, BYTES, "attributes");
        if (this.emit) this.attribute(wire.delimited(end));
        else skipKeyValue(wire, wire.delimited(end)); // read and checked as a kept one is, with its memory
      } else if (n === 11) (check(wire, t, BYTES, "events"), skipEvent(wire, wire.delimited(end)));
      else if (n === 13) (check(wire, t, BYTES, "links"), this.link(wire.delimited(end)));
      else if (n === 15) (check(wire, t, BYTES, "status"), s.status = spanStatus(wire, wire.delimited(end)));
      else if (n === 0) wire.fail("a field numbered 0");
      else wire.skip(t, end, n);
    }
    if (wire.pos !== end) wire.fail("a message runs past its end");
  }

  /**
   * A span's `KeyValue`: a value the row keeps is made an object (as the general decoder makes it), any other
   * is read and checked, with the same count of memory, and left.
   */
  attribute(end: number): void {
    const wire = this.wire;
    let key: string | null = null;
    let value: OtlpValue = null;
    let left = false;
    while (wire.pos < end) {
      const tag = wire.tag();
      const n = tag >>> 3;
      const t = tag & 7;
      if (n === 1) (expect(wire, t, BYTES, "KeyValue.key"), key = this.key(end));
      else if (n === 2) {
        expect(wire, t, BYTES, "KeyValue.value");
        const stop = wire.delimited(end);
        left = key !== null && key === ""; // key() spells only kept keys
        if (left) skipAnyValue(wire, stop);
        else value = anyValue(wire, stop);
      } else if (n === 0) wire.fail("a field numbered 0");
      else wire.skip(t, end, n);
    }
    if (wire.pos !== end) wire.fail("a message runs past its end");
    if (key === null || key === "") return;
    if (left) throw new General("a kept key after its value was left");
    const { keys, values } = this.#span;
    const at = keys.indexOf(key!);
    if (at < 0) (keys.push(key!), values.push(value));
    else values[at] = value;
  }

  /**
   * A key: the kept key its bytes spell (ASCII, so the same bytes are the only ones that decode to it), else
   * "", which the row does not keep either. No text is made of it.
   */
  key(end: number): string {
    const wire = this.wire;
    const body = this.body;
    const stop = wire.delimited(end);
    const start = wire.pos;
    wire.pos = stop;
    const length = stop - start;
    const candidates = length < KEPT_BY_LENGTH.length ? KEPT_BY_LENGTH[length] : undefined;
    if (candidates === undefined) return "";
    for (const { key, bytes } of candidates) {
      // from the end: kept keys share their starts (gen_ai.)
      let i = length - 1;
      while (i >= 0 && bytes[i] === body[start + i]) i--;
      if (i < 0) return key;
    }
    return "";
  }

  /** A span's `Link`: where its IDs are; its attributes are read and left. */
  link(end: number): void {
    const wire = this.wire;
    wire.spend(COST.eventOrLink);
    const ids: [number, number, number, number] = [0, 0, 0, 0];
    const at: [number, number] = [0, 0];
    wire.fields(end, (n, t) => {
      if (n === 1) {
        (expect(wire, t, BYTES, "Link.trace_id"), this.id(end, at), ids[0] = at[0], ids[1] = at[1]);
      } else if (n === 2) {
        (expect(wire, t, BYTES, "Link.span_id"), this.id(end, at), ids[2] = at[0], ids[3] = at[1]);
      } else if (n === 4) (expect(wire, t, BYTES, "an attribute"), skipKeyValue(wire, wire.delimited(end)));
      else return false;
      return true;
    });
    this.#span.links.push(...ids);
  }

  /** Checks the IDs of the span just read: IDs of the wrong length go the general way, which refuses them. */
  ids(): void {
    const s = this.#span;
    const parent = s.parent[1] - s.parent[0];
    if (s.trace[1] - s.trace[0] !== 16 || s.span[1] - s.span[0] !== 8 || (parent !== 0 && parent !== 8)) {
      throw new General("an ID of the wrong length");
    }
  }

  /** Writes the row of the span just read (its IDs checked first). */
  row(scope: Uint8Array): void {
    this.ids();
    const s = this.#span;
    const parent = s.parent[1] - s.parent[0];
    const out = this.out;
    const at = out.n;
    if (parent === 0) out.put(PART.headNull);
    else (out.put(PART.head), out.byte(0x22), out.hex(this.body, s.parent), out.put(PART.parentEnd));
    out.hexAt(this.body, { from: s.trace, at: at + AT_TRACE });
    out.hexAt(this.body, { from: s.span, at: at + AT_SPAN });
    out.put(this.texts.lead(s.name, Math.max(0, s.kind - 1), scope));
    this.time(s.times[0], s.times[1]);
    out.put(PART.end);
    this.time(s.times[2], s.times[3]);
    out.put(this.texts.status(s.status.code, s.status.message));
    this.attributes(s);
    if (s.links.length === 0) return out.put(PART.noLinks);
    out.put(PART.links);
    this.links(s.links);
    out.put(PART.close);
  }

  /**
   * The kept attributes as `rowAttributes` makes them, in the order of their keys: each made JSON, and left out
   * when its value is a body. A text's JSON is kept with its key's (`Texts.kept`), unless its key's values are new
   * in each span ({@linkcode FRESH_KEYS}). Their braces are the status's part and the links'.
   */
  attributes({ keys, values }: SpanState): void {
    const out = this.out;
    const order = keys.length < 2 ? null : sortedOrder(keys);
    let first = true;
    for (let i = 0; i < keys.length; i++) {
      const j = order === null ? i : order[i]!;
      const key = keys[j]!;
      const value = json(values[j]!);
      const kept = typeof value === "string" && !FRESH_KEYS.has(key);
      const text = kept ? this.texts.kept(key, value as string) : null;
      if (text === null && (kept || attributeLevel(key, value) === "bodies")) continue;
      if (!first) out.byte(COMMA);
      first = false;
      if (text !== null) out.put(text);
      else {
        out.put(this.texts.key(key));
        if (typeof value === "number") out.number(value);
        else out.text(JSON.stringify(value));
      }
    }
  }

  links(ids: readonly number[]): void {
    const out = this.out;
    for (let i = 0; i < ids.length; i += 4) {
      if (i > 0) out.byte(COMMA);
      out.put(PART.traceId);
      out.hex(this.body, [ids[i]!, ids[i + 1]!]);
      out.put(PART.linkSpan);
      out.hex(this.body, [ids[i + 2]!, ids[i + 3]!]);
      out.put(PART.linkEnd);
    }
  }

  /**
   * A time as `nanoTime` writes it, from the 64 bits of nanoseconds: the usual times (a second to 9e18 ns) from
   * the prefix of their second and six digits of microseconds, without a text or a BigInt.
   */
  time(lo: number, hi: number): void {
    const out = this.out;
    if (hi === prefix.hi && lo >= prefix.lo0 && lo < prefix.lo1) {
      // the second written last (a usual one, so this time is usual too): its nanoseconds are lo - lo0
      out.put(prefix.bytes);
      return this.micros(lo - prefix.lo0);
    }
    const usual = (hi > 0 || lo >= 1e9) && (hi < SLOW_HI || (hi === SLOW_HI && lo < SLOW_LO));
    if (!usual) {
      const nanos = hi < 0x200000 ? String(hi * TWO_32 + lo) : ((BigInt(hi) << 32n) | BigInt(lo)).toString();
      return out.ascii(nanoTime(nanos));
    }
    // seconds and the nanoseconds left, by long division in 16-bit pieces: each step stays under 2^46
    let second = Math.floor((hi >>> 16) / 1e9);
    let rest = (hi >>> 16) - second * 1e9;
    for (let i = 0; i < 3; i++) {
      const at = rest * 65536 + (i === 0 ? hi & 0xffff : i === 1 ? lo >>> 16 : lo & 0xffff);
      const q = Math.floor(at / 1e9);
      rest = at - q * 1e9;
      second = second * 65536 + q;
    }
    if (second !== prefix.second) {
      prefix.bytes = bytes(formatMicros(second * 1_000_000).slice(0, 20)); // "YYYY-MM-DDThh:mm:ss."
      prefix.second = second;
    }
    // the second's first nanosecond under the same high 32 bits, when it is there (rest < 2^32 then)
    prefix.hi = lo >= rest ? hi : -1;
    prefix.lo0 = lo - rest;
    prefix.lo1 = Math.min(lo - rest + 1e9, TWO_32);
    out.put(prefix.bytes);
    this.micros(rest);
  }

  /** The six digits of microseconds of a second's `rest` nanoseconds, and the `Z`. */
  micros(rest: number): void {
    const out = this.out;
    out.room(7);
    const buf = out.buf;
    const n = out.n;
    // under 10^9, so whole 32-bit numbers throughout (a remainder of doubles is a call, of these one step)
    let micros = (rest / 1000) | 0;
    for (let i = 5; i >= 0; i--) {
      const next = (micros / 10) | 0;
      buf[n + i] = 0x30 + micros - next * 10;
      micros = next;
    }
    buf[n + 6] = 0x5a; // Z
    out.n = n + 7;
  }
}

/** Checks that a span's field came with the wire type its schema gives. */
function check(wire: Wire, wireType: number, want: number, what: string): void {
  if (wireType !== want) expect(wire, wireType, want, `Span.${what}`);
}

/**
 * A request's spans as the lines of the run's span index, read in one pass, or null when the body is to go the
 * general way (`decodeTraceRequest`, then `requestRecords`): a body that is not a well-formed request, IDs of
 * the wrong length, a shape real exporters do not send. Whatever it returns, the general way would have made
 * the same lines of the same body.
 *
 * @param body The request's bytes (gzip undone).
 * @param texts The texts' JSON kept from a body to the next: a run's writer keeps its own (`received_rows.ts`),
 * so that the names, scopes and statuses its bodies repeat are made once; by default, the body's own.
 * @returns The lines, the count of spans and the services, or null.
 * @example
 * ```ts
 * import { decodeTraceRows } from "./otlp_rows.ts";
 * decodeTraceRows(new Uint8Array()); // { lines: (no bytes), spans: 0, services: Set {} }
 * ```
 */
export function decodeTraceRows(body: Uint8Array, texts?: Texts): RowLines | null {
  const pass = new RowPass(body, true, texts);
  try {
    pass.request();
  } catch {
    pass.out.release();
    return null; // the general way reads it again, and says what is wrong with it
  }
  const out = pass.out;
  return {
    lines: out.buf.subarray(0, out.n),
    spans: pass.spans,
    services: pass.services,
    release: () => out.release(),
  };
}

/**
 * How many characters of scope names and versions the rows of a body may repeat, a byte of it, over
 * {@linkcode REPEATED_FLOOR}: past it the general way refuses the body (`span_intake.ts`).
 */
export const REPEATED_RATIO = 16;
export const REPEATED_FLOOR = 1024 * 1024;

/**
 * Checks a request as {@linkcode decodeTraceRows} reads it, without writing its rows (their writer makes them
 * from the body later): the count of its spans and their services, or null when the body is to go the general
 * way (which then takes it or says what is wrong). Whatever it takes, the general way takes too: it also hands
 * back a body whose rows would repeat its scopes' names more than the general way allows (`span_intake.ts`).
 *
 * @param body The request's bytes (gzip undone).
 * @returns The count of spans and their services, or null.
 * @example
 * ```ts
 * import { checkTraceRows } from "./otlp_rows.ts";
 * checkTraceRows(new Uint8Array()); // { spans: 0, services: Set {} }
 * ```
 */
export function checkTraceRows(body: Uint8Array): { spans: number; services: Set<string> } | null {
  const pass = new RowPass(body, false);
  try {
    pass.request();
  } catch {
    return null;
  }
  if (pass.repeated > body.length * REPEATED_RATIO + REPEATED_FLOOR) return null;
  return { spans: pass.spans, services: pass.services };
}

/**
 * The protobuf decoder of an OTLP `ExportTraceServiceRequest`, read straight from the wire into the spans the
 * receiver keeps. It is the receiver's hot path: protobufjs builds a message object, then a plain object of it
 * (64-bit times as `Long` texts), then the spans, three objects a field, and took three quarters of the daemon's
 * time a span (161 µs of 250 under load, measured with the ingest bench). This reads each field once: IDs go to
 * hex, times to decimal text, texts to flat strings, with the field numbers of `telemetry/otlp_proto.ts` (the
 * OTLP specification's). A body that is not well-formed protobuf (a cut field, a bad varint, a known field of
 * the wrong wire type, a group that does not close, a tag or length past 32 bits) throws an `Error` that says
 * where, and so does one that would make more than 16 bytes of objects a byte it holds (a body of empty spans).
 * @module
 */

/** An attribute value as OTLP carries it: a text, number, yes or no, list, mapping or bytes. */
export type OtlpValue = string | number | boolean | Uint8Array | null | OtlpValue[] | {
  [key: string]: OtlpValue;
};

/** One span as a receiver decoded it. */
export interface ReceivedSpan {
  /** Lowercase hex, 32 characters. */
  traceId: string;
  /** Lowercase hex, 16 characters. */
  spanId: string;
  /** Lowercase hex, or `null` for a root span. */
  parentSpanId: string | null;
  name: string;
  /** The OTLP span kind number (1 internal, 2 server, 3 client, …). */
  kind: number;
  /** Nanoseconds since the epoch, as a decimal text (it does not fit a number). */
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Record<string, OtlpValue>;
  events: { name: string; timeUnixNano: string; attributes: Record<string, OtlpValue> }[];
  links: { traceId: string; spanId: string; attributes: Record<string, OtlpValue> }[];
  /** 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string };
  /** The instrumentation scope that made the span. */
  scope: { name: string; version: string };
  /** The attributes of the resource that sent the span. */
  resource: Record<string, OtlpValue>;
}

/** Protobuf's wire types (exported for `otlp_rows.ts`, which reads the same messages). */
export const VARINT = 0;
/** A fixed 64-bit field. */
export const FIXED64 = 1;
/** A length-delimited field. */
export const BYTES = 2;
const GROUP_START = 3;
const GROUP_END = 4;
const FIXED32 = 5;

// ignoreBOM: a text that starts with U+FEFF keeps it (the default decoder drops it, and a value would change)
const TEXT = new TextDecoder("utf-8", { ignoreBOM: true });
const HEX_CODES = Array.from({ length: 256 }, (_, b) => {
  const h = b.toString(16).padStart(2, "0");
  return [h.charCodeAt(0), h.charCodeAt(1)] as const;
});
const TWO_32 = 4294967296;
/** The deepest nesting of lists and mappings in one attribute value, and of unknown groups. */
export const MAX_DEPTH = 32;
/** The longest ID read: OTLP's are 16 and 8 bytes; a longer one is refused before it is turned to hex. */
export const MAX_ID = 64;
/**
 * How many bytes of objects a body may make a byte it holds (plus {@linkcode MEMORY_FLOOR}). An empty span is
 * two bytes on the wire and some 300 in memory: a 16 MiB body of them made 2.5 GB. A real span, event or value
 * makes under 10 a byte.
 */
const MEMORY_RATIO = 16;
const MEMORY_FLOOR = 1024 * 1024;
/** The bytes of memory, about, that each thing this decoder makes takes (measured with Deno.memoryUsage). */
export const COST = { span: 320, eventOrLink: 128, container: 96, element: 16, bytes: 128 } as const;

/** A cursor over a body's bytes; `end` bounds the message being read. */
export class Wire {
  pos = 0;
  /** How deep the values being read are nested in lists and mappings. */
  depth = 0;
  /** Short ASCII texts made so far, by a hash of their bytes. */
  readonly #texts = new Map<number, string>();
  /** The bytes of objects this body may still make. */
  #memory: number;
  constructor(readonly buf: Uint8Array) {
    this.#memory = buf.length * MEMORY_RATIO + MEMORY_FLOOR;
  }

  /** Counts what a span, event, value… will take, and refuses a body that makes far more than its size. */
  spend(bytes: number): void {
    this.#memory -= bytes;
    if (this.#memory < 0) {
      this.fail(
        `the body makes more than ${MEMORY_RATIO} bytes of spans, events and values a byte (empty fields)`,
      );
    }
  }

  fail(why: string): never {
    throw new Error(`${why} at byte ${this.pos} of ${this.buf.length}`);
  }

  /** A varint of up to 32 bits that matter (a length, a tag, an enum): the low 32 bits, unsigned. */
  uint32(): number {
    const buf = this.buf;
    let value = 0;
    for (let shift = 0; shift < 70; shift += 7) {
      if (this.pos >= buf.length) this.fail("a varint is cut");
      const b = buf[this.pos++]!;
      if (shift < 32) value = (value | ((b & 0x7f) << shift)) >>> 0;
      if (b < 0x80) return value;
    }
    return this.fail("a varint is longer than 10 bytes");
  }

  /**
   * A tag or a length: a varint that must fit 32 bits. protobufjs kept the low 32 bits of a longer one, so a
   * length of 2^32 + 5 read as 5, where a conforming parser (the Collector's) refuses it.
   */
  tag(): number {
    const buf = this.buf;
    const first = buf[this.pos];
    if (first !== undefined && first < 0x80) return (this.pos++, first); // most tags and lengths: one byte
    let value = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (this.pos >= buf.length) this.fail("a varint is cut");
      const b = buf[this.pos++]!;
      if (shift === 28 && b > 0x0f) this.fail("a tag or length does not fit 32 bits");
      value = (value | ((b & 0x7f) << shift)) >>> 0;
      if (b < 0x80) return value;
    }
    return this.fail("a tag or length does not fit 32 bits");
  }

  /** A varint as a 64-bit signed integer: a number when it is safe, else its decimal text. */
  int64(): number | string {
    const start = this.pos;
    const buf = this.buf;
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 7; i++) {
      if (this.pos >= buf.length) this.fail("a varint is cut");
      const b = buf[this.pos++]!;
      value += (b & 0x7f) * scale;
      if (b < 0x80) return value; // under 2^49: exact
      scale *= 128;
    }
    this.pos = start;
    let big = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (this.pos >= buf.length) this.fail("a varint is cut");
      const b = buf[this.pos++]!;
      big |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) {
        const signed = BigInt.asIntN(64, big);
        const n = Number(signed);
        return Number.isSafeInteger(n) ? n : signed.toString();
      }
    }
    return this.fail("a varint is longer than 10 bytes");
  }

  /** A fixed64 as an unsigned decimal text (nanoseconds do not fit a number). */
  fixed64(): string {
    const lo = this.fixed32();
    const hi = this.fixed32();
    if (hi < 0x200000) return String(hi * TWO_32 + lo); // under 2^53: exact
    return ((BigInt(hi) << 32n) | BigInt(lo)).toString();
  }

  fixed32(): number {
    const buf = this.buf;
    const p = this.pos;
    if (p + 4 > buf.length) this.fail("a fixed field is cut");
    this.pos = p + 4;
    return (buf[p]! | (buf[p + 1]! << 8) | (buf[p + 2]! << 16) | (buf[p + 3]! << 24)) >>> 0;
  }

  double(): number {
    const p = this.pos;
    if (p + 8 > this.buf.length) this.fail("a double is cut");
    this.pos = p + 8;
    return new DataView(this.buf.buffer, this.buf.byteOffset + p, 8).getFloat64(0, true);
  }

  /** The end of a length-delimited field that starts here, checked against the message's end. */
  delimited(end: number): number {
    const length = this.tag();
    const stop = this.pos + length;
    if (stop > end) this.fail(`a field of ${length} bytes runs past its message`);
    return stop;
  }

  bytes(end: number): Uint8Array {
    const stop = this.delimited(end);
    this.spend(COST.bytes);
    const out = new Uint8Array(this.buf.subarray(this.pos, stop)); // a copy, also of a Buffer
    this.pos = stop;
    return out;
  }

  /**
   * A text: flat, as JSON.stringify writes fastest. Short ASCII texts (names, keys, most values) repeat from
   * span to span: each is made once a request and found again by its bytes, without a decoder call.
   */
  string(end: number): string {
    const stop = this.delimited(end);
    const buf = this.buf;
    const start = this.pos;
    this.pos = stop;
    const length = stop - start;
    if (length > 64) return TEXT.decode(buf.subarray(start, stop));
    let hash = length;
    for (let i = start; i < stop; i++) {
      const b = buf[i]!;
      if (b >= 0x80) return TEXT.decode(buf.subarray(start, stop));
      hash = (Math.imul(hash, 31) + b) | 0;
    }
    const known = this.#texts.get(hash);
    if (known !== undefined && known.length === length) {
      let same = true;
      for (let i = 0; i < length; i++) {
        if (known.charCodeAt(i) !== buf[start + i]) {
          same = false;
          break;
        }
      }
      if (same) return known;
    }
    const text = String.fromCharCode.apply(null, buf.subarray(start, stop) as unknown as number[]);
    if (this.#texts.size < 4096) this.#texts.set(hash, text);
    return text;
  }

  /** An ID as lowercase hex, two digits a byte. */
  hex(end: number): string {
    const stop = this.delimited(end);
    if (stop - this.pos > MAX_ID) this.fail(`an ID of ${stop - this.pos} bytes (OTLP's are 16 and 8)`);
    const codes: number[] = [];
    for (let i = this.pos; i < stop; i++) {
      const [a, b] = HEX_CODES[this.buf[i]!]!;
      codes.push(a, b);
    }
    this.pos = stop;
    return String.fromCharCode.apply(null, codes);
  }

  /** Skips a field this decoder does not keep. */
  skip(wireType: number, end: number, field: number): void {
    if (wireType === VARINT) this.uint32();
    else if (wireType === FIXED64) this.advance(8, end);
    else if (wireType === BYTES) this.pos = this.delimited(end);
    else if (wireType === FIXED32) this.advance(4, end);
    else if (wireType === GROUP_START) this.skipGroup(end, field);
    else this.fail(`wire type ${wireType} is not protobuf's`);
  }

  /** Skips a group and the groups in it, without recursion: one byte a level would overflow the stack. */
  skipGroup(end: number, field: number): void {
    const open = [field];
    while (open.length > 0) {
      if (this.pos >= end) this.fail(`group ${open.at(-1)} does not close`);
      const tag = this.tag();
      const n = tag >>> 3;
      const t = tag & 7;
      if (n === 0) this.fail("a field numbered 0");
      if (t === GROUP_END) {
        const want = open.pop();
        if (n !== want) this.fail(`group ${want} closes as ${n}`);
      } else if (t === GROUP_START) {
        if (open.length >= MAX_DEPTH) this.fail(`groups are nested more than ${MAX_DEPTH} deep`);
        open.push(n);
      } else this.skip(t, end, n);
    }
  }

  advance(n: number, end: number): void {
    if (this.pos + n > end) this.fail("a fixed field is cut");
    this.pos += n;
  }

  /** Reads a message's fields until `end`, handing each to `field`, which returns false for one it skips. */
  fields(end: number, field: (number: number, wireType: number) => boolean): void {
    while (this.pos < end) {
      const tag = this.tag();
      const number = tag >>> 3;
      const wireType = tag & 7;
      if (number === 0) this.fail("a field numbered 0");
      if (!field(number, wireType)) this.skip(wireType, end, number);
    }
    if (this.pos !== end) this.fail("a message runs past its end");
  }
}

/** Checks that a known field came with the wire type its schema gives. */
export function expect(wire: Wire, wireType: number, want: number, what: string): void {
  if (wireType !== want) wire.fail(`${what} has wire type ${wireType}, not ${want}`);
}

/** Sets a key, so that a key named `__proto__` is data, not the object's prototype. */
function put(out: Record<string, OtlpValue>, key: string, value: OtlpValue): void {
  if (key === "__proto__") {
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  } else out[key] = value;
}

/**
 * An `AnyValue`. When a body sets more than one member of its `oneof`, the last on the wire is the value, as
 * protobuf's rule for a `oneof` has it (protobufjs and the Collector read it so; a first-wins reader would
 * record a value no other reader of the same body sees).
 */
export function anyValue(wire: Wire, end: number): OtlpValue {
  // a value nested past any real attribute's depth would only overflow the stack of every reader after
  // (counted as the OTLP/JSON decoder counts: the attribute's own value is depth 0)
  if (wire.depth++ > MAX_DEPTH) wire.fail(`a value is nested more than ${MAX_DEPTH} deep`);
  let value: OtlpValue = null;
  while (wire.pos < end) {
    const tag = wire.tag();
    const n = tag >>> 3;
    const t = tag & 7;
    if (n === 1) (expect(wire, t, BYTES, "AnyValue.string_value"), value = wire.string(end));
    else if (n === 2) (expect(wire, t, VARINT, "AnyValue.bool_value"), value = wire.uint32() !== 0);
    else if (n === 3) (expect(wire, t, VARINT, "AnyValue.int_value"), value = wire.int64());
    else if (n === 4) (expect(wire, t, FIXED64, "AnyValue.double_value"), value = wire.double());
    else if (n === 5) {
      expect(wire, t, BYTES, "AnyValue.array_value");
      const stop = wire.delimited(end);
      const values: OtlpValue[] = [];
      wire.spend(COST.container);
      wire.fields(stop, (m, u) => {
        if (m !== 1) return false;
        expect(wire, u, BYTES, "ArrayValue.values");
        wire.spend(COST.element);
        values.push(anyValue(wire, wire.delimited(stop)));
        return true;
      });
      value = values;
    } else if (n === 6) {
      expect(wire, t, BYTES, "AnyValue.kvlist_value");
      const stop = wire.delimited(end);
      const values: Record<string, OtlpValue> = {};
      wire.spend(COST.container);
      wire.fields(stop, (m, u) => {
        if (m !== 1) return false;
        expect(wire, u, BYTES, "KeyValueList.values");
        keyValue(wire, wire.delimited(stop), values);
        return true;
      });
      value = values;
    } else if (n === 7) (expect(wire, t, BYTES, "AnyValue.bytes_value"), value = wire.bytes(end));
    else if (n === 0) wire.fail("a field numbered 0");
    else wire.skip(t, end, n);
  }
  if (wire.pos !== end) wire.fail("a message runs past its end");
  wire.depth--;
  return value;
}

/** A `KeyValue`, put into `out` (a later key of the same name wins). Loops inline: it runs for every attribute. */
function keyValue(wire: Wire, end: number, out: Record<string, OtlpValue>): void {
  let key = "";
  let value: OtlpValue = null;
  while (wire.pos < end) {
    const tag = wire.tag();
    const n = tag >>> 3;
    const t = tag & 7;
    if (n === 1) (expect(wire, t, BYTES, "KeyValue.key"), key = wire.string(end));
    else if (n === 2) (expect(wire, t, BYTES, "KeyValue.value"), value = anyValue(wire, wire.delimited(end)));
    else if (n === 0) wire.fail("a field numbered 0");
    else wire.skip(t, end, n);
  }
  if (wire.pos !== end) wire.fail("a message runs past its end");
  put(out, key, value);
}

/** Reads one `KeyValue` field of a message into `out`. */
function attribute(wire: Wire, { wireType, end, out }: {
  wireType: number;
  end: number;
  out: Record<string, OtlpValue>;
}): void {
  expect(wire, wireType, BYTES, "an attribute");
  keyValue(wire, wire.delimited(end), out);
}

/** A `Resource`: its attributes. */
export function resource(wire: Wire, end: number): Record<string, OtlpValue> {
  const out: Record<string, OtlpValue> = {};
  wire.fields(end, (n, wireType) => {
    if (n !== 1) return false;
    attribute(wire, { wireType, end, out });
    return true;
  });
  return out;
}

/** An `InstrumentationScope`: its name and version. */
export function scope(wire: Wire, end: number): { name: string; version: string } {
  const out = { name: "", version: "" };
  wire.fields(end, (n, t) => {
    if (n === 1) (expect(wire, t, BYTES, "InstrumentationScope.name"), out.name = wire.string(end));
    else if (n === 2) {
      (expect(wire, t, BYTES, "InstrumentationScope.version"), out.version = wire.string(end));
    } else return false;
    return true;
  });
  return out;
}

/** A span `Event`. */
function spanEvent(wire: Wire, end: number): ReceivedSpan["events"][number] {
  wire.spend(COST.eventOrLink);
  const out = { name: "", timeUnixNano: "0", attributes: {} as Record<string, OtlpValue> };
  wire.fields(end, (n, wireType) => {
    if (n === 1) (expect(wire, wireType, FIXED64, "Event.time_unix_nano"), out.timeUnixNano = wire.fixed64());
    else if (n === 2) (expect(wire, wireType, BYTES, "Event.name"), out.name = wire.string(end));
    else if (n === 3) attribute(wire, { wireType, end, out: out.attributes });
    else return false;
    return true;
  });
  return out;
}

/** A span `Link`. */
function spanLink(wire: Wire, end: number): ReceivedSpan["links"][number] {
  wire.spend(COST.eventOrLink);
  const out = { traceId: "", spanId: "", attributes: {} as Record<string, OtlpValue> };
  wire.fields(end, (n, wireType) => {
    if (n === 1) (expect(wire, wireType, BYTES, "Link.trace_id"), out.traceId = wire.hex(end));
    else if (n === 2) (expect(wire, wireType, BYTES, "Link.span_id"), out.spanId = wire.hex(end));
    else if (n === 4) attribute(wire, { wireType, end, out: out.attributes });
    else return false;
    return true;
  });
  return out;
}

/** A span `Status`. */
export function spanStatus(wire: Wire, end: number): { code: number; message: string } {
  const out = { code: 0, message: "" };
  wire.fields(end, (n, t) => {
    if (n === 2) (expect(wire, t, BYTES, "Status.message"), out.message = wire.string(end));
    else if (n === 3) (expect(wire, t, VARINT, "Status.code"), out.code = wire.uint32() | 0);
    else return false;
    return true;
  });
  return out;
}

/** A `Span`, with the scope and resource it was sent under. */
function span(
  wire: Wire,
  end: number,
  under: Pick<ReceivedSpan, "scope" | "resource">,
): ReceivedSpan {
  wire.spend(COST.span);
  let parent = "";
  const out: ReceivedSpan = {
    traceId: "",
    spanId: "",
    parentSpanId: null,
    name: "",
    kind: 0,
    startTimeUnixNano: "0",
    endTimeUnixNano: "0",
    attributes: {},
    events: [],
    links: [],
    status: { code: 0, message: "" },
    scope: under.scope,
    resource: under.resource,
  };
  const is = (want: number, wireType: number, what: string) => {
    if (wireType !== want) expect(wire, wireType, want, `Span.${what}`);
  };
  while (wire.pos < end) {
    const tag = wire.tag();
    const n = tag >>> 3;
    const wireType = tag & 7;
    if (n === 1) (is(BYTES, wireType, "trace_id"), out.traceId = wire.hex(end));
    else if (n === 2) (is(BYTES, wireType, "span_id"), out.spanId = wire.hex(end));
    else if (n === 4) (is(BYTES, wireType, "parent_span_id"), parent = wire.hex(end));
    else if (n === 5) (is(BYTES, wireType, "name"), out.name = wire.string(end));
    else if (n === 6) (is(VARINT, wireType, "kind"), out.kind = wire.uint32() | 0);
    else if (n === 7) (is(FIXED64, wireType, "start_time_unix_nano"), out.startTimeUnixNano = wire.fixed64());
    else if (n === 8) (is(FIXED64, wireType, "end_time_unix_nano"), out.endTimeUnixNano = wire.fixed64());
    else if (n === 9) {
      (is(BYTES, wireType, "attributes"), keyValue(wire, wire.delimited(end), out.attributes));
    } else if (n === 11) {
      (is(BYTES, wireType, "events"), out.events.push(spanEvent(wire, wire.delimited(end))));
    } else if (n === 13) (is(BYTES, wireType, "links"), out.links.push(spanLink(wire, wire.delimited(end))));
    else if (n === 15) (is(BYTES, wireType, "status"), out.status = spanStatus(wire, wire.delimited(end)));
    else if (n === 0) wire.fail("a field numbered 0");
    else wire.skip(wireType, end, n);
  }
  if (wire.pos !== end) wire.fail("a message runs past its end");
  out.parentSpanId = parent === "" ? null : parent;
  return out;
}

/** A `ScopeSpans`: its spans, each with the scope (read wherever it stands in the message). */
function scopeSpans(
  wire: Wire,
  end: number,
  { resource, into }: { resource: Record<string, OtlpValue>; into: ReceivedSpan[] },
): void {
  const under = { scope: { name: "", version: "" }, resource };
  const first = into.length;
  wire.fields(end, (n, t) => {
    if (n === 1) (expect(wire, t, BYTES, "ScopeSpans.scope"), under.scope = scope(wire, wire.delimited(end)));
    else if (n === 2) {
      (expect(wire, t, BYTES, "ScopeSpans.spans"), into.push(span(wire, wire.delimited(end), under)));
    } else return false;
    return true;
  });
  for (let i = first; i < into.length; i++) into[i]!.scope = under.scope;
}

/** A `ResourceSpans`: its spans, each with the resource (read wherever it stands in the message). */
function resourceSpans(wire: Wire, end: number, into: ReceivedSpan[]): void {
  let attrs: Record<string, OtlpValue> = {};
  const first = into.length;
  wire.fields(end, (n, t) => {
    if (n === 1) {
      (expect(wire, t, BYTES, "ResourceSpans.resource"), attrs = resource(wire, wire.delimited(end)));
    } else if (n === 2) {
      expect(wire, t, BYTES, "ResourceSpans.scope_spans");
      scopeSpans(wire, wire.delimited(end), { resource: attrs, into });
    } else return false;
    return true;
  });
  for (let i = first; i < into.length; i++) into[i]!.resource = attrs;
}

/**
 * Decodes an `ExportTraceServiceRequest` into spans, in the order of the body.
 *
 * @param body The request's bytes.
 * @returns The spans.
 * @throws Error when the bytes are not well-formed protobuf of that message.
 */
export function decodeTraceWire(body: Uint8Array): ReceivedSpan[] {
  const wire = new Wire(body);
  const spans: ReceivedSpan[] = [];
  wire.fields(body.length, (n, t) => {
    if (n !== 1) return false;
    expect(wire, t, BYTES, "ExportTraceServiceRequest.resource_spans");
    resourceSpans(wire, wire.delimited(body.length), spans);
    return true;
  });
  return spans;
}

/**
 * The fields of an OTLP span that its row leaves (attribute values, events, link attributes), read and checked
 * as the wire decoder (`otlp_wire.ts`) reads them, with the same count of memory, and no value made: the rows'
 * pass (`otlp_rows.ts`) accepts exactly the bodies the decoder does.
 * @module
 */
import { BYTES, COST, expect, FIXED64, MAX_DEPTH, VARINT, type Wire } from "./otlp_wire.ts";

/** An `AnyValue` read and checked as `anyValue` reads it, with the same count of memory, and left. */
export function skipAnyValue(wire: Wire, end: number): void {
  if (wire.depth++ > MAX_DEPTH) wire.fail(`a value is nested more than ${MAX_DEPTH} deep`);
  while (wire.pos < end) {
    const tag = wire.tag();
    const n = tag >>> 3;
    const t = tag & 7;
    if (n === 1) (expect(wire, t, BYTES, "AnyValue.string_value"), wire.pos = wire.delimited(end));
    else if (n === 2) (expect(wire, t, VARINT, "AnyValue.bool_value"), wire.uint32());
    else if (n === 3) (expect(wire, t, VARINT, "AnyValue.int_value"), wire.uint32());
    else if (n === 4) (expect(wire, t, FIXED64, "AnyValue.double_value"), wire.double());
    else if (n === 5) {
      expect(wire, t, BYTES, "AnyValue.array_value");
      const stop = wire.delimited(end);
      wire.spend(COST.container);
      wire.fields(stop, (m, u) => {
        if (m !== 1) return false;
        expect(wire, u, BYTES, "ArrayValue.values");
        wire.spend(COST.element);
        skipAnyValue(wire, wire.delimited(stop));
        return true;
      });
    } else if (n === 6) {
      expect(wire, t, BYTES, "AnyValue.kvlist_value");
      const stop = wire.delimited(end);
      wire.spend(COST.container);
      wire.fields(stop, (m, u) => {
        if (m !== 1) return false;
        expect(wire, u, BYTES, "KeyValueList.values");
        skipKeyValue(wire, wire.delimited(stop));
        return true;
      });
    } else if (n === 7) {
      expect(wire, t, BYTES, "AnyValue.bytes_value");
      const stop = wire.delimited(end);
      wire.spend(COST.bytes);
      wire.pos = stop;
    } else if (n === 0) wire.fail("a field numbered 0");
    else wire.skip(t, end, n);
  }
  if (wire.pos !== end) wire.fail("a message runs past its end");
  wire.depth--;
}

/** A `KeyValue` read, checked and left. */
export function skipKeyValue(wire: Wire, end: number): void {
  while (wire.pos < end) {
    const tag = wire.tag();
    const n = tag >>> 3;
    const t = tag & 7;
    if (n === 1) (expect(wire, t, BYTES, "KeyValue.key"), wire.pos = wire.delimited(end));
    else if (n === 2) (expect(wire, t, BYTES, "KeyValue.value"), skipAnyValue(wire, wire.delimited(end)));
    else if (n === 0) wire.fail("a field numbered 0");
    else wire.skip(t, end, n);
  }
  if (wire.pos !== end) wire.fail("a message runs past its end");
}

/** A span `Event` read, checked and left: a row keeps no events (they stay in the payload). */
export function skipEvent(wire: Wire, end: number): void {
  wire.spend(COST.eventOrLink);
  wire.fields(end, (n, t) => {
    if (n === 1) (expect(wire, t, FIXED64, "Event.time_unix_nano"), wire.fixed32(), wire.fixed32());
    else if (n === 2) (expect(wire, t, BYTES, "Event.name"), wire.pos = wire.delimited(end));
    else if (n === 3) (expect(wire, t, BYTES, "an attribute"), skipKeyValue(wire, wire.delimited(end)));
    else return false;
    return true;
  });
}

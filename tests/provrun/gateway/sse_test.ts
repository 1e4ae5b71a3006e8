/**
 * The gateway's reader of server-sent events, as the WHATWG standard reads them: line ends LF, CRLF or CR (a
 * CRLF split between two chunks is one line end), `data:` lines joined, comments and unknown fields skipped, an
 * event not ended by a blank line dropped; and the same events however the bytes are cut into chunks.
 */
import assert from "node:assert/strict";
import { type SseEvent, SseParser } from "../../../lib/provrun/gateway/sse.ts";

const encoder = new TextEncoder();

/** The events of a stream fed in chunks cut at the given offsets. */
function read(text: string, cuts: number[] = []): SseEvent[] {
  const bytes = encoder.encode(text);
  const parser = new SseParser();
  const out: SseEvent[] = [];
  let from = 0;
  for (const at of [...cuts, bytes.byteLength]) {
    out.push(...parser.push(bytes.subarray(from, at)));
    from = at;
  }
  return [...out, ...parser.end()];
}

const STREAM = [
  ": a comment\n",
  "event: message_start\n",
  'data: {"type":"message_start"}\n',
  "\n",
  "event: delta\r\n",
  "data: one\r\n",
  "data:two\r\n",
  "id: 7\r\n",
  "\r\n",
  "data: only data, in the default event\r",
  "\r",
  "event: ping\n",
  "\n", // an event with no data is no event
  "data: é ✓ 😀\n",
  "\n",
  "data: never ended\n",
].join("");

const EVENTS: SseEvent[] = [
  { event: "message_start", data: '{"type":"message_start"}' },
  { event: "delta", data: "one\ntwo" },
  { event: "message", data: "only data, in the default event" },
  { event: "message", data: "é ✓ 😀" },
];

Deno.test("events are read with every kind of line end, comments, joined data lines and the default event name; an unended event is dropped", () => {
  assert.deepEqual(read(STREAM), EVENTS);
});

Deno.test("the same events come out however the bytes are cut: one byte at a time, inside a CRLF, inside a character", () => {
  const size = encoder.encode(STREAM).byteLength;
  assert.deepEqual(read(STREAM, Array.from({ length: size - 1 }, (_, i) => i + 1)), EVENTS);
  const crlf = encoder.encode(STREAM).indexOf(13) + 1; // between the CR and the LF
  assert.deepEqual(read(STREAM, [crlf]), EVENTS);
  for (let step = 2; step < 40; step += 3) {
    const cuts = [];
    for (let at = step; at < size; at += step) cuts.push(at);
    assert.deepEqual(read(STREAM, cuts), EVENTS, `cut every ${step} bytes`);
  }
});

Deno.test("a CR that ends a chunk and an LF that starts the next are one line end, not two", () => {
  const text = "data: a\r\ndata: b\r\n\r\n";
  const at = text.indexOf("\r") + 1;
  assert.deepEqual(read(text, [at]), [{ event: "message", data: "a\nb" }]);
  const blank = text.lastIndexOf("\r") + 1;
  assert.deepEqual(read(text, [blank]), [{ event: "message", data: "a\nb" }]);
});

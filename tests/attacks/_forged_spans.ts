/**
 * Forged lines of a run's span index (`spans.jsonl`) that its readers take as spans, for the attacks on them.
 * @module
 */

/** The trace the forged spans belong to. */
export const FORGED_TRACE = "0af7651916cd43dd8448eb211c80319c";

/** A small span line of {@linkcode FORGED_TRACE}, its span ID made of `i`, with `events` as given (none). */
export function forgedSpan(i: number, events = "[]"): string {
  const line = JSON.stringify({
    trace_id: FORGED_TRACE,
    span_id: i.toString(16).padStart(16, "0"),
    parent_span_id: null,
    name: "forged",
    kind: 0,
    scope: { name: "x", version: null },
    start_time: "2026-11-29T12:00:00.000000Z",
    end_time: "2026-11-29T12:00:01.000000Z",
    status: { code: 0, message: null },
    attributes: {},
    events: [],
    links: [],
  });
  return `${events === "[]" ? line : line.replace('"events":[]', `"events":${events}`)}\n`;
}

/**
 * The reference of the span rows' one pass (`otlp_rows.ts`): the general way of the receiver, a body decoded
 * into spans, its IDs checked, the spans made rows and each row a line with `JSON.stringify`, as `spans.jsonl`
 * held them before the pass.
 * @module
 */
import { decodeTraceRequest } from "../../../lib/provevi/receiver/otlp_receiver.ts";
import { decodeTraceRows } from "../../../lib/provevi/receiver/otlp_rows.ts";
import { requestRecords } from "../../../lib/provevi/receiver/span_events.ts";

/** The lines, spans and services the general way makes of a body, or null when it refuses the body. */
export function generalRows(body: Uint8Array): { lines: string; spans: number; services: string[] } | null {
  let spans;
  try {
    spans = decodeTraceRequest(body);
  } catch {
    return null;
  }
  const ids = (s: (typeof spans)[number]) =>
    s.traceId.length === 32 && s.spanId.length === 16 &&
    (s.parentSpanId === null || s.parentSpanId.length === 16);
  if (!spans.every(ids)) return null;
  const { rows, event } = requestRecords(spans, { encoding: "protobuf" });
  return {
    lines: rows.map((r) => JSON.stringify(r) + "\n").join(""),
    spans: spans.length,
    services: (event.data as { services: string[] }).services,
  };
}

/**
 * How the one pass and the general way differ on a body, or null when they agree: the pass took a body the
 * general way refuses (`rows-took-refused`), or made other lines, spans or services (`rows-differ`). The pass
 * handing a body back is agreement: the general way then answers.
 */
export function rowsDiffer(body: Uint8Array): "rows-took-refused" | "rows-differ" | null {
  const direct = decodeTraceRows(body);
  if (direct === null) return null;
  const general = generalRows(body);
  if (general === null) return "rows-took-refused";
  const same = new TextDecoder().decode(direct.lines) === general.lines && direct.spans === general.spans &&
    JSON.stringify([...direct.services].sort()) === JSON.stringify(general.services);
  return same ? null : "rows-differ";
}

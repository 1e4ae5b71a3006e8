/**
 * A batch of received spans read back from the evidence: a `spans_received` event's payload is the request's
 * body as the program sent it (gzip undone), in the encoding its `data.encoding` names. Readers (provtrace, a
 * viewer, a test) decode it with the receiver's own decoders.
 * @module
 */
import type { EvidenceEvent } from "../evidence/event.ts";
import { ProveviError } from "../evidence/errors.ts";
import { decodeTraceWire, type ReceivedSpan } from "./otlp_wire.ts"; // not otlp_receiver.ts: no protobufjs (#25)
import { decodeTraceJson } from "./otlp_json.ts";
import { SPANS_RECEIVED } from "./span_events.ts";

/**
 * The spans of a `spans_received` event's payload.
 *
 * @param event The event.
 * @param body Its payload's bytes (hash checked by whoever read them).
 * @returns The spans, in the order of the request.
 * @throws TypeError when the event is not a `spans_received`.
 * @throws ProveviError when the body is not a trace request in the encoding the event names.
 * @example
 * ```ts
 * import { batchSpans } from "./received_batch.ts";
 * import type { EvidenceEvent } from "../evidence/event.ts";
 * declare const event: EvidenceEvent; // a spans_received event
 * declare const body: Uint8Array; // its payload
 * const spans = batchSpans(event, body);
 * ```
 */
export function batchSpans(event: EvidenceEvent, body: Uint8Array): ReceivedSpan[] {
  if (event.type !== SPANS_RECEIVED) {
    throw new TypeError(`batchSpans() reads a ${SPANS_RECEIVED} event, not ${event.type}`);
  }
  try {
    return event.data.encoding === "json"
      ? decodeTraceJson(new TextDecoder().decode(body))
      : decodeTraceWire(body);
  } catch (error) {
    throw new ProveviError(
      `the spans of event ${event.seq} (${SPANS_RECEIVED}) cannot be read: ${(error as Error).message}`,
      { cause: error },
    );
  }
}

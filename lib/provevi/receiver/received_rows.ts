/**
 * The rows of the protobuf bodies a run received (`spans_received` events of the receiver), made from its
 * evidence when a reader asks for the run's spans: each body is read back from its payload (hash checked) and
 * made rows in one pass (`otlp_rows.ts`), else the general way. No receiver keeps the rows of a protobuf body in
 * `spans.jsonl`: a request costs `prove serve`'s daemon a check and the run's writer a payload, not the rows too
 * (a third of the CPU a request cost, for an index that most runs are never read by). The rows are those the
 * receivers wrote before, of the very bodies the run keeps; the index no longer holds rows of bodies that no event names, but
 * those prove serve wrote for a run not sealed yet (`received.spans`: a run going on, or one whose writer ended
 * before its seal).
 *
 * A body read back is no body prove serve would take when it is over 16 MiB (refused before it is read), holds
 * more spans than a request may, or makes rows that repeat a long scope name: it gives no rows (its spans stay in
 * the evidence). The rows are taken with the index's own, counted and weighed with them (`SpanTake`), and the
 * bodies read for them are no more than {@linkcode RECEIVED_READ_MAX_BYTES} together.
 * @module
 */
import type { EvidenceEvent } from "../evidence/event.ts";
import type { RunRecord } from "../evidence/record.ts";
import { SpanTake } from "../evidence/spans_file.ts";
import { EVIDENCE_TEXT_MAX_BYTES } from "../evidence/payload_pack.ts";
import { decodeTraceRequest } from "./otlp_receiver.ts";
import { decodeTraceRows } from "./otlp_rows.ts";
import { Texts } from "./row_texts.ts";
import { ReceivedBodies } from "./received_bodies.ts";
import { BYTES, Wire } from "./otlp_wire.ts";
import { RECEIVER_COMPONENT, requestRecords, SPANS_RECEIVED } from "./span_events.ts";
import { DEFAULT_MAX_BODY, DEFAULT_MAX_REQUEST_SPANS, refuseRepeatedScope } from "./span_intake.ts";

/**
 * The spans of a request, counted by their fields alone (each skipped by its length, nothing made): of a body the
 * general way reads, the count it finds; of another, some count or an error, which the general way would refuse.
 */
function countSpans(body: Uint8Array): number {
  const wire = new Wire(body);
  let count = 0;
  const inside = (end: number, field: number, within: (end: number) => void) =>
    wire.fields(end, (n, t) => {
      if (n !== field || t !== BYTES) return false;
      within(wire.delimited(end));
      return true;
    });
  inside(body.length, 1, (resource) =>
    inside(resource, 2, (scope) =>
      inside(scope, 2, (span) => {
        count++;
        wire.pos = span;
      })));
  return count;
}

/**
 * The most bytes of bodies a reader reads of one run's payloads for their rows: the 512 MiB its span index may
 * hold, whose rows took more bytes than their bodies do. A payload that cannot be read or is changed counts what
 * it may have cost (16 MiB): events changed after the seal that name thousands of payloads of 16 MiB each, or
 * one payload again and again, cost a reader no more than an index does.
 */
export const RECEIVED_READ_MAX_BYTES = EVIDENCE_TEXT_MAX_BYTES;

/**
 * What a reader of a run's received bodies may still read ({@linkcode RECEIVED_READ_MAX_BYTES} at first): each
 * body within it and within the 16 MiB prove serve takes, refused before it is read past either.
 *
 * @example
 * ```ts
 * import { BodyBudget } from "./received_rows.ts";
 * import type { RunRecord } from "../evidence/record.ts";
 * declare const record: RunRecord;
 * const budget = new BodyBudget();
 * const body = await budget.read(record, "0".repeat(64)); // null: no such payload (it counts 16 MiB)
 * ```
 */
export class BodyBudget {
  /** The bytes left to read. */
  left = RECEIVED_READ_MAX_BYTES;

  /** True once nothing more is read. */
  get spent(): boolean {
    return this.left <= 0;
  }

  /**
   * A payload's bytes, hash checked, or null when it is missing, past the bound, or changed: it may have been
   * read, so it counts what it may have cost.
   */
  async read(record: Pick<RunRecord, "payload">, sha256: string): Promise<Uint8Array | null> {
    const most = Math.min(DEFAULT_MAX_BODY, this.left);
    try {
      const body = await record.payload(sha256, most);
      this.left -= body.length;
      return body;
    } catch {
      this.left -= most;
      return null;
    }
  }
}

const utf8 = new TextDecoder();
const NEWLINE = 0x0a;

/**
 * Takes the rows of one body, as prove serve would have taken it (else none: its spans stay in the evidence).
 *
 * @param body The body, as stored.
 * @param texts The texts' JSON kept from a body to the next of the run.
 * @param take Where the rows go, within its bounds.
 */
export function takeBodyRows(body: Uint8Array, texts: Texts, take: SpanTake): void {
  // what prove serve takes, at most: a larger body is none it took
  if (body.length > DEFAULT_MAX_BODY) return;
  // nor one of more spans than a request may hold: its rows would cost the reader what prove serve refuses
  try {
    if (countSpans(body) > DEFAULT_MAX_REQUEST_SPANS) return;
  } catch {
    return; // not a request: the general way would refuse it too
  }
  const rows = decodeTraceRows(body, texts);
  if (rows === null) {
    // the general way, with the daemon's bound on the scope names its rows repeat
    let records;
    try {
      const spans = decodeTraceRequest(body);
      refuseRepeatedScope(spans, body.length);
      records = requestRecords(spans, { encoding: "protobuf" }).rows;
    } catch {
      return;
    }
    for (const row of records) if (!take.line(JSON.stringify(row))) return;
    return;
  }
  try {
    const lines = rows.lines;
    for (let at = 0; at < lines.length;) {
      let end = lines.indexOf(NEWLINE, at);
      if (end < 0) end = lines.length;
      if (!take.line(utf8.decode(lines.subarray(at, end)))) return;
      at = end + 1;
    }
  } finally {
    rows.release();
  }
}

/**
 * Takes the rows of a run's received protobuf bodies, each body once, in the order their events came.
 *
 * @param record The run, whose payloads hold the bodies.
 * @param events The run's events.
 * @param take Where the rows go, within its bounds (a new one by default).
 * @returns The spans taken, those taken before them first.
 * @example
 * ```ts
 * import { takeReceivedRows } from "./received_rows.ts";
 * import type { RunRecord } from "../evidence/record.ts";
 * declare const record: RunRecord;
 * await takeReceivedRows(record, []); // []
 * ```
 */
export async function takeReceivedRows(
  record: Pick<RunRecord, "payload" | "folder">,
  events: readonly EvidenceEvent[],
  take = new SpanTake(),
): Promise<SpanTake["spans"]> {
  const texts = new Texts();
  const seen = new Set<string>();
  const budget = new BodyBudget();
  for (const e of events) {
    if (take.full || budget.spent) break;
    if (e.type !== SPANS_RECEIVED || e.component !== RECEIVER_COMPONENT || typeof e.payload !== "string") {
      continue;
    }
    // an OTLP/JSON body's rows are in the index, written as it came
    if ((e.data as Record<string, unknown> | null)?.encoding === "json" || seen.has(e.payload)) continue;
    seen.add(e.payload);
    const body = await budget.read(record, e.payload);
    if (body !== null) takeBodyRows(body, texts, take);
  }
  if (record.folder !== null) takeWaitingRows(record.folder, { texts, seen, take, budget });
  return take.spans;
}

/**
 * Takes the rows of the bodies prove serve wrote for a run whose writer has not sealed it (`received.spans`,
 * which the seal removes; their events come with the seal): a run going on, or one whose writer ended before
 * its seal. Each body is checked against its hash, and read within what is left of the reader's bytes.
 */
function takeWaitingRows(
  folder: string,
  { texts, seen, take, budget }: { texts: Texts; seen: Set<string>; take: SpanTake; budget: BodyBudget },
): void {
  const waiting = new ReceivedBodies(folder);
  try {
    while (!take.full && !budget.spent) {
      const bodies = waiting.readOn();
      if (bodies.size === 0) return;
      for (const [sha256, body] of bodies) {
        budget.left -= body.length;
        if (seen.has(sha256) || take.full) continue;
        seen.add(sha256);
        takeBodyRows(body, texts, take);
      }
    }
  } catch { /* a link or a pipe in its place is none of the daemon's */ }
}

/**
 * One event as the viewer's pages show it: its structure always, its content at the viewer's level, cut to the
 * page (long strings, long lists, the head of its payload, the start of its answer), with what was cut named
 * so that the page links to the whole. The run page and the live tail both make their events here.
 * @module
 */
import type { EvidenceEvent } from "../evidence/event.ts";
import type { RunRecord } from "../evidence/record.ts";
import { replyOf } from "../live/feed.ts";
import type { EventItem } from "../live/live.ts";
import type { Level } from "../telemetry/attributes.ts";
import { cutJson } from "./view_cut.ts";
import { answerPreview, payloadPreview } from "./view_payload.ts";

/** What a page left out of an event; each part is whole at its own address under the viewer's `api/`. */
export interface ViewCut {
  /** The data or refs were cut: the whole content is at `runs/RUN/events/SEQ`. */
  data?: true;
  /** The payload was cut: its `size` bytes are at `runs/RUN/payloads/SHA256`. */
  payload?: { size: number };
  /** The answer was cut: the whole is at `runs/RUN/events/SEQ/answer`; `size` is its reply payload's bytes. */
  answer?: { size: number };
}

/** One event as the viewer shows it. */
export interface ViewEvent {
  seq: number;
  time: string;
  started_at: string | null;
  type: string;
  confidence: string;
  trace_id: string | null;
  span_id: string | null;
  parent_span_id: string | null;
  /** The SHA-256 of the event's payload, or null. */
  payload_sha256: string | null;
  /** The SHA-256 of the event's line, which the next event's `prev` names. */
  line_sha256: string;
  /** The SHA-256 of the line before, which this event names (null for the first). */
  prev: string | null;
  /** The line of `events.jsonl` that holds the event, from 1. */
  line: number;
  /** The event's content at the viewer's level, or null when only its structure shows. */
  shown: EventItem | null;
  /** The answer of the model call this event records, at `bodies`. */
  answer?: string;
  /** What the page left out, when anything was. */
  cut?: ViewCut;
}

/** Options of {@linkcode viewEvent}. */
export interface ViewEventOptions {
  /** The run, to read the payload's head and the answer's start. */
  record: RunRecord;
  /** The viewer's level for the run. */
  level: Level | null;
  /** The event at the level, as `shownAt` gives it without a record, or null when its content is not shown. */
  shown: EventItem | null;
  /** The SHA-256 of the event's line. */
  lineSha256: string;
  /** The line of `events.jsonl` that holds it, from 1. */
  line: number;
  /** Add the answer of a model call (at `bodies`). */
  answer: boolean;
}

/**
 * An event for a page, its content cut to the page.
 *
 * @param event The evidence event.
 * @param options The run, the level, the event as shown at it, its line's hash, and whether to add its answer.
 * @returns The event as the page shows it.
 * @example
 * ```ts
 * import { viewEvent } from "./view_event.ts";
 * // await viewEvent(event, { record, level: "bodies", shown, lineSha256, answer: true });
 * ```
 */
export async function viewEvent(event: EvidenceEvent, options: ViewEventOptions): Promise<ViewEvent> {
  const { record, level } = options;
  const cut: ViewCut = {};
  let shown: EventItem | null = null;
  if (options.shown !== null) {
    const data = cutJson(options.shown.data);
    shown = { ...options.shown, data: data.value as EventItem["data"] };
    if (data.cut) cut.data = true;
    if (options.shown.refs !== undefined) {
      const refs = cutJson(options.shown.refs);
      shown.refs = refs.value as string[];
      if (refs.cut) cut.data = true;
    }
    if (level === "bodies" && event.payload !== null) {
      const preview = await payloadPreview(record, event.payload).catch(() => null);
      if (preview !== null) {
        shown.payload = preview.value;
        if (preview.cut) cut.payload = { size: preview.size };
      }
    }
  }
  const view: ViewEvent = {
    seq: event.seq,
    time: event.time,
    started_at: event.started_at,
    type: event.type,
    confidence: event.confidence,
    trace_id: event.trace_id,
    span_id: event.span_id,
    parent_span_id: event.parent_span_id,
    payload_sha256: event.payload,
    line_sha256: options.lineSha256,
    prev: event.prev,
    line: options.line,
    shown,
  };
  const reply = options.answer && level === "bodies" && shown !== null ? replyOf(event) : null;
  if (reply !== null) {
    const answer = await answerPreview(record, reply).catch(() => null);
    if (answer !== null) {
      view.answer = answer.text;
      if (answer.cut) cut.answer = { size: answer.size };
    }
  }
  if (Object.keys(cut).length > 0) view.cut = cut;
  return view;
}

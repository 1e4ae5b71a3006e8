/**
 * The items of a live feed (provevi-reference.txt, "Show a run to a live viewer"): `event`, `text` and
 * `done`, each numbered `n` from 1, and {@linkcode answerOf}, which finds the text of a model call's answer in
 * its reply payload. provrun's live feed and {@linkcode replay} both build their items from these.
 * @module
 */
import type { EvidenceEvent, Json } from "../evidence/event.ts";
import type { EventItem } from "./live.ts";

/** An `event` item of a feed: one evidence event, cut to the viewer's level by `shownAt`. */
export type FeedEventItem = EventItem & { n: number };

/** A `text` item: text of a model's answer, only at `bodies`. Live it comes in pieces; a viewer joins them. */
export interface FeedTextItem {
  type: "text";
  n: number;
  text: string;
}

/** How a run ended, as a viewer is told it. */
export type FeedStatus = "completed" | "failed" | "cancelled";

/** The `done` item: the end of a run's feed. */
export interface FeedDoneItem {
  type: "done";
  n: number;
  run_id: string;
  status: FeedStatus;
}

/** One item of a live feed. */
export type FeedItem = FeedEventItem | FeedTextItem | FeedDoneItem;

/** An item before the feed gives it its number. */
export type UnnumberedItem =
  | Omit<FeedEventItem, "n">
  | Omit<FeedTextItem, "n">
  | Omit<FeedDoneItem, "n">;

/**
 * Numbers the items of one feed from 1, in the order they are given.
 *
 * @example
 * ```ts
 * import { FeedCounter } from "./feed.ts";
 * const feed = new FeedCounter();
 * feed.number({ type: "text", text: "Revenue" }); // { type: "text", text: "Revenue", n: 1 }
 * ```
 */
export class FeedCounter {
  #n = 0;

  /** The number of items given so far. */
  get count(): number {
    return this.#n;
  }

  /**
   * Gives an item the feed's next number.
   * @param item The item without `n`.
   * @returns The item with `n`.
   */
  number(item: UnnumberedItem): FeedItem {
    return { ...item, n: ++this.#n } as FeedItem;
  }
}

/**
 * The text of a model call's answer in its reply payload, or `null` when the payload holds no answer (a reply
 * of tool calls only, or a payload of another shape). It reads the forms provrun stores: a streamed reply's
 * `text`, a whole reply's `content` parts of type `text` (the AI SDK's, and an Anthropic message the model
 * gateway kept), and the bodies of OpenAI's Chat Completions (`choices[0].message.content`) and Responses
 * (`output` messages' `output_text` parts), joined.
 *
 * @param payload The reply payload, as `payloadOf` reads it.
 * @returns The answer's text, or null.
 * @example
 * ```ts
 * import { answerOf } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * assert.equal(answerOf({ content: [{ type: "text", text: "Revenue grew 12%." }] }), "Revenue grew 12%.");
 * assert.equal(answerOf({ text: "", parts: [] }), null);
 * ```
 */
export function answerOf(payload: Json): string | null {
  if (!isObject(payload)) return null;
  if (typeof payload.text === "string") return payload.text === "" ? null : payload.text;
  const texts = (parts: Json | undefined, type: string): string[] =>
    Array.isArray(parts)
      ? parts.flatMap((
        part,
      ) => (isObject(part) && part.type === type && typeof part.text === "string" ? [part.text] : []))
      : [];
  let found: string[] = [];
  if (Array.isArray(payload.content)) found = texts(payload.content, "text");
  else if (Array.isArray(payload.choices)) {
    const message = isObject(payload.choices[0]) ? payload.choices[0].message : null;
    if (isObject(message) && typeof message.content === "string") found = [message.content];
  } else if (Array.isArray(payload.output)) {
    found = payload.output.flatMap((item) =>
      isObject(item) && item.type === "message" ? texts(item.content, "output_text") : []
    );
  }
  const text = found.join("");
  return text === "" ? null : text;
}

function isObject(v: Json | undefined): v is { [key: string]: Json } {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * How a run ended, from its last event: `completed` for `run_completed`, `cancelled` for a `run_failed` whose
 * error is `CancelledError`, `failed` for any other; null when the event does not end a run.
 *
 * @param last The run's last event.
 * @returns The status, or null.
 * @example
 * ```ts
 * import { feedStatus } from "./feed.ts";
 * // feedStatus(lastEvent) → "cancelled"
 * ```
 */
export function feedStatus(last: Pick<EvidenceEvent, "type" | "data"> | undefined): FeedStatus | null {
  if (last?.type === "run_completed") return "completed";
  if (last?.type === "run_failed") return last.data.error === "CancelledError" ? "cancelled" : "failed";
  return null;
}

/**
 * The reply payload of a model call's event, when the event records one: a `model_called`, or the
 * `step_failed` of a stream that failed part way (`step: "model_called"`).
 *
 * @param event The event.
 * @returns The payload's SHA-256, or null.
 * @example
 * ```ts
 * import { replyOf } from "./feed.ts";
 * // replyOf(event) → "9f86d0…"
 * ```
 */
export function replyOf(event: Pick<EvidenceEvent, "type" | "data">): string | null {
  const isCall = event.type === "model_called" ||
    (event.type === "step_failed" && event.data.step === "model_called");
  const reply = event.data.response_payload;
  return isCall && typeof reply === "string" ? reply : null;
}

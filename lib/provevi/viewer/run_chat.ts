/**
 * The conversation of one event of a run, for the run page's detail panel: a model call's messages and reply,
 * or an agent's whole history (the agent backend's messages, an agent program's session file). Only at
 * `bodies`, as the page's payloads; each payload is read up to {@linkcode CHAT_BYTES}, so any size gives a
 * bounded answer.
 * @module
 */
import type { Json } from "../evidence/event.ts";
import { replyOf } from "../live/feed.ts";
import type { RunModel } from "./run_model.ts";
import { chatOfCall, chatOfSession, type ChatView } from "./chat_view.ts";
import { parseJsonHead } from "./view_cut.ts";
import { payloadHead } from "./view_payload.ts";
import { ViewerRefusal } from "./viewer_http.ts";
import { checkShown, indexOf } from "./run_whole.ts";

/** The bytes of a payload that a conversation reads. */
export const CHAT_BYTES = 8 * 1024 * 1024;

/** A conversation, with the event it is of and the payloads it was read from. */
export interface EventChat extends ChatView {
  seq: number;
  /** `call` for a model call, `history` for an agent's messages or a program's session file. */
  source: "call" | "history";
  request_sha256: string | null;
  reply_sha256: string | null;
}

/** A payload read up to the bound: JSON where it is JSON (its head, when cut), else its text. */
async function readBounded(model: RunModel, sha256: string): Promise<{ value: Json; cut: boolean }> {
  const { head, size } = await payloadHead(model.record, sha256, { bytes: CHAT_BYTES });
  const text = new TextDecoder().decode(head, { stream: true });
  const whole = head.length === size;
  if (whole) {
    try {
      return { value: JSON.parse(text) as Json, cut: false };
    } catch {
      return { value: text, cut: false };
    }
  }
  const parsed = parseJsonHead(text, { strings: 1_000_000, items: 100_000, depth: 64 });
  return parsed ? { value: parsed.value, cut: true } : { value: text, cut: true };
}

/**
 * The conversation of an event: a model call (`model_called`, or its `step_failed`) or a history
 * (`trace_imported`).
 *
 * @param model The run as the viewer knows it.
 * @param seq The event's seq.
 * @returns The messages, cut to the page.
 * @throws ViewerRefusal (404) for an event that holds no conversation; (403) below `bodies`.
 */
export async function eventChat(model: RunModel, seq: number): Promise<EventChat> {
  checkShown(model, `the messages of event ${seq}`, { needs: "bodies" });
  const event = model.events[indexOf(model, seq)]!;
  const reply = replyOf(event);
  const isCall = event.type === "model_called" ||
    (event.type === "step_failed" && event.data.step === "model_called");
  if (isCall) {
    const request = event.payload ? await readBounded(model, event.payload) : { value: null, cut: false };
    const answer = reply ? await readBounded(model, reply) : { value: null, cut: false };
    const chat = chatOfCall(request.value, answer.value);
    return {
      ...chat,
      cut: chat.cut || request.cut || answer.cut,
      seq,
      source: "call",
      request_sha256: event.payload,
      reply_sha256: reply,
    };
  }
  if (event.type === "trace_imported" && event.payload) {
    const history = await readBounded(model, event.payload);
    const chat = chatOfSession(history.value);
    if (chat.messages.length || chat.skipped) {
      return {
        ...chat,
        cut: chat.cut || history.cut,
        seq,
        source: "history",
        request_sha256: event.payload,
        reply_sha256: null,
      };
    }
  }
  throw new ViewerRefusal(404, `event ${seq} of run "${model.record.runId}" holds no conversation`);
}

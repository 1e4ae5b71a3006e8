/**
 * What a run page cuts, whole, for the one request that asks for it: an event's content, a model call's
 * answer, and a payload's bytes (streamed from the run folder, not read into memory). Each shows only what the
 * page itself would: the viewer's level for the run, and content of a run that does not verify only when the
 * request asks for it as the page does.
 * @module
 */
import { payloadsOf } from "../evidence/event.ts";
import { answerOf, replyOf } from "../live/feed.ts";
import { payloadOf } from "../live/live.ts";
import { lineNumber, lineSha256, type RunModel, trusted } from "./run_model.ts";
import type { ViewEvent } from "./view_event.ts";
import { openPayloadFile } from "./view_payload.ts";
import { ViewerRefusal } from "./viewer_http.ts";

/**
 * Refuses what the run page itself would not show.
 *
 * @throws ViewerRefusal (403) below the level `needs`, or for a run that does not verify unless asked.
 */
export function checkShown(model: RunModel, what: string, options: { needs: "names" | "bodies" }): void {
  if (model.level === null) {
    throw new ViewerRefusal(403, `${what} is hidden: the viewer shows only the structure of this run`);
  }
  if (!trusted(model.verdict) && !model.untrusted) {
    throw new ViewerRefusal(
      403,
      `${what} is hidden: run "${model.record.runId}" does not verify; ask with ?untrusted=1 to see it unverified`,
    );
  }
  if (options.needs === "bodies" && model.level !== "bodies") {
    throw new ViewerRefusal(
      403,
      `${what} is hidden: it needs "receives: bodies" on the policy's live destination`,
    );
  }
}

/**
 * The index of an event among the run's events.
 *
 * @throws ViewerRefusal (404) when the run has no such event.
 */
export function indexOf(model: RunModel, seq: number): number {
  const i = model.events.findIndex((e) => e.seq === seq);
  if (i < 0) {
    throw new ViewerRefusal(
      404,
      `run "${model.record.runId}" has no event ${seq}: its events are 0 to ${model.events.length - 1}`,
    );
  }
  return i;
}

/**
 * One event with its whole content at the viewer's level (its payload is at its own address).
 *
 * @param model The run as the viewer knows it.
 * @param seq The event's seq.
 * @returns The event.
 * @throws ViewerRefusal (404) for an event the run does not have; (403) when its content is hidden.
 */
export function wholeEvent(model: RunModel, seq: number): ViewEvent {
  checkShown(model, `the content of event ${seq}`, { needs: "names" });
  const i = indexOf(model, seq);
  const e = model.events[i]!;
  return {
    seq: e.seq,
    time: e.time,
    started_at: e.started_at,
    type: e.type,
    confidence: e.confidence,
    trace_id: e.trace_id,
    span_id: e.span_id,
    parent_span_id: e.parent_span_id,
    payload_sha256: e.payload,
    line_sha256: lineSha256(model, i),
    prev: e.prev,
    line: lineNumber(model, i),
    shown: model.shown[i] ?? null,
  };
}

/**
 * The whole answer of a model call, as text.
 *
 * @param model The run as the viewer knows it.
 * @param seq The event's seq.
 * @returns The answer.
 * @throws ViewerRefusal (404) when the event records no answer; (403) below `bodies`.
 */
export async function wholeAnswer(model: RunModel, seq: number): Promise<string> {
  checkShown(model, `the answer of event ${seq}`, { needs: "bodies" });
  const reply = replyOf(model.events[indexOf(model, seq)]!);
  const answer = reply === null ? null : answerOf(await payloadOf(model.record, reply));
  if (answer === null) throw new ViewerRefusal(404, `event ${seq} records no answer of a model call`);
  return answer;
}

/**
 * A payload's bytes as a stream, from the run folder (or read whole, for a run without one here).
 *
 * @param model The run as the viewer knows it.
 * @param sha256 The payload's SHA-256.
 * @returns The bytes and their size.
 * @throws ViewerRefusal (404) for a payload no event of the run names; (403) below `bodies`.
 */
export async function wholePayload(
  model: RunModel,
  sha256: string,
): Promise<{ body: ReadableStream<Uint8Array>; size: number }> {
  const { record } = model;
  checkShown(model, `payload ${sha256}`, { needs: "bodies" });
  const named = model.events.some((e) => payloadsOf(e).includes(sha256) || replyOf(e) === sha256);
  if (!named) throw new ViewerRefusal(404, `no event of run "${record.runId}" names payload ${sha256}`);
  // a payload without a file of its own is small: in the pack of a run of format 2 (read whole, hash checked)
  const file = record.folder === null ? null : await openPayloadFile(record.folder, sha256).catch((error) => {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  });
  if (file === null) {
    const bytes = await record.payload(sha256);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes);
        controller.close();
      },
    });
    return { body, size: bytes.length };
  }
  const size = (await file.stat()).size;
  return { body: file.readable, size };
}

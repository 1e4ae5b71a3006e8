/**
 * What a run page cuts, whole, for the one request that asks for it: an event's content, a model call's
 * answer, and a payload's bytes (streamed from the run folder, not read into memory). Each shows only what the
 * page itself would: the viewer's level for the run, and content of a run that does not verify only when the
 * request asks for it as the page does.
 * @module
 */
import { payloadsOf } from "../evidence/event.ts";
import type { RunRecord } from "../evidence/record.ts";
import { answerOf, replyOf } from "../live/feed.ts";
import { payloadOf } from "../live/live.ts";
import type { EvidenceStore } from "../store/store.ts";
import { lineSha256, type RunModel, runModel, type RunModelOptions } from "./run_model.ts";
import type { ViewEvent } from "./view_event.ts";
import { openPayloadFile } from "./view_payload.ts";
import { ViewerRefusal } from "./viewer_http.ts";

async function modelWithContent(
  store: EvidenceStore,
  record: RunRecord,
  options: RunModelOptions,
  what: string,
): Promise<RunModel> {
  const model = await runModel(store, record, options);
  if (model.level === null) {
    throw new ViewerRefusal(403, `${what} is hidden: the viewer shows only the structure of this run`);
  }
  if (!model.verdict.ok && !model.untrusted) {
    throw new ViewerRefusal(
      403,
      `${what} is hidden: run "${record.runId}" does not verify; ask with ?untrusted=1 to see it unverified`,
    );
  }
  return model;
}

function indexOf(model: RunModel, seq: number): number {
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
 * @param store The store.
 * @param record The run.
 * @param options The policy, whether unverified content was asked for, and the event's seq.
 * @returns The event.
 * @throws ViewerRefusal (404) for an event the run does not have; (403) when its content is hidden.
 */
export async function wholeEvent(
  store: EvidenceStore,
  record: RunRecord,
  options: RunModelOptions & { seq: number },
): Promise<ViewEvent> {
  const model = await modelWithContent(store, record, options, `the content of event ${options.seq}`);
  const i = indexOf(model, options.seq);
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
    shown: model.shown[i] ?? null,
  };
}

/**
 * The whole answer of a model call, as text.
 *
 * @param store The store.
 * @param record The run.
 * @param options The policy, whether unverified content was asked for, and the event's seq.
 * @returns The answer.
 * @throws ViewerRefusal (404) when the event records no answer; (403) below `bodies`.
 */
export async function wholeAnswer(
  store: EvidenceStore,
  record: RunRecord,
  options: RunModelOptions & { seq: number },
): Promise<string> {
  const what = `the answer of event ${options.seq}`;
  const model = await modelWithContent(store, record, options, what);
  if (model.level !== "bodies") {
    throw new ViewerRefusal(403, `${what} is hidden: it needs "receives: bodies"`);
  }
  const reply = replyOf(model.events[indexOf(model, options.seq)]!);
  const answer = reply === null ? null : answerOf(await payloadOf(record, reply));
  if (answer === null) throw new ViewerRefusal(404, `event ${options.seq} records no answer of a model call`);
  return answer;
}

/**
 * A payload's bytes as a stream, from the run folder (or read whole, for a run without one here).
 *
 * @param store The store.
 * @param record The run.
 * @param options The policy, whether unverified content was asked for, and the payload's SHA-256.
 * @returns The bytes and their size.
 * @throws ViewerRefusal (404) for a payload no event of the run names; (403) below `bodies`.
 */
export async function wholePayload(
  store: EvidenceStore,
  record: RunRecord,
  options: RunModelOptions & { sha256: string },
): Promise<{ body: ReadableStream<Uint8Array>; size: number }> {
  const what = `payload ${options.sha256}`;
  const model = await modelWithContent(store, record, options, what);
  if (model.level !== "bodies") {
    throw new ViewerRefusal(403, `${what} is hidden: it needs "receives: bodies"`);
  }
  const named = model.events.some((e) =>
    payloadsOf(e).includes(options.sha256) || replyOf(e) === options.sha256
  );
  if (!named) {
    throw new ViewerRefusal(404, `no event of run "${record.runId}" names payload ${options.sha256}`);
  }
  if (record.folder === null) {
    const bytes = await record.payload(options.sha256);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes);
        controller.close();
      },
    });
    return { body, size: bytes.length };
  }
  const file = await openPayloadFile(record.folder, options.sha256);
  const size = (await file.stat()).size;
  return { body: file.readable, size };
}

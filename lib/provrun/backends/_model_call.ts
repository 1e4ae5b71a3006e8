/**
 * One model call as the capture records it, streamed or not: its step opened and the call made inside it (a
 * call that throws is `step_failed`), the model it asked and where a part served it from, and its end as
 * `model_called` with its usage, its reply and its exact tokens as payloads.
 * @module
 */
import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4Usage } from "@ai-sdk/provider";
import type { Json } from "../../provevi/mod.ts";
import type { EvidenceRecorder, OpenStep } from "../run/recorder.ts";
import { SERVED_FROM, type ServedFrom } from "../run/run_part.ts";
import { chatContentOn, chatEnd, chatStart } from "./chat_span.ts";
import { TOKEN_IDS_KEY } from "./token_ids.ts";
import { canonicalText, paramsJson, requestBody } from "./call_request.ts";
import type { CallUsage, CaptureOptions } from "./capture_options.ts";

/** What the capture of one model holds. */
export interface Capture {
  recorder: EvidenceRecorder;
  model: LanguageModelV4;
  options: CaptureOptions;
}

/** The provider's call of a model that does not stream. */
export type DoGenerate = () => PromiseLike<Awaited<ReturnType<LanguageModelV4["doGenerate"]>>>;

/**
 * The model a call asked, as it was when the call started: a model that serves some calls from a run's evidence
 * and others live (a fork, a resume) names, call by call, the model each one asked.
 */
export interface Asked {
  readonly provider: string;
  readonly modelId: string;
  /** The run and event a part served this call from (`data.served_from`), or null. */
  servedFrom: ServedFrom | null;
}

/**
 * Starts a model call's step and makes the call inside it. A call that throws is written as `step_failed`
 * with the parameters sent, and thrown again; else the request (parameters and wire body) is stored.
 */
export async function openCall<R extends { request?: { body?: unknown } }>(
  capture: Capture,
  params: LanguageModelV4CallOptions,
  run: { streamed: boolean; call: () => PromiseLike<R> },
): Promise<{ step: OpenStep; result: R; request: string | null; asked: Asked }> {
  const { recorder, options } = capture;
  const { call } = run;
  const model: Asked = { provider: capture.model.provider, modelId: capture.model.modelId, servedFrom: null };
  const step = startCall(recorder, model, params, { ...options, streamed: run.streamed });
  const sent = await paramsJson(recorder, params);
  chatContentOn(step, sent, null);
  let result: R;
  try {
    result = await step.within(() => call());
  } catch (error) {
    model.servedFrom = servedFromOf(error);
    await step.fail("model_called", error, {
      payload: await recorder.payload(canonicalText({ params: sent })),
      data: callData(model, run.streamed),
    });
    throw error;
  }
  const request = await recorder.payload(
    canonicalText(await requestBody(recorder, sent, result.request?.body)),
  );
  model.servedFrom = servedFromOf(result);
  return { step, result, request, asked: model };
}

function startCall(
  recorder: EvidenceRecorder,
  model: Asked,
  params: LanguageModelV4CallOptions,
  options: CaptureOptions & { streamed: boolean },
): OpenStep {
  const { kind, attributes } = chatStart(model, params, options);
  return recorder.startStep({
    component: options.component,
    spanName: `chat ${model.modelId}`,
    attributes,
    kind,
  });
}

/** The `data` every record of a model call starts with: the model asked, streamed or not, where it was served from. */
export function callData(model: Asked, streamed: boolean): { [key: string]: Json } {
  const data: { [key: string]: Json } = { provider: model.provider, model: model.modelId, streamed };
  if (model.servedFrom) data.served_from = { ...model.servedFrom };
  return data;
}

/** Where a part served a call's answer (or its error) from, when it did. */
function servedFromOf(value: unknown): ServedFrom | null {
  const served = (value as { [SERVED_FROM]?: unknown } | null)?.[SERVED_FROM] as ServedFrom | undefined;
  return served && typeof served.run_id === "string" && Number.isSafeInteger(served.seq)
    ? { run_id: served.run_id, seq: served.seq }
    : null;
}

/** Ends a model call's step with `model_called`: its model, usage, finish, tool calls, reply and cost. */
export async function endCall(
  step: OpenStep,
  model: Asked,
  options: CaptureOptions,
  call: {
    streamed: boolean;
    request: string | null;
    reply: string | null;
    answeredBy: string | null;
    responseId: string | null;
    usage: LanguageModelV4Usage | null;
    finish: string;
    firstChunk: number | null;
    toolCalls: { id: string; name: string }[];
    /** The payload of the call's exact tokens, where the provider returned them. */
    tokens: string | null;
  },
): Promise<void> {
  const u = usageOf(call.usage);
  chatEnd(step, model, call);
  const data: { [key: string]: Json } = {
    ...callData(model, call.streamed),
    answered_by: call.answeredBy ?? model.modelId,
    input_tokens: u.input,
    output_tokens: u.output,
    cache_read_tokens: u.cacheRead,
    cache_write_tokens: u.cacheWrite,
    reasoning_tokens: call.usage?.outputTokens.reasoning ?? 0,
    finish_reason: call.finish,
    tool_calls: call.toolCalls,
    ...(call.reply ? { response_payload: call.reply } : {}),
    ...(call.tokens ? { tokens_payload: call.tokens } : {}),
  };
  if (options.price) data.cost = options.price(data);
  await step.end("model_called", { payload: call.request, data });
  options.onUsage?.(u);
}

/** Stores a call's exact tokens (`token_ids.ts`) as a payload, where its provider metadata holds them. */
export async function tokensPayload(recorder: EvidenceRecorder, metadata: unknown): Promise<string | null> {
  const tokens = typeof metadata === "object" && metadata !== null
    ? (metadata as Record<string, unknown>)[TOKEN_IDS_KEY]
    : undefined;
  return tokens === undefined || tokens === null ? null : await recorder.payload(tokens as Json);
}

/** The token counts of a call's usage; zero where the provider gave none. */
export function usageOf(usage: LanguageModelV4Usage | null): CallUsage {
  return {
    input: usage?.inputTokens.total ?? 0,
    output: usage?.outputTokens.total ?? 0,
    cacheRead: usage?.inputTokens.cacheRead ?? 0,
    cacheWrite: usage?.inputTokens.cacheWrite ?? 0,
  };
}

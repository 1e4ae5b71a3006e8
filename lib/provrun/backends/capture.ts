/**
 * Capture of model calls: an AI SDK language-model middleware whose `wrapGenerate` and `wrapStream` write
 * `model_called` for every request, streamed or not, with the request and the reply as payloads and the token
 * counts in `data`. A stream that fails part way records what arrived, then `step_failed`. A tool that the
 * provider ran (a tool result in the model's reply) is written as `tool_called` just after its
 * `model_called`, with confidence `parsed`, no `started_at`, and its span inside the model call's span.
 * @module
 */
import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4Middleware,
  LanguageModelV4StreamPart,
  LanguageModelV4Usage,
} from "@ai-sdk/provider";
import { wrapLanguageModel } from "ai";
import type { Json } from "../../provevi/mod.ts";
import { errorMessage, errorName, type EvidenceRecorder, type OpenStep } from "../run/recorder.ts";

/** The token counts of one model call. */
export interface CallUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

/** Options of the capture. */
export interface CaptureOptions {
  /** The class named as each event's component. */
  component: string;
  /** Called after each call with its usage, so the run can enforce its token limit. */
  onUsage?: (usage: CallUsage) => void;
  /** Called with each piece of a streamed answer as it arrives (the live feed). */
  onText?: (piece: string) => void;
  /** Called with a whole reply that did not stream, before its `model_called` (the live feed). */
  onReply?: (reply: Json) => void;
}

/**
 * Wraps a model so that every request it answers is recorded.
 *
 * @param model The provider's model.
 * @param recorder The run's recorder.
 * @param options The component and a usage callback.
 * @returns The wrapped model, to pass to `generateText` or `streamText`.
 * @example
 * ```ts
 * import { captureModel } from "./capture.ts";
 * // const model = captureModel(openai("gpt-4o-mini"), recorder, { component: "CallBackend" });
 * ```
 */
export function captureModel(
  model: LanguageModelV4,
  recorder: EvidenceRecorder,
  options: CaptureOptions,
): LanguageModelV4 {
  const middleware: LanguageModelV4Middleware = {
    specificationVersion: "v4",
    wrapGenerate: async ({ doGenerate, params }) => {
      const { step, result, request: requestSha } = await openCall(
        { recorder, model, options },
        params,
        { streamed: false, call: doGenerate },
      );
      const reply = {
        content: result.content,
        finish_reason: result.finishReason,
        usage: result.usage,
        response: { id: result.response?.id, model: result.response?.modelId, body: result.response?.body },
      } as unknown as Json;
      const replySha = await recorder.payload(reply);
      options.onReply?.(reply);
      const toolCalls = result.content.filter((c) => c.type === "tool-call").map((c) => ({
        id: c.toolCallId,
        name: c.toolName,
      }));
      await endCall(step, model, options, {
        streamed: false,
        request: requestSha,
        reply: replySha,
        answeredBy: result.response?.modelId ?? null,
        usage: result.usage,
        finish: result.finishReason.unified,
        toolCalls,
      });
      await recordProviderTools(recorder, step, options, result.content);
      return result;
    },
    wrapStream: async ({ doStream, params }) => {
      const { step, result, request } = await openCall(
        { recorder, model, options },
        params,
        { streamed: true, call: doStream },
      );
      const reader = result.stream.getReader();
      const arrived: LanguageModelV4StreamPart[] = [];
      let text = "";
      let usage: LanguageModelV4Usage | null = null;
      let finish = "other";
      let answeredBy: string | null = null;
      const toolCalls: { id: string; name: string }[] = [];
      const providerParts: LanguageModelV4Content[] = [];
      let done = false;
      let streamError: unknown = null;
      const summary = () => ({
        text,
        parts: arrived,
        usage,
        finish_reason: finish,
        response: { model: answeredBy },
      });
      const stream = new ReadableStream<LanguageModelV4StreamPart>({
        pull: async (controller) => {
          let next;
          try {
            next = await reader.read();
          } catch (error) {
            if (!done) {
              done = true;
              const reply = await recorder.payload({ ...summary(), partial: true } as unknown as Json);
              await step.fail("model_called", error, {
                payload: request,
                data: {
                  ...callData(model, true),
                  partial: true,
                  response_payload: reply,
                  chars: text.length,
                },
              });
            }
            controller.error(error);
            return;
          }
          if (next.done) {
            if (!done && streamError !== null) {
              // The provider reported an error inside the stream (an `error` part) and then ended it: the
              // call failed, though nothing threw here, so it is a step_failed with what arrived.
              done = true;
              const reply = await recorder.payload({ ...summary(), partial: true } as unknown as Json);
              const u = usageOf(usage);
              await step.fail("model_called", streamError, {
                payload: request,
                data: {
                  ...callData(model, true),
                  partial: true,
                  response_payload: reply,
                  chars: text.length,
                  finish_reason: finish,
                  input_tokens: u.input,
                  output_tokens: u.output,
                },
              });
              options.onUsage?.(u);
            }
            if (!done) {
              done = true;
              const reply = await recorder.payload(summary() as unknown as Json);
              await endCall(step, model, options, {
                streamed: true,
                request,
                reply,
                answeredBy,
                usage,
                finish,
                toolCalls,
              });
              await recordProviderTools(recorder, step, options, providerParts);
            }
            controller.close();
            return;
          }
          const part = next.value;
          if (part.type === "text-delta") {
            text += part.delta;
            options.onText?.(part.delta);
          } else if (part.type === "response-metadata") answeredBy = part.modelId ?? answeredBy;
          else if (part.type === "tool-call") toolCalls.push({ id: part.toolCallId, name: part.toolName });
          if ((part.type === "tool-call" && part.providerExecuted) || part.type === "tool-result") {
            providerParts.push(part);
          } else if (part.type === "finish") {
            usage = part.usage;
            finish = part.finishReason.unified;
          }
          if (part.type === "error") {
            streamError ??= part.error ?? new Error("the provider reported an error in the stream");
            // An Error is `{}` as JSON; keep its name and message.
            arrived.push({
              type: "error",
              error: { name: errorName(part.error), message: errorMessage(part.error) },
            });
          } else if (part.type !== "text-delta") arrived.push(part);
          controller.enqueue(part);
        },
        cancel: async (reason) => {
          if (!done) {
            done = true;
            await step.fail("model_called", reason ?? new Error("the stream was cancelled"), {
              payload: request,
              data: { ...callData(model, true), partial: true },
            });
          }
          await reader.cancel(reason);
        },
      });
      return { ...result, stream };
    },
  };
  return wrapLanguageModel({ model, middleware });
}

/**
 * Starts a model call's step and makes the call inside it. A call that throws is written as `step_failed`
 * with the parameters sent, and thrown again; else the request (parameters and wire body) is stored.
 */
async function openCall<R extends { request?: { body?: unknown } }>(
  capture: { recorder: EvidenceRecorder; model: LanguageModelV4; options: CaptureOptions },
  params: LanguageModelV4CallOptions,
  run: { streamed: boolean; call: () => PromiseLike<R> },
): Promise<{ step: OpenStep; result: R; request: string | null }> {
  const { recorder, model, options } = capture;
  const { call } = run;
  const step = startCall(recorder, model, params, options);
  const sent = await paramsJson(recorder, params);
  let result: R;
  try {
    result = await step.within(() => call());
  } catch (error) {
    await step.fail("model_called", error, {
      payload: await recorder.payload({ params: sent }),
      data: callData(model, run.streamed),
    });
    throw error;
  }
  const request = await recorder.payload(await requestBody(recorder, sent, result.request?.body));
  return { step, result, request };
}

function startCall(
  recorder: EvidenceRecorder,
  model: LanguageModelV4,
  params: LanguageModelV4CallOptions,
  options: CaptureOptions,
): OpenStep {
  const attributes: Record<string, string | number> = {
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": model.provider,
    "gen_ai.request.model": model.modelId,
  };
  if (params.temperature !== undefined) attributes["gen_ai.request.temperature"] = params.temperature;
  if (params.maxOutputTokens !== undefined) attributes["gen_ai.request.max_tokens"] = params.maxOutputTokens;
  if (params.topP !== undefined) attributes["gen_ai.request.top_p"] = params.topP;
  return recorder.startStep({ component: options.component, spanName: `chat ${model.modelId}`, attributes });
}

function callData(model: LanguageModelV4, streamed: boolean): { [key: string]: Json } {
  return { provider: model.provider, model: model.modelId, streamed };
}

async function endCall(
  step: OpenStep,
  model: LanguageModelV4,
  options: CaptureOptions,
  call: {
    streamed: boolean;
    request: string | null;
    reply: string | null;
    answeredBy: string | null;
    usage: LanguageModelV4Usage | null;
    finish: string;
    toolCalls: { id: string; name: string }[];
  },
): Promise<void> {
  const u = usageOf(call.usage);
  const span = step.span;
  span.setAttribute("gen_ai.response.model", call.answeredBy ?? model.modelId);
  span.setAttribute("gen_ai.usage.input_tokens", u.input);
  span.setAttribute("gen_ai.usage.output_tokens", u.output);
  span.setAttribute("gen_ai.usage.cache_read.input_tokens", u.cacheRead);
  span.setAttribute("gen_ai.usage.cache_creation.input_tokens", u.cacheWrite);
  span.setAttribute("gen_ai.response.finish_reasons", [call.finish]);
  if (call.request) span.setAttribute("gen_ai.input.messages_ref", call.request);
  if (call.reply) span.setAttribute("gen_ai.output.messages_ref", call.reply);
  await step.end("model_called", {
    payload: call.request,
    data: {
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
    },
  });
  options.onUsage?.(u);
}

/**
 * Writes `tool_called` for each tool the provider ran in one reply: the arguments from its tool call, the
 * result from its tool result. provrun did not see it run, so it has no `started_at`, and confidence `parsed`.
 */
function usageOf(usage: LanguageModelV4Usage | null): CallUsage {
  return {
    input: usage?.inputTokens.total ?? 0,
    output: usage?.outputTokens.total ?? 0,
    cacheRead: usage?.inputTokens.cacheRead ?? 0,
    cacheWrite: usage?.inputTokens.cacheWrite ?? 0,
  };
}

async function recordProviderTools(
  recorder: EvidenceRecorder,
  step: OpenStep,
  options: CaptureOptions,
  content: LanguageModelV4Content[],
): Promise<void> {
  const calls = new Map<string, { name: string; input: string }>();
  for (const c of content) {
    if (c.type === "tool-call" && c.providerExecuted) {
      calls.set(c.toolCallId, { name: c.toolName, input: c.input });
    }
  }
  for (const r of content) {
    if (r.type !== "tool-result" || r.preliminary) continue;
    const call = calls.get(r.toolCallId);
    const args = call ? await recorder.payload(JSON.stringify(tryJson(call.input))) : null;
    const result = await recorder.payload(JSON.stringify(r.result));
    const child = step.within(() =>
      recorder.startStep({
        component: options.component,
        spanName: `execute_tool ${r.toolName}`,
        attributes: {
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": r.toolName,
          "gen_ai.tool.call.id": r.toolCallId,
          "gen_ai.tool.type": "extension",
          ...(args ? { "gen_ai.tool.call.arguments_ref": args } : {}),
          ...(result ? { "gen_ai.tool.call.result_ref": result } : {}),
        },
      })
    );
    const ids = child.span.spanContext();
    try {
      await recorder.record({
        type: "tool_called",
        component: options.component,
        trace_id: ids.traceId,
        span_id: ids.spanId,
        parent_span_id: step.span.spanContext().spanId,
        confidence: "parsed",
        payload: args,
        data: {
          tool: r.toolName,
          call_id: r.toolCallId,
          error: r.isError ? "ProviderToolError" : null,
          result_payload: result,
          executed_by: "provider",
          sandboxed: false,
        },
      });
    } finally {
      child.span.end();
    }
  }
}

/**
 * The call's options as JSON, without the abort signal and headers (which may hold keys); file bytes are
 * stored as their own payloads and named `{"$payload": sha256}`.
 */
async function paramsJson(recorder: EvidenceRecorder, params: LanguageModelV4CallOptions): Promise<Json> {
  const { abortSignal: _a, headers: _h, ...rest } = params as LanguageModelV4CallOptions & {
    headers?: unknown;
  };
  return await toJson(recorder, rest);
}

async function toJson(recorder: EvidenceRecorder, value: unknown): Promise<Json> {
  if (value instanceof Uint8Array) return { $payload: await recorder.payload(value) };
  if (value instanceof URL) return value.href;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return await Promise.all(value.map((v) => toJson(recorder, v)));
  if (value && typeof value === "object") {
    const out: { [key: string]: Json } = {};
    for (const [k, v] of Object.entries(value)) {
      if (v !== undefined && typeof v !== "function") out[k] = await toJson(recorder, v);
    }
    return out;
  }
  return (value ?? null) as Json;
}

/** The request payload: the options, and the body that crossed the wire when the provider gave it. */
async function requestBody(recorder: EvidenceRecorder, sent: Json, wire: unknown): Promise<Json> {
  const body: { [key: string]: Json } = { params: sent };
  if (wire !== undefined) body.wire = typeof wire === "string" ? tryJson(wire) : await toJson(recorder, wire);
  return body;
}

function tryJson(text: string): Json {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

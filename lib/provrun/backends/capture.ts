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
  LanguageModelV4Middleware,
  LanguageModelV4StreamPart,
} from "@ai-sdk/provider";
import { wrapLanguageModel } from "ai";
import type { Json } from "../../provevi/mod.ts";
import type { EvidenceRecorder } from "../run/recorder.ts";
import { chatContentOn } from "./chat_span.ts";
import { type Capture, type DoGenerate, endCall, openCall, tokensPayload, usageOf } from "./_model_call.ts";
import { recordProviderTools } from "./_provider_tools.ts";
import { StreamCapture } from "./_stream_capture.ts";
import type { CaptureOptions } from "./capture_options.ts";

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
  const capture: Capture = { recorder, model, options };
  if (options.record === false) return wrapLanguageModel({ model, middleware: observing(options) });
  const middleware: LanguageModelV4Middleware = {
    specificationVersion: "v4",
    wrapGenerate: ({ doGenerate, params }) => generateCaptured(capture, params, doGenerate),
    wrapStream: async ({ doStream, params }) => {
      const started = performance.now();
      const { step, result, request, asked } = await openCall(capture, params, {
        streamed: true,
        call: doStream,
      });
      const reader = result.stream.getReader();
      return {
        ...result,
        stream: new StreamCapture(capture, { step, request, asked, started, reader }).stream,
      };
    },
  };
  return wrapLanguageModel({ model, middleware });
}

/** A middleware that records nothing: it gives the text, the replies and the usage to the callbacks. */
function observing(options: CaptureOptions): LanguageModelV4Middleware {
  return {
    specificationVersion: "v4",
    wrapGenerate: async ({ doGenerate }) => {
      const result = await doGenerate();
      options.onReply?.({ content: result.content, finish_reason: result.finishReason } as unknown as Json);
      options.onUsage?.(usageOf(result.usage));
      return result;
    },
    wrapStream: async ({ doStream }) => {
      const result = await doStream();
      const stream = result.stream.pipeThrough(
        new TransformStream<LanguageModelV4StreamPart, LanguageModelV4StreamPart>({
          transform(part, controller) {
            if (part.type === "text-delta") options.onText?.(part.delta);
            else if (part.type === "finish") options.onUsage?.(usageOf(part.usage));
            controller.enqueue(part);
          },
        }),
      );
      return { ...result, stream };
    },
  };
}

/** A call that did not stream: recorded once its whole reply is in. */
async function generateCaptured(
  capture: Capture,
  params: LanguageModelV4CallOptions,
  doGenerate: DoGenerate,
): Promise<Awaited<ReturnType<DoGenerate>>> {
  const { recorder, options } = capture;
  const { step, result, request: requestSha, asked } = await openCall(capture, params, {
    streamed: false,
    call: doGenerate,
  });
  const reply = {
    content: result.content,
    finish_reason: result.finishReason,
    usage: result.usage,
    response: { id: result.response?.id, model: result.response?.modelId, body: result.response?.body },
  } as unknown as Json;
  const replySha = await recorder.payload(reply);
  chatContentOn(step, null, reply);
  options.onReply?.(reply);
  const toolCalls = result.content.filter((c) => c.type === "tool-call").map((c) => ({
    id: c.toolCallId,
    name: c.toolName,
  }));
  await endCall(step, asked, options, {
    streamed: false,
    request: requestSha,
    reply: replySha,
    answeredBy: result.response?.modelId ?? null,
    responseId: result.response?.id ?? null,
    usage: result.usage,
    finish: result.finishReason.unified,
    firstChunk: null,
    toolCalls,
    tokens: await tokensPayload(recorder, result.providerMetadata),
  });
  await recordProviderTools(recorder, step, options, result.content);
  return result;
}

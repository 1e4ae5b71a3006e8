/**
 * The `chat` span of one model call, as the GenAI semantic conventions (v1.41.1, "Inference") have it: its
 * kind (`CLIENT` for a model over the network), the attributes known when the request starts (operation,
 * provider, model, server, the request's settings, streaming, conversation), those known at its end (response
 * ID and model, finish reasons, token counts, time to first chunk), and its content (messages, system
 * instructions, tool definitions), which only a destination at `bodies` receives.
 * @module
 */
import { type Attributes, SpanKind } from "@opentelemetry/api";
import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4Usage } from "@ai-sdk/provider";
import type { Json } from "../../provevi/mod.ts";
import { capJson, chatContent, finishReason, outputMessages } from "../../provevi/telemetry/mod.ts";
import type { OpenStep } from "../run/recorder.ts";
import { setSpanContent } from "../run/_span_content.ts";
import type { ModelServer } from "./model_server.ts";

/** The model a call asked: its provider ID and model ID, as the AI SDK names them. */
export type CalledModel = Pick<LanguageModelV4, "provider" | "modelId">;

/** What a chat span knows of the run beyond the call: the model's server and the conversation. */
export interface ChatSpanContext {
  /** The provider and server of the run's model; the AI SDK's provider ID, no server, when not given. */
  server?: ModelServer | undefined;
  /** The run's session, as `gen_ai.conversation.id`. */
  conversationId?: string | null | undefined;
}

/** The request's settings and the conventions' attribute of each. */
const SETTINGS: readonly [keyof LanguageModelV4CallOptions, string][] = [
  ["temperature", "gen_ai.request.temperature"],
  ["maxOutputTokens", "gen_ai.request.max_tokens"],
  ["topP", "gen_ai.request.top_p"],
  ["topK", "gen_ai.request.top_k"],
  ["seed", "gen_ai.request.seed"],
  ["frequencyPenalty", "gen_ai.request.frequency_penalty"],
  ["presencePenalty", "gen_ai.request.presence_penalty"],
];

/**
 * The kind and attributes of a chat span as its request starts.
 *
 * @param model The provider's model.
 * @param params The call's options.
 * @param call Whether it streams, and the run's server and conversation.
 * @returns The span's kind and attributes.
 */
export function chatStart(
  model: CalledModel,
  params: LanguageModelV4CallOptions,
  call: ChatSpanContext & { streamed: boolean },
): { kind: SpanKind; attributes: Attributes } {
  const server = call.server;
  const attributes: Attributes = {
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": server?.provider ?? model.provider,
    "gen_ai.request.model": model.modelId,
  };
  if (server?.address) {
    attributes["server.address"] = server.address;
    if (server.port !== null) attributes["server.port"] = server.port;
  }
  for (const [from, to] of SETTINGS) {
    const value = params[from];
    if (typeof value === "number" && Number.isFinite(value)) attributes[to] = value;
  }
  if (params.stopSequences?.length) attributes["gen_ai.request.stop_sequences"] = [...params.stopSequences];
  if (call.streamed) attributes["gen_ai.request.stream"] = true;
  if (params.responseFormat) attributes["gen_ai.output.type"] = params.responseFormat.type;
  if (call.conversationId) attributes["gen_ai.conversation.id"] = call.conversationId;
  // A model in the process (the scripted one) is INTERNAL; one over HTTP is CLIENT, as the conventions ask.
  return { kind: server && server.address === null ? SpanKind.INTERNAL : SpanKind.CLIENT, attributes };
}

/** What a chat span learns at its end. */
export interface ChatEnd {
  /** The model the provider says answered. */
  answeredBy: string | null;
  /** The provider's ID of the response. */
  responseId: string | null;
  usage: LanguageModelV4Usage | null;
  /** The AI SDK's unified finish reason. */
  finish: string;
  /** Seconds from the request to the first part of a streamed reply, or null. */
  firstChunk: number | null;
  /** The payloads of the request and the reply, named on the span under provrun's own keys. */
  request: string | null;
  reply: string | null;
}

/**
 * Sets what a chat span learns at its end: response, finish reasons, token counts, time to first chunk, and
 * the payloads' references.
 *
 * @param step The call's step.
 * @param model The provider's model.
 * @param end What the reply said.
 */
export function chatEnd(step: OpenStep, model: CalledModel, end: ChatEnd): void {
  const span = step.span;
  const u = end.usage;
  span.setAttribute("gen_ai.response.model", end.answeredBy ?? model.modelId);
  if (end.responseId) span.setAttribute("gen_ai.response.id", end.responseId);
  span.setAttribute("gen_ai.usage.input_tokens", u?.inputTokens.total ?? 0);
  span.setAttribute("gen_ai.usage.output_tokens", u?.outputTokens.total ?? 0);
  span.setAttribute("gen_ai.usage.cache_read.input_tokens", u?.inputTokens.cacheRead ?? 0);
  span.setAttribute("gen_ai.usage.cache_creation.input_tokens", u?.inputTokens.cacheWrite ?? 0);
  if (typeof u?.outputTokens.reasoning === "number") {
    span.setAttribute("gen_ai.usage.reasoning.output_tokens", u.outputTokens.reasoning);
  }
  span.setAttribute("gen_ai.response.finish_reasons", [finishReason(end.finish)]);
  if (end.firstChunk !== null) span.setAttribute("gen_ai.response.time_to_first_chunk", end.firstChunk);
  if (end.request) span.setAttribute("provrun.input.messages_ref", end.request);
  if (end.reply) span.setAttribute("provrun.output.messages_ref", end.reply);
}

/**
 * Puts a call's content on its span, when a destination receives it: the messages, system instructions and
 * tool definitions it sent, and what it answered once the reply is in.
 *
 * @param step The call's step.
 * @param sent The call's options as the evidence keeps them.
 * @param reply The reply payload's JSON, or null.
 */
export function chatContentOn(step: OpenStep, sent: Json | null, reply: Json | null): void {
  setSpanContent(step.span, () => ({
    ...(sent === null ? {} : chatContent(sent, null)),
    ...(reply === null ? {} : { "gen_ai.output.messages": capJson(outputMessages(reply)).text }),
  }));
}

/**
 * The `chat` span of a model call through the gateway, as the GenAI semantic conventions (v1.41.1, "Inference")
 * have it, so that a program's model calls meet the same table as an agent run's: a CLIENT span with the
 * provider's well-known name and the server behind the gateway (never the gateway's own address), the request's
 * settings as the program sent them in its provider's API (Anthropic Messages, OpenAI Chat, OpenAI Responses),
 * whether it streamed, the run's conversation; at its end the response's ID and model, finish reasons in the
 * conventions' spellings, token counts and the time to the first chunk. It also reads the tools a request offered,
 * so that the `execute_tool` spans of the program's hooks carry each tool's description.
 * @module
 */
import type { Attributes } from "@opentelemetry/api";
import type { Json } from "../../provevi/mod.ts";
import { finishReason, providerName } from "../../provevi/telemetry/mod.ts";
import type { ApiName, ResponseSummary } from "./provider_api.ts";

/** Where the gateway's calls go and what they belong to, as the conventions name it. */
export interface GatewaySpanContext {
  /** `gen_ai.provider.name`, well-known (`anthropic`, `openai`, …). */
  provider: string;
  /** The upstream's host and port, or null. */
  address: string | null;
  port: number | null;
  /** The run's session, as `gen_ai.conversation.id`. */
  conversationId: string | null;
}

/**
 * The span context of a gateway that forwards to `upstream` for `provider`: the well-known provider of the
 * upstream's host (else of the route's provider), and the upstream's host and port.
 *
 * @param provider The run's provider (`anthropic`, `openai`, `openai-compatible`).
 * @param options The upstream's base URL and the run's session.
 * @returns The context.
 * @example
 * ```ts
 * import { gatewaySpanContext } from "./gateway_span.ts";
 * gatewaySpanContext("anthropic", { upstream: "https://api.anthropic.com", conversationId: null });
 * // { provider: "anthropic", address: "api.anthropic.com", port: 443, conversationId: null }
 * ```
 */
export function gatewaySpanContext(
  provider: string,
  options: { upstream: string; conversationId: string | null },
): GatewaySpanContext {
  let url: URL | null = null;
  try {
    url = new URL(options.upstream);
  } catch { /* an upstream that is no URL names no server */ }
  const address = url ? url.hostname.replace(/^\[(.*)\]$/, "$1") : null;
  const port = url ? Number(url.port || (url.protocol === "https:" ? 443 : 80)) : null;
  return { provider: providerName(provider, address), address, port, conversationId: options.conversationId };
}

type Obj = { [key: string]: Json };
const isObj = (v: Json | undefined): v is Obj => v !== null && typeof v === "object" && !Array.isArray(v);
const finite = (v: Json | undefined): v is number => typeof v === "number" && Number.isFinite(v);

/** Each API's request fields and the conventions' attribute of each (numbers). */
const NUMBERS: Record<ApiName, readonly [string, string][]> = {
  "anthropic-messages": [
    ["max_tokens", "gen_ai.request.max_tokens"],
    ["temperature", "gen_ai.request.temperature"],
    ["top_p", "gen_ai.request.top_p"],
    ["top_k", "gen_ai.request.top_k"],
  ],
  "openai-chat": [
    ["max_completion_tokens", "gen_ai.request.max_tokens"],
    ["max_tokens", "gen_ai.request.max_tokens"],
    ["temperature", "gen_ai.request.temperature"],
    ["top_p", "gen_ai.request.top_p"],
    ["frequency_penalty", "gen_ai.request.frequency_penalty"],
    ["presence_penalty", "gen_ai.request.presence_penalty"],
    ["seed", "gen_ai.request.seed"],
  ],
  "openai-responses": [
    ["max_output_tokens", "gen_ai.request.max_tokens"],
    ["temperature", "gen_ai.request.temperature"],
    ["top_p", "gen_ai.request.top_p"],
  ],
};

/** The stop sequences of a request: Anthropic's `stop_sequences`, OpenAI's `stop` (a text or a list). */
function stopSequences(body: Obj): string[] | null {
  const value = body.stop_sequences ?? body.stop;
  const list = typeof value === "string" ? [value] : Array.isArray(value) ? value : [];
  const texts = list.filter((s): s is string => typeof s === "string");
  return texts.length ? texts : null;
}

/**
 * The attributes of a gateway's `chat` span as its request arrives.
 *
 * @param api The provider API of the request.
 * @param call The request's body (parsed JSON), the model it names, and the run's context.
 * @returns The attributes.
 * @example
 * ```ts
 * import { chatRequestAttributes } from "./gateway_span.ts";
 * const context = { provider: "anthropic", address: "api.anthropic.com", port: 443, conversationId: null };
 * chatRequestAttributes("anthropic-messages", { body: { max_tokens: 512 }, model: "claude-sonnet-4-5", context });
 * // { "gen_ai.operation.name": "chat", …, "gen_ai.request.max_tokens": 512 }
 * ```
 */
export function chatRequestAttributes(
  api: ApiName,
  call: { body: Json | undefined; model: string | null; context: GatewaySpanContext },
): Attributes {
  const { context } = call;
  const body = isObj(call.body) ? call.body : {};
  const attributes: Attributes = {
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": context.provider,
    ...(call.model ? { "gen_ai.request.model": call.model } : {}),
  };
  if (context.address !== null) {
    attributes["server.address"] = context.address;
    if (context.port !== null) attributes["server.port"] = context.port;
  }
  for (const [field, key] of NUMBERS[api]) {
    const value = body[field];
    if (finite(value) && attributes[key] === undefined) attributes[key] = value;
  }
  const stops = stopSequences(body);
  if (stops) attributes["gen_ai.request.stop_sequences"] = stops;
  if (body.stream === true) attributes["gen_ai.request.stream"] = true;
  if (context.conversationId) attributes["gen_ai.conversation.id"] = context.conversationId;
  return attributes;
}

/**
 * The attributes a gateway's `chat` span learns at its end.
 *
 * @param summary What the response said.
 * @param call The model the request named, and the seconds to the first chunk of a stream (null otherwise).
 * @returns The attributes.
 * @example
 * ```ts
 * import { chatEndAttributes } from "./gateway_span.ts";
 * const usage = { input: 21, output: 7, cacheRead: 0, cacheWrite: 0, reasoning: 0 };
 * const summary = { id: "msg_1", model: "m", usage, finish: "tool-calls", providerFinish: "tool_use", toolCalls: [] };
 * chatEndAttributes(summary, { model: "m", firstChunk: null })["gen_ai.response.finish_reasons"]; // ["tool_call"]
 * ```
 */
export function chatEndAttributes(
  summary: ResponseSummary,
  call: { model: string | null; firstChunk: number | null },
): Attributes {
  const u = summary.usage;
  return {
    "gen_ai.response.model": summary.model ?? call.model ?? "",
    ...(summary.id ? { "gen_ai.response.id": summary.id } : {}),
    "gen_ai.usage.input_tokens": u.input,
    "gen_ai.usage.output_tokens": u.output,
    "gen_ai.usage.cache_read.input_tokens": u.cacheRead,
    "gen_ai.usage.cache_creation.input_tokens": u.cacheWrite,
    "gen_ai.usage.reasoning.output_tokens": u.reasoning,
    "gen_ai.response.finish_reasons": [finishReason(summary.finish)],
    ...(call.firstChunk === null ? {} : { "gen_ai.response.time_to_first_chunk": call.firstChunk }),
  };
}

/**
 * The tools a request offered, by name, with their descriptions (Anthropic's `tools[].description`, OpenAI
 * Chat's `tools[].function.description`, OpenAI Responses' `tools[].description`).
 *
 * @param body The request's body (parsed JSON).
 * @returns Name and description of each function tool that has one.
 * @example
 * ```ts
 * import { offeredTools } from "./gateway_span.ts";
 * offeredTools({ tools: [{ name: "Read", description: "Reads a file." }] }); // [["Read", "Reads a file."]]
 * ```
 */
export function offeredTools(body: Json | undefined): [string, string][] {
  const tools = isObj(body) && Array.isArray(body.tools) ? body.tools : [];
  const out: [string, string][] = [];
  for (const tool of tools) {
    if (!isObj(tool)) continue;
    const fn = isObj(tool.function) ? tool.function : tool;
    if (typeof fn.name === "string" && typeof fn.description === "string") {
      out.push([fn.name, fn.description]);
    }
  }
  return out;
}

/**
 * A provider API as the gateway speaks it: which requests are model calls, how a stream is reassembled into the
 * response a call without streaming would have had, what a response says (the model that answered, its ID, the
 * usage, why it stopped, the tool calls it asked for), and how an error is said so that the program's SDK
 * understands it (the provider's own error body, and the event that ends a stream with an error).
 * @module
 */
import type { Json } from "../../provevi/mod.ts";
import type { TokenUsage, UsageShape } from "../../provevi/cost/mod.ts";
import type { SseEvent } from "./sse.ts";

/** The APIs the gateway serves. */
export type ApiName = "anthropic-messages" | "openai-chat" | "openai-responses";

/** What a response says, for the call's `model_called`. */
export interface ResponseSummary {
  /** The provider's ID of the response (`msg_…`, `chatcmpl-…`, `resp_…`), or null. */
  id: string | null;
  /** The model that answered, or null. */
  model: string | null;
  /** The usage, in the one shape of the cost module. */
  usage: TokenUsage;
  /** Why the response stopped, as the AI SDK names it (`stop`, `tool-calls`, `length`, …). */
  finish: string;
  /** Why the response stopped, as the provider says it. */
  providerFinish: string | null;
  /** The tool calls it asked for, by ID and name. */
  toolCalls: { id: string; name: string }[];
}

/** A stream being reassembled. */
export interface StreamAssembly {
  /** Takes the next event. */
  take(event: SseEvent): void;
  /** The response the events make so far (a stream cut short gives what arrived). */
  body(): Json;
  /** The error the stream carried (an `error` event), or null. */
  error(): string | null;
  /** True when the stream reached its last event. */
  complete(): boolean;
}

/** One provider API. */
export interface ProviderApi {
  readonly name: ApiName;
  /** The provider family whose key and error format it uses. */
  readonly family: "anthropic" | "openai";
  /** The path of its model calls, under the gateway's `/v1`. */
  readonly path: string;
  /** The usage shape of its responses. */
  readonly usageShape: UsageShape;
  /** A new reassembly of a stream. */
  assemble(): StreamAssembly;
  /**
   * Texts one of which every event that can end a stream holds (its type, its data, its error), `\\u` among them
   * for a JSON escape that would spell one: a chunk that holds none of them, read from between two events,
   * cannot end the call (`stream_reading.ts`).
   */
  readonly endMarkers: readonly string[];
  /** What a response body says. */
  summary(body: Json): ResponseSummary;
}

/** The kinds of error the gateway says, each with its HTTP status. */
export type GatewayErrorKind =
  | "unauthorized"
  | "wrong_host"
  | "cross_site"
  | "not_found"
  | "too_large"
  | "malformed"
  | "unsupported_encoding"
  | "busy"
  | "bad_gateway"
  | "timeout"
  | "slow_client";

/** The status of each kind of error. */
export const ERROR_STATUS: Record<GatewayErrorKind, number> = {
  unauthorized: 401,
  wrong_host: 421,
  cross_site: 403,
  not_found: 404,
  too_large: 413,
  malformed: 400,
  unsupported_encoding: 415,
  busy: 429,
  bad_gateway: 502,
  timeout: 504,
  slow_client: 408,
};

const ANTHROPIC_TYPES: Record<GatewayErrorKind, string> = {
  unauthorized: "authentication_error",
  wrong_host: "permission_error",
  cross_site: "permission_error",
  not_found: "not_found_error",
  too_large: "request_too_large",
  malformed: "invalid_request_error",
  unsupported_encoding: "invalid_request_error",
  busy: "rate_limit_error",
  bad_gateway: "api_error",
  timeout: "api_error",
  slow_client: "invalid_request_error",
};

const OPENAI_TYPES: Record<GatewayErrorKind, [string, string]> = {
  unauthorized: ["invalid_request_error", "invalid_api_key"],
  wrong_host: ["invalid_request_error", "wrong_host"],
  cross_site: ["invalid_request_error", "cross_site"],
  not_found: ["invalid_request_error", "unknown_url"],
  too_large: ["invalid_request_error", "request_too_large"],
  malformed: ["invalid_request_error", "invalid_json"],
  unsupported_encoding: ["invalid_request_error", "unsupported_encoding"],
  busy: ["rate_limit_error", "rate_limit_exceeded"],
  bad_gateway: ["server_error", "bad_gateway"],
  timeout: ["server_error", "timeout"],
  slow_client: ["invalid_request_error", "request_timeout"],
};

/**
 * The error body a provider's SDK understands: Anthropic's `{"type":"error","error":{…}}`, OpenAI's
 * `{"error":{message,type,param,code}}`.
 *
 * @param family The provider family.
 * @param kind The kind of error.
 * @param message What happened and what to do, in one line.
 * @returns The body.
 */
export function errorBody(family: "anthropic" | "openai", kind: GatewayErrorKind, message: string): Json {
  if (family === "anthropic") return { type: "error", error: { type: ANTHROPIC_TYPES[kind], message } };
  const [type, code] = OPENAI_TYPES[kind];
  return { error: { message, type, param: null, code } };
}

/**
 * The event that ends a stream the gateway cuts (the provider dropped it, sent too much, or went silent), in the
 * API's own form, so that the program's SDK raises an error rather than waiting or taking a short answer.
 *
 * @param api The API.
 * @param message What happened.
 * @returns The event's text, ending with its blank line.
 */
export function streamErrorEvent(api: ApiName, message: string): string {
  switch (api) {
    case "anthropic-messages":
      return `event: error\ndata: ${JSON.stringify(errorBody("anthropic", "bad_gateway", message))}\n\n`;
    case "openai-chat":
      return `data: ${JSON.stringify(errorBody("openai", "bad_gateway", message))}\n\n`;
    case "openai-responses":
      return `event: response.failed\ndata: ${
        JSON.stringify({
          type: "response.failed",
          response: { status: "failed", error: { code: "server_error", message }, output: [] },
        })
      }\n\n`;
  }
}

/** An object, or an empty one. */
export function obj(v: unknown): { [key: string]: Json } {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? v as { [key: string]: Json } : {};
}

/** A text, or null. */
export function str(v: unknown): string | null {
  return typeof v === "string" ? v : null;
}

/** JSON text parsed, or null when it is not JSON. */
export function parseJson(text: string): Json | undefined {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * What the toolkit takes from the OpenTelemetry GenAI semantic conventions, v1.41.1 (the last release of
 * `open-telemetry/semantic-conventions` that holds them): the content attributes that leave only at `bodies`,
 * the attributes whose type is double, and the well-known values of `gen_ai.provider.name`.
 * @module
 */

/** The version of the GenAI semantic conventions that the spans follow. */
export const GENAI_CONVENTIONS = "1.41.1";

/**
 * The content attributes: the messages, the system instructions, the tool definitions, a tool call's arguments
 * and result, each as JSON text in the conventions' shape. Only a destination at `bodies` receives them, and
 * the store's index of spans never keeps them (the evidence holds each whole, as a payload).
 *
 * @example
 * ```ts
 * import { CONTENT_KEYS } from "./genai_conventions.ts";
 * CONTENT_KEYS.has("gen_ai.input.messages"); // true
 * ```
 */
export const CONTENT_KEYS: ReadonlySet<string> = new Set([
  "gen_ai.input.messages",
  "gen_ai.output.messages",
  "gen_ai.system_instructions",
  "gen_ai.tool.definitions",
  "gen_ai.tool.call.arguments",
  "gen_ai.tool.call.result",
]);

/**
 * The attributes the conventions type as double, which go out as doubles even when their value is whole
 * (a temperature of 0 is `0.0`, not the integer 0).
 *
 * @example
 * ```ts
 * import { DOUBLE_KEYS } from "./genai_conventions.ts";
 * DOUBLE_KEYS.has("gen_ai.request.temperature"); // true
 * ```
 */
export const DOUBLE_KEYS: ReadonlySet<string> = new Set([
  "gen_ai.request.temperature",
  "gen_ai.request.top_p",
  "gen_ai.request.top_k",
  "gen_ai.request.frequency_penalty",
  "gen_ai.request.presence_penalty",
  "gen_ai.response.time_to_first_chunk",
]);

/** Hosts of the well-known providers; a host ending in a key that starts with `.` is under that domain. */
const HOSTS: readonly [string, string][] = [
  ["api.openai.com", "openai"],
  ["api.anthropic.com", "anthropic"],
  [".openai.azure.com", "azure.ai.openai"],
  [".services.ai.azure.com", "azure.ai.inference"],
  [".inference.ai.azure.com", "azure.ai.inference"],
  [".models.ai.azure.com", "azure.ai.inference"],
  ["api.groq.com", "groq"],
  ["api.deepseek.com", "deepseek"],
  ["api.mistral.ai", "mistral_ai"],
  ["api.x.ai", "x_ai"],
  ["api.perplexity.ai", "perplexity"],
  ["api.cohere.com", "cohere"],
  ["api.cohere.ai", "cohere"],
  ["generativelanguage.googleapis.com", "gcp.gemini"],
  ["aiplatform.googleapis.com", "gcp.vertex_ai"],
  ["-aiplatform.googleapis.com", "gcp.vertex_ai"],
  [".ml.cloud.ibm.com", "ibm.watsonx.ai"],
];

/** The AI SDK's provider IDs (`anthropic.messages`) by their first part. */
const SDK: Readonly<Record<string, string>> = {
  anthropic: "anthropic",
  openai: "openai",
  // an OpenAI-compatible server speaks OpenAI's API; server.address says which one it is
  "openai-compatible": "openai",
  azure: "azure.ai.openai",
  google: "gcp.gemini",
  vertex: "gcp.vertex_ai",
  "amazon-bedrock": "aws.bedrock",
  mistral: "mistral_ai",
  groq: "groq",
  deepseek: "deepseek",
  xai: "x_ai",
  cohere: "cohere",
  perplexity: "perplexity",
};

function byHost(host: string): string | null {
  const h = host.toLowerCase();
  if (/^bedrock(-runtime)?(-fips)?\.[a-z0-9-]+\.amazonaws\.com$/.test(h)) return "aws.bedrock";
  for (const [suffix, name] of HOSTS) {
    if (suffix.startsWith(".") || suffix.startsWith("-") ? h.endsWith(suffix) : h === suffix) return name;
  }
  return null;
}

/**
 * The conventions' `gen_ai.provider.name` of a model: the well-known value of the host it reaches when the
 * host is a known provider's, else of the AI SDK's provider ID (`anthropic.messages` is `anthropic`,
 * `openai.responses` and `openai-compatible.chat` are `openai`), else the ID's first part.
 *
 * @param sdkProvider The AI SDK model's `provider`.
 * @param host The host the model's requests go to, or null.
 * @returns A well-known value where one applies.
 * @example
 * ```ts
 * import { providerName } from "./genai_conventions.ts";
 * providerName("anthropic.messages", "api.anthropic.com"); // "anthropic"
 * providerName("openai-compatible.chat", "api.groq.com"); // "groq"
 * providerName("openai-compatible.chat", "127.0.0.1"); // "openai"
 * ```
 */
export function providerName(sdkProvider: string, host: string | null = null): string {
  const known = host ? byHost(host) : null;
  if (known) return known;
  const first = sdkProvider.split(".")[0] ?? sdkProvider;
  return SDK[first] ?? first;
}

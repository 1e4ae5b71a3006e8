/**
 * The tokens and the cost of one model call. Each provider counts tokens its own way, so a call's usage is first
 * made one shape (`TokenUsage`): `input` is every prompt token, cached or not; `cacheRead` and `cacheWrite` are
 * the parts of `input` read from and written to the provider's prompt cache; `output` is every generated token;
 * `reasoning` is the part of `output` spent thinking. The cost then prices each part once: the uncached input,
 * the cache reads, the cache writes, the output that is not reasoning, and the reasoning. Money is counted in
 * whole millionths of a millionth of the currency (a bigint), so a sum never rounds.
 * @module
 */
import type { Json } from "../evidence/event.ts";
import { microUnits, type ModelPrice, PRICE_KINDS } from "./price_table.ts";

/** The tokens of one call, in one shape whatever the provider (see the module's doc). */
export interface TokenUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  reasoning: number;
}

/** The usage shapes of the providers' APIs that {@linkcode usageFrom} reads. */
export type UsageShape = "anthropic" | "openai-chat" | "openai-responses" | "gemini";

type Obj = { [key: string]: Json };
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const count = (v: unknown): number => (typeof v === "number" && Number.isSafeInteger(v) && v > 0 ? v : 0);

/**
 * A provider's usage object in one shape:
 *
 * - Anthropic (`usage` of a message): `input_tokens` excludes the cache: input is `input_tokens +
 *   cache_creation_input_tokens + cache_read_input_tokens`; `output_tokens` includes thinking, which
 *   `output_tokens_details.thinking_tokens` counts when the API reports it.
 * - OpenAI Chat Completions (and servers that copy it, such as vLLM and DeepSeek): `prompt_tokens` includes
 *   `prompt_tokens_details.cached_tokens` (DeepSeek: `prompt_cache_hit_tokens`); `completion_tokens` includes
 *   `completion_tokens_details.reasoning_tokens`. Nothing is counted as a cache write.
 * - OpenAI Responses: `input_tokens` includes `input_tokens_details.cached_tokens`; `output_tokens` includes
 *   `output_tokens_details.reasoning_tokens`.
 * - Gemini (`usageMetadata`): `promptTokenCount` includes `cachedContentTokenCount`; `candidatesTokenCount`
 *   excludes `thoughtsTokenCount`, so output is their sum; `toolUsePromptTokenCount` is input.
 *
 * @param shape The API the usage came from.
 * @param usage The provider's usage object.
 * @returns The usage; zeros where the provider gave nothing.
 * @example
 * ```ts
 * import { usageFrom } from "./call_cost.ts";
 * usageFrom("anthropic", { input_tokens: 30, cache_read_input_tokens: 100, output_tokens: 12 }).input; // 130
 * ```
 */
export function usageFrom(shape: UsageShape, usage: unknown): TokenUsage {
  const u = isObj(usage) ? usage : {};
  const details = (key: string): Obj => (isObj(u[key]) ? u[key] as Obj : {});
  switch (shape) {
    case "anthropic": {
      const cacheRead = count(u.cache_read_input_tokens);
      const cacheWrite = count(u.cache_creation_input_tokens);
      return {
        input: count(u.input_tokens) + cacheRead + cacheWrite,
        output: count(u.output_tokens),
        cacheRead,
        cacheWrite,
        reasoning: count(details("output_tokens_details").thinking_tokens),
      };
    }
    case "openai-chat":
      return {
        input: count(u.prompt_tokens),
        output: count(u.completion_tokens),
        cacheRead: count(details("prompt_tokens_details").cached_tokens) || count(u.prompt_cache_hit_tokens),
        cacheWrite: 0,
        reasoning: count(details("completion_tokens_details").reasoning_tokens),
      };
    case "openai-responses":
      return {
        input: count(u.input_tokens),
        output: count(u.output_tokens),
        cacheRead: count(details("input_tokens_details").cached_tokens),
        cacheWrite: 0,
        reasoning: count(details("output_tokens_details").reasoning_tokens),
      };
    case "gemini":
      return {
        input: count(u.promptTokenCount) + count(u.toolUsePromptTokenCount),
        output: count(u.candidatesTokenCount) + count(u.thoughtsTokenCount),
        cacheRead: count(u.cachedContentTokenCount),
        cacheWrite: 0,
        reasoning: count(u.thoughtsTokenCount),
      };
  }
}

/**
 * The usage a `model_called` event records (`input_tokens`, `output_tokens`, `cache_read_tokens`,
 * `cache_write_tokens`, `reasoning_tokens`); zeros where it records none.
 *
 * @param data The event's data.
 * @returns The usage.
 */
export function recordedUsage(data: { [key: string]: Json }): TokenUsage {
  return {
    input: count(data.input_tokens),
    output: count(data.output_tokens),
    cacheRead: count(data.cache_read_tokens),
    cacheWrite: count(data.cache_write_tokens),
    reasoning: count(data.reasoning_tokens),
  };
}

/** The cost of one call, by the kind of token, in millionths of a millionth of the currency. */
export type CostParts = Record<typeof PRICE_KINDS[number], bigint>;

/**
 * The cost of one call: each kind of token priced once. The uncached input is `input - cacheRead - cacheWrite`
 * and the plain output `output - reasoning` (never below 0, when a provider reports parts larger than their
 * whole).
 *
 * @param usage The call's usage.
 * @param price The model's prices.
 * @returns The total and its parts, in millionths of a millionth (exact).
 * @example
 * ```ts
 * import { callCost, formatCost } from "./call_cost.ts";
 * import { PriceTable } from "./price_table.ts";
 * const price = PriceTable.builtin().priceOf({ provider: "anthropic", model: "claude-sonnet-4-5" })!;
 * const cost = callCost({ input: 150, output: 12, cacheRead: 100, cacheWrite: 20, reasoning: 0 }, price);
 * formatCost(cost.total); // "0.000375"
 * ```
 */
export function callCost(usage: TokenUsage, price: ModelPrice): { total: bigint; parts: CostParts } {
  const tokens: Record<typeof PRICE_KINDS[number], number> = {
    input: Math.max(0, usage.input - usage.cacheRead - usage.cacheWrite),
    output: Math.max(0, usage.output - usage.reasoning),
    cache_read: usage.cacheRead,
    cache_write: usage.cacheWrite,
    reasoning: usage.reasoning,
  };
  const parts = {} as CostParts;
  let total = 0n;
  for (const kind of PRICE_KINDS) {
    parts[kind] = BigInt(tokens[kind]) * (microUnits(price[kind]) ?? 0n);
    total += parts[kind];
  }
  return { total, parts };
}

/** Millionths of a millionth in one unit of the currency. */
const SCALE = 10n ** 12n;

/**
 * An exact amount as a decimal text, without trailing zeros: `375000000n` is `"0.000375"`.
 *
 * @param units The amount, in millionths of a millionth.
 * @returns The decimal text.
 */
export function formatCost(units: bigint): string {
  const sign = units < 0n ? "-" : "";
  const abs = units < 0n ? -units : units;
  const whole = abs / SCALE;
  const fraction = (abs % SCALE).toString().padStart(12, "0").replace(/0+$/, "");
  return `${sign}${whole}${fraction ? `.${fraction}` : ""}`;
}

/**
 * A decimal text as an exact amount, or null when it is not one (more than 12 decimals, not a number).
 *
 * @param text Such as `"0.000375"`.
 * @returns The amount, in millionths of a millionth.
 */
export function parseCost(text: unknown): bigint | null {
  if (typeof text !== "string") return null;
  const m = /^(-?)(\d+)(?:\.(\d{1,12}))?$/.exec(text);
  if (!m) return null;
  const units = BigInt(m[2]!) * SCALE + BigInt((m[3] ?? "").padEnd(12, "0"));
  return m[1] ? -units : units;
}

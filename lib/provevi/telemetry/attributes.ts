/**
 * Levels and span attributes: what a destination receives at `names`, `usage` or `bodies`
 * (provevi-reference.txt, "What a destination receives").
 * @module
 */
import { NOT_A_WORD } from "./_plain_text.ts";

/** What a destination receives, from least to most. */
export type Level = "names" | "usage" | "bodies";

/**
 * The levels, from least to most.
 *
 * @example
 * ```ts
 * import { LEVELS } from "./attributes.ts";
 * LEVELS.indexOf("usage") < LEVELS.indexOf("bodies"); // true
 * ```
 */
export const LEVELS: readonly Level[] = ["names", "usage", "bodies"];

const RANK: Readonly<Record<Level, number>> = { names: 0, usage: 1, bodies: 2 };

/**
 * True when a text is one of {@linkcode LEVELS}.
 *
 * @example
 * ```ts
 * import { isLevel } from "./attributes.ts";
 * isLevel("usage"); // true
 * ```
 */
export function isLevel(value: unknown): value is Level {
  return value === "names" || value === "usage" || value === "bodies";
}

/**
 * The rank of a level: names 0, usage 1, bodies 2, for comparing levels.
 *
 * @example
 * ```ts
 * import { levelRank } from "./attributes.ts";
 * levelRank("usage") > levelRank("names"); // true
 * ```
 */
export function levelRank(level: Level): number {
  const rank = RANK[level];
  if (rank === undefined) throw new TypeError(`"${level}" is not a level: use names, usage or bodies`);
  return rank;
}

/**
 * The attributes that hold names: the names, models, providers and IDs of a span, its error type, its finish
 * reasons, and the server's address and port.
 *
 * @example
 * ```ts
 * import { NAME_KEYS } from "./attributes.ts";
 * NAME_KEYS.has("gen_ai.request.model"); // true
 * ```
 */
export const NAME_KEYS: ReadonlySet<string> = new Set([
  "gen_ai.operation.name",
  "gen_ai.system",
  "gen_ai.provider.name",
  "gen_ai.request.model",
  "gen_ai.response.model",
  "gen_ai.response.id",
  "gen_ai.response.finish_reasons",
  "gen_ai.agent.name",
  "gen_ai.agent.id",
  "gen_ai.agent.version",
  "gen_ai.conversation.id",
  "gen_ai.tool.name",
  "gen_ai.tool.call.id",
  "gen_ai.tool.type",
  "gen_ai.output.type",
  "gen_ai.data_source.id",
  "error.type",
  "server.address",
  "server.port",
  "provrun.run_id",
]);

/**
 * The attributes that hold counts: the token counts, the cost, and the request's temperature, max_tokens and
 * top_p.
 *
 * @example
 * ```ts
 * import { USAGE_KEYS } from "./attributes.ts";
 * USAGE_KEYS.has("gen_ai.usage.input_tokens"); // true
 * ```
 */
export const USAGE_KEYS: ReadonlySet<string> = new Set([
  "gen_ai.usage.input_tokens",
  "gen_ai.usage.output_tokens",
  "gen_ai.usage.cache_read.input_tokens",
  "gen_ai.usage.cache_creation.input_tokens",
  "gen_ai.usage.cache_read_input_tokens",
  "gen_ai.usage.cache_creation_input_tokens",
  "gen_ai.usage.reasoning_tokens",
  "gen_ai.usage.reasoning.output_tokens",
  "gen_ai.usage.total_tokens",
  "gen_ai.usage.prompt_tokens",
  "gen_ai.usage.completion_tokens",
  "gen_ai.usage.cost",
  "operation.cost",
  "gen_ai.request.temperature",
  "gen_ai.request.max_tokens",
  "gen_ai.request.top_p",
]);

const MAX_WORD = 200;

/**
 * True when a text is one word of at most 200 characters: no whitespace, control character or invisible
 * separator. The test of a names attribute, and the first test of `plainName`.
 *
 * @example
 * ```ts
 * import { isOneWord } from "./attributes.ts";
 * isOneWord("gpt-4o"); // true
 * isOneWord("two words"); // false
 * ```
 */
export function isOneWord(text: string): boolean {
  const n = text.length;
  if (n === 0 || n > MAX_WORD) return false;
  // For ASCII, NOT_A_WORD is exactly a code up to the space, or DEL: a loop decides it without the regular
  // expression's call, which costs more than the scan on names this short; another character takes the expression.
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c <= 0x20 || c === 0x7f) return false;
    if (c > 0x7f) return !NOT_A_WORD.test(text);
  }
  return true;
}

function isWord(value: unknown): boolean {
  if (typeof value === "string") return isOneWord(value);
  if (typeof value === "number") return Number.isFinite(value);
  return typeof value === "boolean";
}

function isWords(value: unknown): boolean {
  if (!Array.isArray(value)) return isWord(value);
  for (const item of value) if (!isWord(item)) return false;
  return true;
}

function isCount(value: unknown): boolean {
  if (typeof value === "number") return Number.isFinite(value);
  if (!Array.isArray(value)) return false;
  for (const item of value) if (typeof item !== "number" || !Number.isFinite(item)) return false;
  return true;
}

/**
 * The level at which an attribute may leave: `names` for a names key holding words of at most 200 characters,
 * `usage` for a usage key holding numbers, and `bodies` for anything else, including a key provevi does not
 * know and a names or usage key holding another value, because it may hold text from a prompt.
 *
 * @param key The attribute's key.
 * @param value The attribute's value.
 * @returns The least level that receives it.
 * @example
 * ```ts
 * import { attributeLevel } from "./attributes.ts";
 * attributeLevel("gen_ai.usage.input_tokens", 12); // "usage"
 * attributeLevel("gen_ai.request.model", "a model with spaces"); // "bodies"
 * attributeLevel("gen_ai.new.thing", "x"); // "bodies"
 * ```
 */
export function attributeLevel(key: string, value: unknown): Level {
  const known = KNOWN.get(key);
  if (known === "names") return isWords(value) ? "names" : "bodies";
  if (known === "usage") return isCount(value) ? "usage" : "bodies";
  return "bodies";
}

// One lookup per attribute instead of two.
const KNOWN: ReadonlyMap<string, Level> = new Map<string, Level>([
  ...[...NAME_KEYS].map((k) => [k, "names"] as [string, Level]),
  ...[...USAGE_KEYS].map((k) => [k, "usage"] as [string, Level]),
]);

/** Sets a key, so that a key named `__proto__` is data, not the object's prototype. */
function put(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else target[key] = value;
}

const hasOwn = Object.prototype.hasOwnProperty;

/** Span attributes: keys and OpenTelemetry attribute values. */
export type Attributes = Readonly<Record<string, unknown>>;

/**
 * The attributes that a destination at `level` receives: each attribute whose
 * {@linkcode attributeLevel} is at most `level`.
 *
 * @param attributes A span's attributes.
 * @param level The destination's level; `null` (no destination) receives nothing.
 * @returns A new object; the input is not changed.
 * @example
 * ```ts
 * import { attributesFor } from "./attributes.ts";
 * attributesFor({ "gen_ai.request.model": "gpt-4o", "gen_ai.usage.input_tokens": 9, "gen_ai.input.messages": "[]" }, "usage");
 * // { "gen_ai.request.model": "gpt-4o", "gen_ai.usage.input_tokens": 9 }
 * ```
 */
export function attributesFor(attributes: Attributes, level: Level | null): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (level === null) return out;
  const rank = levelRank(level);
  // for…in with hasOwnProperty reads each key and value from the object's enum cache, which V8 knows to be own
  // keys, where Object.keys makes an array and each read is a lookup by name
  for (const key in attributes) {
    if (!hasOwn.call(attributes, key)) continue;
    const value = attributes[key];
    if (rank !== 2) {
      // A key provevi does not know leaves only at bodies: one lookup rules out most of a span's text
      const known = KNOWN.get(key);
      if (known === undefined) continue;
      if (known === "names" ? !isWords(value) : rank === 0 || !isCount(value)) continue;
    }
    if (key === "__proto__") put(out, key, value);
    else out[key] = value;
  }
  return out;
}

/**
 * Takes the bodies out of a span's attributes, so that the evidence keeps them in a payload and the event
 * holds only names and counts.
 *
 * @param attributes A span's attributes.
 * @returns `attributes`, those at `usage` or below, and `body`, the rest (`null` when there is none).
 * @example
 * ```ts
 * import { splitBody } from "./attributes.ts";
 * const { attributes, body } = splitBody({ "gen_ai.request.model": "gpt-4o", "gen_ai.input.messages": "[]" });
 * // attributes: { "gen_ai.request.model": "gpt-4o" }, body: { "gen_ai.input.messages": "[]" }
 * ```
 */
export function splitBody(
  attributes: Attributes,
): { attributes: Record<string, unknown>; body: Record<string, unknown> | null } {
  const kept: Record<string, unknown> = {};
  let body: Record<string, unknown> | null = null;
  for (const key in attributes) {
    if (!Object.hasOwn(attributes, key)) continue;
    const value = attributes[key];
    if (attributeLevel(key, value) === "bodies") put(body ??= {}, key, value);
    else put(kept, key, value);
  }
  return { attributes: kept, body };
}

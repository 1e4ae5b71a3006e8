/**
 * Plain names: the test that a value is a name and not a secret, a path or a place, so that it may leave the
 * evidence below the level `bodies` (provevi-reference.txt, "Check a telemetry policy").
 *
 * A shape test cannot catch every secret or path; these rules refuse the shapes that leak most often and let
 * real model names through.
 * @module
 */
import { isOneWord } from "./attributes.ts";
import { plainText, SECRET, SECRET_HINT } from "./_plain_text.ts";

/**
 * The attribute keys that name a model in OpenTelemetry's GenAI conventions. {@linkcode plainAttribute}
 * declares their values, so a model name with more than one `/` stays plain under them.
 *
 * A library's own plain `model` key is not one of them, because it may hold anything, such as a folder of
 * weights.
 *
 * @example
 * ```ts
 * import { MODEL_KEYS } from "./plain_name.ts";
 * MODEL_KEYS.has("gen_ai.request.model"); // true
 * ```
 */
export const MODEL_KEYS: ReadonlySet<string> = new Set([
  "gen_ai.request.model",
  "gen_ai.response.model",
]);

/**
 * {@linkcode MODEL_KEYS} and provrun's own model keys: `model`, the run file's model, and `answered_by`, the
 * model that the provider says answered. For the copy's settings and the live feed's events.
 *
 * @example
 * ```ts
 * import { plainAttribute, RUN_MODEL_KEYS } from "./plain_name.ts";
 * plainAttribute("model", "openrouter/meta-llama/llama-3-70b", { modelKeys: RUN_MODEL_KEYS }); // true
 * ```
 */
export const RUN_MODEL_KEYS: ReadonlySet<string> = new Set([...MODEL_KEYS, "model", "answered_by"]);

/** The longest name, in UTF-16 code units; the word test itself is `isOneWord`'s. */
const MAX_NAME = 200;

/** Options of {@linkcode plainName}. */
export interface PlainNameOptions {
  /** Texts that may have more than one `/`, such as the model a run names; each must pass every other test. */
  declared?: Iterable<string>;
}

/**
 * True when a value is a plain name: a number, a yes or no, or one word of at most 200 characters that looks
 * like no URL, user and password, setting, path of a machine, place, or API key.
 *
 * @param value The value to test.
 * @param options `declared`: texts that may have more than one `/`, such as a model's name.
 * @returns True when the value may leave the evidence as a name.
 * @example
 * ```ts
 * import { plainName } from "./plain_name.ts";
 * plainName("openai/gpt-4o-mini"); // true
 * plainName("https://user:password@host"); // false
 * plainName("etc/passwd"); // false
 * plainName("openrouter/meta-llama/llama-3-70b", { declared: ["openrouter/meta-llama/llama-3-70b"] }); // true
 * ```
 */
export function plainName(value: unknown, options: PlainNameOptions = {}): boolean {
  if (typeof value === "number") return Number.isFinite(value);
  if (typeof value === "boolean") return true;
  if (typeof value === "bigint") return true;
  if (typeof value !== "string") return false;
  const declared = options.declared === undefined ? false : isDeclared(value, options.declared);
  return plainWord(value, declared);
}

/** How many verdicts each of the two caches of {@linkcode plainTextOf} holds before it starts again. */
const VERDICTS = 1024;
// The verdicts of texts that took the full test, apart for declared and not: such names (models with a `/`,
// hosts, versions) repeat span after span, and a lookup costs a fraction of the regular expressions of one. A
// verdict depends on the text and `declared` alone, so a remembered one is the one a new test would give.
// Bounded: at VERDICTS texts of at most MAX_NAME characters a cache is emptied, so fresh texts cannot grow it.
const judged: Map<string, boolean> = new Map();
const judgedDeclared: Map<string, boolean> = new Map();

/**
 * {@linkcode isOneWord} and {@linkcode plainText} of a text, with one pass over its characters for the common
 * case: for a text all of ASCII, the pass decides what the regular expressions of the two would (whitespace or a
 * control character: not one word; none of `/ \ : @ = % . ~`: plain unless it holds an API key), and a text
 * with any other character, or one of those, takes the full test, remembered for texts seen lately.
 */
function plainWord(value: string, declared: boolean): boolean {
  const n = value.length;
  if (n === 0 || n > MAX_NAME) return false;
  let special = false;
  for (let i = 0; i < n; i++) {
    const c = value.charCodeAt(i);
    if (c <= 0x20 || c === 0x7f) return false; // ASCII whitespace or a control character
    if (c > 0x7f) return plainTextOf(value, declared, false);
    // / \ : @ = % . ~
    if (
      c === 0x2f || c === 0x5c || c === 0x3a || c === 0x40 || c === 0x3d || c === 0x25 || c === 0x2e ||
      c === 0x7e
    ) {
      special = true;
    }
  }
  if (special) return plainTextOf(value, declared, true);
  return !(n >= 10 && SECRET_HINT.test(value) && SECRET.test(value));
}

/** The full test of a text of at most MAX_NAME characters, remembered; `ascii` when it is known to be one word. */
function plainTextOf(value: string, declared: boolean, ascii: boolean): boolean {
  const cache = declared ? judgedDeclared : judged;
  let verdict = cache.get(value);
  if (verdict === undefined) {
    verdict = (ascii || isOneWord(value)) && plainText(value, declared);
    if (cache.size >= VERDICTS) cache.clear();
    cache.set(value, verdict);
  }
  return verdict;
}

function isDeclared(value: string, declared: Iterable<string>): boolean {
  if (typeof declared === "string") throw new TypeError("declared must be a list of texts, not one text");
  if (declared instanceof Set) return declared.has(value);
  for (const d of declared) if (d === value) return true;
  return false;
}

/**
 * True when an attribute's value may leave as a name: {@linkcode plainName}, with the value declared when its
 * key names a model (so `openrouter/meta-llama/llama-3-70b` stays plain under `gen_ai.request.model`). A list
 * is plain when each item is; under a model key each name in it is declared. A mapping is plain when each key
 * is a plain name and each value is plain under its key.
 *
 * @param key The attribute's key.
 * @param value The attribute's value.
 * @param options `modelKeys`: the keys that name a model; {@linkcode MODEL_KEYS} by default.
 * @returns True when the value may leave as a name.
 * @example
 * ```ts
 * import { plainAttribute } from "./plain_name.ts";
 * plainAttribute("gen_ai.request.model", "openrouter/meta-llama/llama-3-70b"); // true
 * plainAttribute("path", "scratch/x/notes"); // false
 * ```
 */
export function plainAttribute(
  key: string,
  value: unknown,
  options?: { modelKeys?: ReadonlySet<string> },
): boolean {
  // No default options object: this runs once per attribute of every span, and a string is the common value
  const modelKeys = options?.modelKeys;
  const declared = (modelKeys ?? MODEL_KEYS).has(key);
  if (typeof value === "string") return plainWord(value, declared);
  return plainValue(value, declared, modelKeys, 0);
}

function plainValue(
  value: unknown,
  declared: boolean,
  modelKeys: ReadonlySet<string> | undefined,
  depth: number,
) {
  if (typeof value === "string") return plainWord(value, declared);
  if (typeof value === "number") return Number.isFinite(value);
  if (typeof value === "boolean" || typeof value === "bigint") return true;
  if (depth > 0) return false; // a list in a list, or a mapping in a mapping, is not a name
  if (Array.isArray(value)) {
    for (const item of value) if (!plainValue(item, declared, modelKeys, depth + 1)) return false;
    return true;
  }
  if (typeof value === "object" && value !== null && Object.getPrototypeOf(value) === Object.prototype) {
    for (const [k, v] of Object.entries(value)) {
      if (!plainName(k)) return false;
      if (!plainValue(v, (modelKeys ?? MODEL_KEYS).has(k), modelKeys, depth + 1)) return false;
    }
    return true;
  }
  return false;
}

/**
 * True when a span's name is one or two plain words, such as `chat gpt-4o` or `invoke_agent`.
 *
 * @param name The span's name.
 * @param options `declared`: words that may have more than one `/`, such as the model of a `chat` span.
 * @returns True when the name may leave below `bodies`.
 * @example
 * ```ts
 * import { plainSpanName } from "./plain_name.ts";
 * plainSpanName("chat gpt-4o"); // true
 * plainSpanName("read /etc/passwd"); // false
 * ```
 */
export function plainSpanName(name: unknown, options: PlainNameOptions = {}): boolean {
  if (typeof name !== "string" || name.length === 0 || name.length > MAX_NAME) return false;
  const words = name.split(" ");
  if (words.length > 2) return false;
  return words.every((word) => typeof word === "string" && word.length > 0 && plainName(word, options));
}

const EXPERIMENT = /^experiment:\/\/([^?#]*)(?:\?at=commit:([0-9a-f]{7,64}))?$/;

/**
 * True when a text is an `experiment://` URI of plain parts, with no selector or with `?at=commit:` and a
 * hash. A URI that names a branch or a version stays out, because its name may be free text.
 *
 * @param uri The text to test.
 * @returns True when the URI may leave below `bodies`.
 * @example
 * ```ts
 * import { plainExperiment } from "./plain_name.ts";
 * plainExperiment("experiment://acme/risk/dev/credit/q?at=commit:3f2a9c1"); // true
 * plainExperiment("experiment://acme/risk/dev/credit/q?at=branch:main"); // false
 * ```
 */
export function plainExperiment(uri: unknown): boolean {
  if (typeof uri !== "string" || uri.length > 1000) return false;
  const match = EXPERIMENT.exec(uri);
  if (!match) return false;
  const parts = match[1]!.split("/");
  if (parts.length < 4) return false; // org/domain/env/path…
  return parts.every((part) => part.length > 0 && !part.includes(":") && plainName(part));
}

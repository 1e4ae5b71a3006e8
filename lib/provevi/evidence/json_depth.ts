/**
 * JSON nested too deep to read. `JSON.parse` reads a line of 100,000 nested arrays without complaint, and so does
 * the hash chain; but each reader that walks a value with a call a level (`JSON.stringify` with an indent, the key
 * renaming of `--json`, a renderer, a canonicalizer) then runs out of stack, uncaught: a forged run that
 * verified crashed `prove show --json`. No writer of this toolkit nests a value past a few dozen levels, so a
 * reader refuses any past {@linkcode MAX_JSON_DEPTH}, as it refuses text that is not JSON.
 * @module
 */

/** The deepest nesting of arrays and objects a reader takes: far past any value a writer makes. */
export const MAX_JSON_DEPTH = 256;

/**
 * The most bytes one line of `events.jsonl` holds, without its newline: the chain refuses an event past it
 * (record a bigger value as a payload), and a reader refuses a file with a longer line before it reads the rest
 * (`events_file.ts`). The viewer's tail of `live.jsonl` has the same bound.
 */
export const EVENT_LINE_MAX_BYTES = 16 * 1024 * 1024;

/**
 * What a line of JSON may take of the heap once parsed, at most about: its characters, and for each object or
 * array it opens 96 bytes, for each value or key after a comma or colon 32 (a number, a short text, a key). A
 * line of many small values takes far more than its text (an empty object is 3 bytes of text and some 96 of the
 * heap): readers that keep what they parse weigh each line before they parse it. The characters inside a text
 * (`"a,b"`) are its own and weigh one each: a text of commas or brackets is one value, and weighing them as
 * values made a writer's event whose message or name is such a text weigh 33 to 97 times its line, past the
 * bound of a writer's file. A writer's events weigh 4.3 times their text on the whole, 5.5 at most a line.
 *
 * @param line The line.
 * @returns The weight, in bytes.
 */
export function jsonLineWeight(line: string): number {
  let weight = line.length;
  let inText = false;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (inText) {
      if (c === 0x5c) i++; // \ : the next character is escaped
      else if (c === 0x22) inText = false;
    } else if (c === 0x22) inText = true; // "
    else if (c === 0x7b || c === 0x5b) weight += 96; // { [
    else if (c === 0x2c || c === 0x3a) weight += 32; // , :
  }
  return weight;
}

/** The most a JSON text a reader parses whole may weigh ({@linkcode jsonLineWeight}): six times 512 MiB. */
export const JSON_READ_WEIGHT = 6 * 512 * 1024 * 1024;

/** A JSON text that would take more of the heap parsed than a reader gives it: a `SyntaxError`, as text that is not JSON. */
export class TooHeavyJson extends SyntaxError {
  constructor(readonly most: number) {
    super(`it would take more than ${most} bytes of memory read`);
    this.name = "TooHeavyJson";
  }
}

/**
 * A JSON text parsed whole (a manifest, an answer), weighed first: one of many small values (`{"lost":[{},{},…]}`)
 * takes the heap at some 30 times its text, and is refused unparsed.
 *
 * @param text The text.
 * @param most The most it may weigh ({@linkcode JSON_READ_WEIGHT} by default).
 * @returns The value.
 * @throws TooHeavyJson past the weight; SyntaxError for text that is not JSON.
 */
export function parseWeighed(text: string, most: number = JSON_READ_WEIGHT): unknown {
  if (jsonLineWeight(text) > most) throw new TooHeavyJson(most);
  return JSON.parse(text);
}

/** A JSON text whose nesting is deeper than a reader takes: a `SyntaxError`, as for text that is not JSON. */
export class TooDeepJson extends SyntaxError {
  constructor(readonly depth: number) {
    super(`it nests arrays and objects more than ${depth} deep`);
    this.name = "TooDeepJson";
  }
}

/**
 * True when a parsed value nests arrays and objects more than `max` deep (a bare scalar is depth 0).
 *
 * @param value A value that `JSON.parse` gave.
 * @param max The deepest nesting taken; {@linkcode MAX_JSON_DEPTH} by default.
 * @returns Whether it is deeper.
 * @example
 * ```ts
 * import { deeperThan } from "./json_depth.ts";
 * deeperThan(JSON.parse("[[1]]"), 1); // true
 * deeperThan(JSON.parse('{"a":[1]}'), 2); // false
 * ```
 */
export function deeperThan(value: unknown, max = MAX_JSON_DEPTH): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (max <= 0) return true;
  // a call only for a value that nests: most are texts and numbers
  if (Array.isArray(value)) {
    for (const item of value) {
      if (typeof item === "object" && item !== null && deeperThan(item, max - 1)) return true;
    }
    return false;
  }
  for (const key in value) {
    const item = (value as Record<string, unknown>)[key];
    if (typeof item === "object" && item !== null && deeperThan(item, max - 1)) return true;
  }
  return false;
}

/**
 * `JSON.parse` for a text that an attacker may have written: the value, unless it nests deeper than
 * {@linkcode MAX_JSON_DEPTH} (a text shorter than twice that cannot, and is not walked).
 *
 * @param text The JSON text.
 * @param options `weighed`: weigh the text first, as {@linkcode parseWeighed} does (for a text of any size).
 * @returns The value.
 * @throws SyntaxError when the text is not JSON; {@linkcode TooDeepJson} (a SyntaxError) when it nests too deep;
 *   {@linkcode TooHeavyJson} (a SyntaxError) when weighed past {@linkcode JSON_READ_WEIGHT}.
 * @example
 * ```ts
 * import { parseJson } from "./json_depth.ts";
 * parseJson('{"a":1}'); // { a: 1 }
 * ```
 */
export function parseJson(text: string, options: { weighed?: boolean } = {}): unknown {
  const value = options.weighed ? parseWeighed(text) : JSON.parse(text);
  if (text.length > 2 * MAX_JSON_DEPTH && deeperThan(value)) throw new TooDeepJson(MAX_JSON_DEPTH);
  return value;
}

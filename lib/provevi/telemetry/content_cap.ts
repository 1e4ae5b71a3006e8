/**
 * The size of a content attribute: what leaves at `bodies` (the messages, the system instructions, the tool
 * definitions, a tool call's arguments and result) goes as JSON text of at most {@linkcode CONTENT_BYTES} bytes
 * of UTF-8. A longer value is cut so that it stays JSON of the same shape: its longest texts lose their ends,
 * each marked with {@linkcode CUT_MARK}, and when that is not enough, whole items of the list go too, with one
 * item that says how many. The whole value is always in the run's evidence, as a payload.
 * @module
 */
import type { Json } from "../evidence/event.ts";

/** The largest content attribute a destination receives: 32 KiB of UTF-8. */
export const CONTENT_BYTES = 32 * 1024;

/** What a cut text ends with, before the count of what was left out. */
export const CUT_MARK = "…[cut by provrun:";

const encoder = new TextEncoder();
const bytesOf = (text: string) => encoder.encode(text).length;

/** How a list that is still too long loses items, and the item that says how many went. */
export interface CapOptions {
  /** The largest size, in bytes of UTF-8; {@linkcode CONTENT_BYTES} by default. */
  maxBytes?: number;
  /** Which items of a list to keep when items must go: the last (a conversation) or the first. */
  keep?: "first" | "last";
  /** The item that stands for `n` items left out, in the list's own shape. */
  dropped?: (n: number) => Json;
}

/**
 * A JSON value as text of at most `maxBytes` bytes, still JSON of the same shape.
 *
 * @param value The value.
 * @param options The size and how a list loses items.
 * @returns The text, and whether anything was cut.
 * @example
 * ```ts
 * import { capJson } from "./content_cap.ts";
 * const { text, cut } = capJson([{ content: "x".repeat(1000) }], { maxBytes: 300 });
 * JSON.parse(text)[0].content.startsWith("xxx"); // true
 * cut; // true
 * ```
 */
export function capJson(value: Json, options: CapOptions = {}): { text: string; cut: boolean } {
  const max = options.maxBytes ?? CONTENT_BYTES;
  if (!(max >= 256)) throw new RangeError(`a content cap of ${max} bytes is too small: use 256 or more`);
  const whole = JSON.stringify(value);
  if (bytesOf(whole) <= max) return { text: whole, cut: false };
  const fitted = fitTexts(value, max);
  if (fitted !== null) return { text: fitted, cut: true };
  if (Array.isArray(value) && value.length > 1) return { text: dropItems(value, max, options), cut: true };
  return { text: cutWhole(whole, max), cut: true };
}

/** The JSON text of a value that has no list to shorten, cut as one text: a JSON string of its start. */
function cutWhole(whole: string, max: number): string {
  // a character takes at most 6 bytes as JSON (\uXXXX), so this fits at the first try, and mostly keeps more
  for (let keep = Math.floor(max / 2); keep >= 0; keep = Math.floor(keep / 2)) {
    const text = JSON.stringify(`${whole.slice(0, keep)}${CUT_MARK} ${whole.length - keep} more characters]`);
    if (bytesOf(text) <= max) return text;
    if (keep === 0) break;
  }
  return JSON.stringify(`${CUT_MARK} the whole value is in the run's evidence]`);
}

/** Texts of at most this many characters are never cut: they are names, roles and types, the shape's own. */
const SHORT = 256;

/** The longest length of a text inside a value. */
function longest(value: Json): number {
  if (typeof value === "string") return value.length;
  let most = 0;
  if (Array.isArray(value)) { for (const v of value) most = Math.max(most, longest(v)); }
  else if (value && typeof value === "object") {
    for (const v of Object.values(value)) most = Math.max(most, longest(v));
  }
  return most;
}

function cutText(text: string, keep: number): string {
  if (text.length <= Math.max(keep, SHORT)) return text;
  // never split a surrogate pair: half of one is not text
  let end = keep;
  const code = text.charCodeAt(end - 1);
  if (end > 0 && code >= 0xd800 && code <= 0xdbff) end--;
  return `${text.slice(0, end)}${CUT_MARK} ${
    text.length - end
  } more characters; the whole value is in the run's evidence]`;
}

function cutTexts(value: Json, keep: number): Json {
  if (typeof value === "string") return cutText(value, keep);
  if (Array.isArray(value)) return value.map((v) => cutTexts(v, keep));
  if (value && typeof value === "object") {
    const out: { [key: string]: Json } = {};
    for (const [k, v] of Object.entries(value)) out[k] = cutTexts(v, keep);
    return out;
  }
  return value;
}

/** The value with its long texts cut to the longest length that fits, or null when nothing does. */
function fitTexts(value: Json, max: number): string | null {
  let low = 0, high = longest(value);
  let best: string | null = null;
  while (low <= high) {
    const mid = Math.floor((low + high) / 2);
    const text = JSON.stringify(cutTexts(value, mid));
    if (bytesOf(text) <= max) {
      best = text;
      low = mid + 1;
    } else high = mid - 1;
  }
  return best;
}

/** A list that is too long even with short texts: items go from its start (or end), one item says how many. */
function dropItems(list: Json[], max: number, options: CapOptions): string {
  const last = (options.keep ?? "last") === "last";
  const marker = options.dropped ??
    ((n: number) => `${CUT_MARK} ${n} items left out; the whole value is in the run's evidence]`);
  const shown = (kept: number): Json[] => {
    const items = last ? list.slice(list.length - kept) : list.slice(0, kept);
    const mark = marker(list.length - kept);
    return last ? [mark, ...items] : [...items, mark];
  };
  // the most items that fit, by halves: fewer items never need more room
  let low = 0, high = list.length - 1;
  let best = JSON.stringify([marker(list.length)]);
  while (low <= high) {
    const mid = Math.floor((low + high) / 2);
    const fitted = fitTexts(shown(mid), max);
    if (fitted !== null) {
      best = fitted;
      low = mid + 1;
    } else high = mid - 1;
  }
  return best;
}

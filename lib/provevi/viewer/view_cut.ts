/**
 * Keeps the viewer's pages bounded: {@linkcode cutJson} cuts a value's long strings, long lists and deep
 * nesting, and {@linkcode parseJsonHead} reads the start of a JSON text that was cut anywhere (the first bytes
 * of a large payload), so that a page shows the head of a 50 MB payload without reading the rest. What was cut
 * is flagged, and the page links to the whole, fetched on demand.
 * @module
 */
import type { Json } from "../evidence/event.ts";

/** How far a value is cut. */
export interface CutLimits {
  /** Characters of a string; a longer one keeps its start and ends with "…". */
  strings: number;
  /** Entries of a list or an object. */
  items: number;
  /** Levels of nesting; deeper values become "…". */
  depth: number;
  /** What ends a cut string: "…" by default. */
  more?: string;
}

/** The cut of the data and payloads on a page. */
export const PAGE_CUT: CutLimits = { strings: 4096, items: 200, depth: 24 };

/** A value and whether anything of it was left out. */
export interface CutValue {
  value: Json;
  cut: boolean;
}

const MORE = "…";

/** The characters of a key that are kept, however short the strings are cut: a key names its value. */
const KEY_CHARS = 256;

/**
 * Cuts a JSON value to the limits.
 *
 * @param value The value.
 * @param limits How far to cut ({@linkcode PAGE_CUT} by default).
 * @returns The cut value (a new one where anything was cut), and whether anything was.
 * @example
 * ```ts
 * import { cutJson } from "./view_cut.ts";
 * cutJson("abcdef", { strings: 3, items: 10, depth: 5 }); // { value: "abc…", cut: true }
 * ```
 */
export function cutJson(value: Json, limits: CutLimits = PAGE_CUT): CutValue {
  const state = { cut: false };
  const more = limits.more ?? MORE;
  const walk = (v: Json, depth: number): Json => {
    if (typeof v === "string") {
      if (v.length <= limits.strings) return v;
      state.cut = true;
      return v.slice(0, limits.strings) + more;
    }
    if (v === null || typeof v !== "object") return v;
    if (depth >= limits.depth) {
      state.cut = true;
      return more;
    }
    if (Array.isArray(v)) {
      if (v.length > limits.items) state.cut = true;
      return v.slice(0, limits.items).map((x) => walk(x, depth + 1));
    }
    const out: { [key: string]: Json } = {};
    let n = 0;
    for (const key in v) {
      if (n++ >= limits.items) {
        state.cut = true;
        break;
      }
      const keep = Math.max(limits.strings, KEY_CHARS);
      Object.defineProperty(out, key.length > keep ? key.slice(0, keep) + more : key, {
        value: walk(v[key]!, depth + 1),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  };
  const result = walk(value, 0);
  return { value: result, cut: state.cut };
}

/**
 * Reads the start of a JSON text that may stop anywhere, as the first bytes of a large payload do: what the
 * text holds so far, with its open strings, lists and objects closed, cut to the limits. It is strict JSON
 * otherwise, so that a text that is not JSON is shown as text.
 *
 * @param text The start of the text.
 * @param limits How far to cut the value.
 * @returns The value and whether it was cut (by the limits, or because the text stops inside it); null when
 *   the text is not the start of a JSON value.
 * @example
 * ```ts
 * import { parseJsonHead } from "./view_cut.ts";
 * parseJsonHead('{"text":"Revenue gr', { strings: 100, items: 10, depth: 5 });
 * // { value: { text: "Revenue gr" }, cut: true }
 * parseJsonHead("Revenue grew", { strings: 100, items: 10, depth: 5 }); // null
 * ```
 */
export function parseJsonHead(text: string, limits: CutLimits = PAGE_CUT): CutValue | null {
  const reader = new HeadReader(text, limits);
  try {
    reader.space();
    if (reader.atEnd()) return null;
    const value = reader.value(0);
    reader.space();
    if (!reader.atEnd()) return null;
    return { value, cut: reader.cut };
  } catch (error) {
    if (error instanceof NotJson) return null;
    throw error;
  }
}

class NotJson extends Error {}

/** A reader of a JSON text that may stop anywhere: at the end of the text, whatever is open is closed. */
class HeadReader {
  #i = 0;
  cut = false;
  readonly more: string;

  constructor(readonly text: string, readonly limits: CutLimits) {
    this.more = limits.more ?? MORE;
  }

  atEnd(): boolean {
    return this.#i >= this.text.length;
  }

  space(): void {
    while (this.#i < this.text.length && " \t\n\r".includes(this.text[this.#i]!)) this.#i++;
  }

  /** The value at the reader, or, at the end of the text, what was read of it. */
  value(depth: number): Json {
    this.space();
    if (this.atEnd()) {
      this.cut = true;
      return null;
    }
    const c = this.text[this.#i]!;
    if (c === "{" || c === "[") {
      if (depth >= this.limits.depth) {
        this.cut = true;
        this.skipNested();
        return this.more;
      }
      return c === "{" ? this.object(depth) : this.list(depth);
    }
    if (c === '"') return this.string(this.limits.strings);
    return this.literal();
  }

  list(depth: number): Json[] {
    this.#i++;
    const out: Json[] = [];
    this.space();
    if (this.text[this.#i] === "]") {
      this.#i++;
      return out;
    }
    for (;;) {
      const item = this.value(depth + 1);
      if (out.length < this.limits.items) out.push(item);
      else this.cut = true;
      if (!this.comma("]")) return out;
    }
  }

  object(depth: number): { [key: string]: Json } {
    this.#i++;
    const out: { [key: string]: Json } = {};
    let n = 0;
    this.space();
    if (this.text[this.#i] === "}") {
      this.#i++;
      return out;
    }
    for (;;) {
      this.space();
      if (this.atEnd()) {
        this.cut = true;
        return out;
      }
      if (this.text[this.#i] !== '"') throw new NotJson();
      const key = this.string(Math.max(this.limits.strings, KEY_CHARS));
      this.space();
      if (this.atEnd()) {
        this.cut = true;
        return out;
      }
      if (this.text[this.#i++] !== ":") throw new NotJson();
      const item = this.value(depth + 1);
      if (n++ < this.limits.items) {
        Object.defineProperty(out, key, {
          value: item,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      } else this.cut = true;
      if (!this.comma("}")) return out;
    }
  }

  /** After an entry: true for a comma, false for the closing bracket or the end of the text. */
  comma(close: string): boolean {
    this.space();
    if (this.atEnd()) {
      this.cut = true;
      return false;
    }
    const c = this.text[this.#i++];
    if (c === ",") return true;
    if (c === close) return false;
    throw new NotJson();
  }

  string(limit: number): string {
    this.#i++;
    const parts: string[] = [];
    let kept = 0;
    let start = this.#i;
    const keep = (piece: string) => {
      if (kept < limit) parts.push(piece.slice(0, limit - kept));
      kept += piece.length;
    };
    while (this.#i < this.text.length) {
      const c = this.text.charCodeAt(this.#i);
      if (c === 34) { // "
        keep(this.text.slice(start, this.#i));
        this.#i++;
        return this.ended(parts, kept, limit);
      }
      if (c < 32) throw new NotJson();
      if (c === 92) { // \
        keep(this.text.slice(start, this.#i));
        const escaped = this.escape();
        if (escaped === null) {
          start = this.#i;
          break;
        }
        keep(escaped);
        start = this.#i;
        continue;
      }
      this.#i++;
    }
    keep(this.text.slice(start, this.#i));
    this.cut = true;
    return parts.join("") + this.more;
  }

  ended(parts: string[], kept: number, limit: number): string {
    if (kept <= limit) return parts.join("");
    this.cut = true;
    return parts.join("") + this.more;
  }

  /** The character of an escape at the reader, or null when the text stops inside it. */
  escape(): string | null {
    const next = this.text[this.#i + 1];
    if (next === undefined) {
      this.#i = this.text.length;
      return null;
    }
    const simple: Record<string, string> = {
      '"': '"',
      "\\": "\\",
      "/": "/",
      b: "\b",
      f: "\f",
      n: "\n",
      r: "\r",
      t: "\t",
    };
    if (next in simple) {
      this.#i += 2;
      return simple[next]!;
    }
    if (next !== "u") throw new NotJson();
    const hex = this.text.slice(this.#i + 2, this.#i + 6);
    if (!/^[0-9a-fA-F]*$/.test(hex)) throw new NotJson();
    if (hex.length < 4) {
      this.#i = this.text.length;
      return null;
    }
    this.#i += 6;
    return String.fromCharCode(parseInt(hex, 16));
  }

  literal(): Json {
    const m = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(
      this.text.slice(this.#i, this.#i + 400),
    );
    const rest = this.text.slice(this.#i);
    if (!m) {
      // The text may stop inside a literal: "tr", "nul", "-".
      if (["true", "false", "null"].some((w) => w.startsWith(rest)) || rest === "-") {
        this.#i = this.text.length;
        this.cut = true;
        return null;
      }
      throw new NotJson();
    }
    this.#i += m[0].length;
    // Or inside a number's fraction or exponent: "1.", "2e", "3e+".
    if (/^[0-9]/.test(m[0]) || m[0].startsWith("-")) {
      const tail = this.text.slice(this.#i);
      if (tail !== "" && /^(?:\.\d*)?(?:[eE][+-]?\d*)?$/.test(tail)) {
        this.#i = this.text.length;
        this.cut = true;
      }
    }
    return JSON.parse(m[0]) as Json;
  }

  /** Skips a list or object too deep to show, to the end of the text if it does not close. */
  skipNested(): void {
    let depth = 0;
    let inString = false;
    while (this.#i < this.text.length) {
      const c = this.text[this.#i++]!;
      if (inString) {
        if (c === "\\") this.#i++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === "{" || c === "[") depth++;
      else if (c === "}" || c === "]") {
        if (--depth === 0) return;
      }
    }
  }
}

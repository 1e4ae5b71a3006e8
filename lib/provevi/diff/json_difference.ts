/**
 * The first place where two JSON values differ, as a path (`params.prompt[1].content[0].text`) and the two
 * values there: what a divergence names. Objects are compared by their keys in sorted order, as their RFC 8785
 * form would be, so the order in which a writer put the keys never counts.
 * @module
 */

/** Where two JSON values first differ, and what each holds there (`undefined` where one lacks the place). */
export interface JsonDifference {
  /** The path from the top, such as `params.prompt[1].content[0].text`; "" for the values themselves. */
  readonly path: string;
  readonly a: unknown;
  readonly b: unknown;
}

/**
 * The first difference between two JSON values, depth first, keys in sorted order.
 *
 * @param a A JSON value.
 * @param b Another.
 * @param path The path of the two values, when they are parts of larger ones.
 * @returns The first difference, or null when they are equal.
 * @example
 * ```ts
 * import { jsonDifference } from "./json_difference.ts";
 * jsonDifference({ p: [1, { t: "a" }] }, { p: [1, { t: "b" }] })?.path; // "p[1].t"
 * ```
 */
export function jsonDifference(a: unknown, b: unknown, path = ""): JsonDifference | null {
  if (a === b) return null;
  const kind = (v: unknown) => (Array.isArray(v) ? "array" : v === null ? "null" : typeof v);
  if (kind(a) !== kind(b) || typeof a !== "object" || a === null) return { path, a, b };
  if (Array.isArray(a)) {
    const other = b as unknown[];
    for (let i = 0; i < Math.max(a.length, other.length); i++) {
      const found = jsonDifference(a[i], other[i], `${path}[${i}]`);
      if (found) return found;
    }
    return null;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = [...new Set([...Object.keys(x), ...Object.keys(y)])].sort();
  for (const key of keys) {
    const at = /^[A-Za-z_$][\w$]*$/.test(key)
      ? (path ? `${path}.${key}` : key)
      : `${path}[${JSON.stringify(key)}]`;
    // A key that holds undefined is a key JSON does not have.
    if (!(key in x) || x[key] === undefined) {
      if (y[key] !== undefined) return { path: at, a: undefined, b: y[key] };
      continue;
    }
    if (!(key in y) || y[key] === undefined) return { path: at, a: x[key], b: undefined };
    const found = jsonDifference(x[key], y[key], at);
    if (found) return found;
  }
  return null;
}

/**
 * A value in a line for a person: JSON, cut to `max` characters with `…`; `(none)` for a place one side lacks.
 *
 * @param value A JSON value, or undefined.
 * @param max The most characters to show.
 * @returns The text.
 */
export function shownValue(value: unknown, max = 60): string {
  if (value === undefined) return "(none)";
  const text = JSON.stringify(value) ?? String(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

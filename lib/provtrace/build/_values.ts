/**
 * The small readers of JSON values that the rows of a run share, and the canonical text a row stores.
 * @module
 */
import canonicalize from "canonicalize";
import type { Json } from "../../provevi/mod.ts";
import { plainCanonicalText } from "../../provevi/evidence/mod.ts";

/** The RFC 8785 text of a value (null for undefined), as a row stores JSON. */
export const json = (value: unknown): string => canonicalJson(value ?? null);

/**
 * The RFC 8785 text of a value, as the `canonicalize` package writes it: a value made of plain JSON (what
 * `JSON.parse` gives, as payloads are) is written here directly, recursively, without the package's guard of
 * every object against cycles and `toJSON`; anything else, and values nested deeper than a stack may hold, go to
 * the package, which gives the same text or the same refusal.
 *
 * @param value The value.
 * @returns Its canonical JSON text.
 * @throws Error for a value RFC 8785 cannot write (a lone surrogate, a number JSON cannot hold), as the package.
 */
export function canonicalJson(value: unknown): string {
  // Most values are plain JSON: one JSON.stringify of them, or of a copy with their keys sorted.
  const text = plainCanonicalText(value) ?? plainJson(value, 0);
  return text ?? canonicalize(value)!;
}

/** How deep {@linkcode plainJson} goes before it leaves a value to the package's own stack. */
const DEEPEST = 200;

/** The canonical text of a plain JSON value, or undefined when it is not one (then the package decides). */
function plainJson(value: unknown, depth: number): string | undefined {
  switch (typeof value) {
    case "string":
      return value.isWellFormed() ? JSON.stringify(value) : undefined;
    case "number":
      return Number.isFinite(value) ? JSON.stringify(value) : undefined;
    case "boolean":
      return value ? "true" : "false";
    case "object":
      break;
    default:
      return undefined;
  }
  if (value === null) return "null";
  if (depth >= DEEPEST) return undefined;
  if (Array.isArray(value)) {
    let text = "[";
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const part = item === undefined ? "null" : plainJson(item, depth + 1);
      if (part === undefined) return undefined;
      text += i === 0 ? part : `,${part}`;
    }
    return `${text}]`;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return undefined; // a Date, a boxed value, a class: toJSON rules
  const record = value as Record<string, unknown>;
  let text = "{";
  for (const key of Object.keys(record).sort()) {
    const item = record[key];
    if (item === undefined) continue;
    const part = plainJson(item, depth + 1);
    if (part === undefined || !key.isWellFormed()) return undefined;
    text += `${text.length === 1 ? "" : ","}${JSON.stringify(key)}:${part}`;
  }
  return `${text}}`;
}

/** A JSON object. */
export type Obj = { [key: string]: Json };
/** Whether a value is a JSON object (not null, not a list). */
export function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
/** A value if it is a string, else null. */
export function str(v: unknown): string | null {
  return typeof v === "string" ? v : null;
}
/** A value if it is a finite number, else null. */
export function num(v: unknown): number | null {
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

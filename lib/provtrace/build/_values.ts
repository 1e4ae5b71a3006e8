/**
 * The small readers of JSON values that the rows of a run share, and the canonical text a row stores.
 * @module
 */
import canonicalize from "canonicalize";
import type { Json } from "../../provevi/mod.ts";

/** The RFC 8785 text of a value (null for undefined), as a row stores JSON. */
export const json = (value: unknown): string => canonicalize(value ?? null)!;

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

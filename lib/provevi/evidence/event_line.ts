/**
 * A faster way to the canonical line of an event (RFC 8785, JCS), for the writer's hot path: an event's fields
 * are known, so they are put in their sorted order in one object handed to `JSON.stringify`, whose strings and
 * numbers are JCS's: each value as it is when its objects' keys are in order already (a writer that builds its
 * events so pays no copy), else copied with its keys sorted. A maker that builds its data so, with well-formed
 * texts and finite numbers, may say so (`EventInit.dataCanonical`), and its data is not even looked over. Anything
 * out of the ordinary (a field more or less, an object that is not plain, a key that starts with a digit, a lone
 * surrogate) returns null, and the caller uses the general canonicalizer, which gives the same text or its error.
 * @module
 */

/** The fields of an event, in the order JCS sorts them. */
const SORTED_FIELDS = [
  "actor",
  "component",
  "confidence",
  "data",
  "parent_span_id",
  "payload",
  "prev",
  "refs",
  "run_id",
  "seq",
  "span_id",
  "started_at",
  "time",
  "trace_id",
  "type",
] as const;

class NotPlain extends Error {}

/** True when `JSON.stringify(value)` is already its JCS text: plain values, every object's keys in order. */
function canonical(value: unknown): boolean {
  if (typeof value === "string") return value.isWellFormed();
  if (value === null || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value);
  if (typeof value !== "object") return false;
  if (Array.isArray(value)) {
    if (!plainArray(value)) return false;
    for (const v of value) if (v === undefined || !canonical(v)) return false;
    return true;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  let previous: string | null = null;
  for (const key in value) {
    const c = key.charCodeAt(0);
    if (
      (previous !== null && !(previous < key)) || (c >= 48 && c <= 57) || key === "__proto__" ||
      !key.isWellFormed()
    ) return false;
    previous = key;
    const v = (value as Record<string, unknown>)[key];
    if (v === undefined || !canonical(v)) return false;
  }
  return true;
}

/** An array that JSON.stringify writes element by element: no subclass, no toJSON of its own. */
function plainArray(value: unknown[]): boolean {
  return Object.getPrototypeOf(value) === Array.prototype && !Object.hasOwn(value, "toJSON");
}

/**
 * True for a JSON leaf that JSON.stringify writes as RFC 8785 does (a well-formed string, a finite number, a
 * boolean, null); false for an object or array; throws NotPlain for anything else.
 */
function plainLeaf(value: unknown): boolean {
  if (typeof value === "string") {
    if (!value.isWellFormed()) throw new NotPlain();
    return true;
  }
  if (value === null || typeof value === "boolean") return true;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new NotPlain();
    return true;
  }
  if (typeof value !== "object") throw new NotPlain();
  return false;
}

function sorted(value: unknown): unknown {
  if (plainLeaf(value)) return value;
  if (Array.isArray(value)) {
    if (!plainArray(value)) throw new NotPlain();
    return value.map(sorted);
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) throw new NotPlain();
  const source = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(source).sort()) {
    // A key that is an array index would be put first by any object, out of JCS's order.
    const c = key.charCodeAt(0);
    if (!key.isWellFormed() || (c >= 48 && c <= 57)) throw new NotPlain();
    const v = source[key];
    if (v === undefined) continue;
    // a function (a toJSON among them) is the general canonicalizer's to call or drop
    if (typeof v === "function" || typeof v === "symbol") throw new NotPlain();
    if (key === "__proto__") {
      Object.defineProperty(out, key, {
        value: sorted(v),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else out[key] = sorted(v);
  }
  return out;
}

function plain(value: unknown): unknown {
  return canonical(value) ? value : sorted(value);
}

/** A text as it is when RFC 8785 takes it so (the usual case, without a call), else as {@linkcode plain}. */
function text(value: unknown): unknown {
  return typeof value === "string" && value.isWellFormed() ? value : plain(value);
}

/** A text or null as it is, else as {@linkcode plain}. */
function textOrNull(value: unknown): unknown {
  return value === null ? null : text(value);
}

/**
 * The canonical line of an event that `EventChain.next` made (so it has exactly the fields of an event), or
 * null when the general canonicalizer must decide. One `JSON.stringify` of the fields in their sorted order, each
 * value as it is when `JSON.stringify` already writes its JCS text, else a copy with its keys sorted: the line is
 * made in one flat string.
 *
 * @param e The event, as the chain built it.
 * @param dataCanonical True when the event's maker built its `data` so that `JSON.stringify` writes its RFC 8785
 * text (see `EventInit.dataCanonical`): the data is then not walked.
 * @returns The RFC 8785 text, or null.
 */
export function chainedEventLine(event: object, dataCanonical = false): string | null {
  const e = event as Record<string, unknown>;
  try {
    // an object literal: its keys in this order, one shape for every event
    return JSON.stringify({
      actor: text(e.actor),
      component: text(e.component),
      confidence: text(e.confidence),
      data: dataCanonical ? e.data : plain(e.data),
      parent_span_id: textOrNull(e.parent_span_id),
      payload: textOrNull(e.payload),
      prev: textOrNull(e.prev),
      refs: plain(e.refs),
      run_id: text(e.run_id),
      seq: plain(e.seq),
      span_id: textOrNull(e.span_id),
      started_at: textOrNull(e.started_at),
      time: text(e.time),
      trace_id: textOrNull(e.trace_id),
      type: text(e.type),
    });
  } catch (error) {
    if (error instanceof NotPlain || error instanceof RangeError) return null;
    throw error;
  }
}

/**
 * The canonical line of an event with exactly the fields of an event and plain JSON values, or null.
 *
 * @param event The event.
 * @param dataCanonical True when the event's maker vouches for its `data` (see {@linkcode chainedEventLine}).
 * @returns The RFC 8785 text, or null when the general canonicalizer must decide.
 */
export function fastEventLine(event: object, dataCanonical = false): string | null {
  const e = event as Record<string, unknown>;
  if (Object.keys(e).length !== SORTED_FIELDS.length) return null;
  for (const key of SORTED_FIELDS) {
    if (!Object.hasOwn(e, key) || e[key] === undefined) return null;
  }
  return chainedEventLine(e, dataCanonical);
}

/**
 * The RFC 8785 text of a plain JSON value (what `JSON.parse` gives: an event read back from its line, a manifest,
 * a payload), or null when the general canonicalizer must decide: one walk and one `JSON.stringify` when its
 * objects' keys are in order (as in every canonical line), else of a copy with its keys sorted. A number no double
 * holds, a lone surrogate, a key that starts with a digit, a value that is not plain JSON (a class, a function,
 * a `toJSON`) or nesting deeper than the stack holds gives null: the general canonicalizer then gives the same
 * text or its refusal.
 *
 * @param value The value.
 * @returns The RFC 8785 text, or null.
 * @example
 * ```ts
 * import { plainCanonicalText } from "./event_line.ts";
 * plainCanonicalText(JSON.parse('{"b":1,"a":[true,null]}')); // '{"a":[true,null],"b":1}'
 * ```
 */
export function plainCanonicalText(value: unknown): string | null {
  try {
    return JSON.stringify(ordered(value));
  } catch (error) {
    if (error instanceof NotPlain || error instanceof RangeError) return null;
    throw error;
  }
}

/**
 * The value itself when `JSON.stringify` writes its RFC 8785 text, else a copy of the parts that are out of
 * order, their keys sorted (what is in order inside them is not copied): one walk, so a large value with one
 * small object out of order (a span's attributes around a whole conversation) costs a walk and a few objects.
 * Throws NotPlain for what is not plain JSON, as {@linkcode sorted}.
 */
function ordered(value: unknown): unknown {
  if (plainLeaf(value)) return value;
  if (Array.isArray(value)) return orderedArray(value);
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) throw new NotPlain();
  const source = value as Record<string, unknown>;
  const keys = Object.keys(source);
  let inOrder = true;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    // A key that is an array index would be put first by any object, out of JCS's order.
    const c = key.charCodeAt(0);
    if (!key.isWellFormed() || (c >= 48 && c <= 57)) throw new NotPlain();
    if (key === "__proto__" || (i > 0 && !(keys[i - 1]! < key))) inOrder = false;
  }
  if (!inOrder) keys.sort();
  let out: Record<string, unknown> | null = inOrder ? null : {};
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const v = source[key];
    // a function (a toJSON among them) is the general canonicalizer's to call or drop
    if (typeof v === "function" || typeof v === "symbol") throw new NotPlain();
    const w = v === undefined ? undefined : ordered(v);
    if (out === null && w !== v) out = copyOf(source, keys.slice(0, i));
    if (out !== null && w !== undefined) put(out, key, w);
  }
  return out ?? value;
}

function orderedArray(value: unknown[]): unknown[] {
  if (!plainArray(value)) throw new NotPlain();
  let out: unknown[] | null = null;
  for (let i = 0; i < value.length; i++) {
    const v = value[i];
    if (v === undefined) throw new NotPlain();
    const w = ordered(v);
    if (out === null && w !== v) out = value.slice(0, i);
    if (out !== null) out.push(w);
  }
  return out ?? value;
}

/** A new object of `keys` of `source`, in that order. */
function copyOf(source: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of keys) if (source[key] !== undefined) put(out, key, source[key]);
  return out;
}

/** Sets a key as an own property, `__proto__` too. */
function put(out: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") {
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  } else out[key] = value;
}

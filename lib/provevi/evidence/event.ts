/**
 * The evidence event: one typed, append-only record of one thing that happened in a run, written as one
 * line of RFC 8785 canonical JSON.
 * @module
 */
import canonicalize from "canonicalize";
import { fastEventLine } from "./event_line.ts";
import { isSha256 } from "./hash.ts";

/** How far a reader can trust an event. */
export type Confidence = "observed" | "parsed" | "inferred" | "verified";

/** The confidences an event may carry. */
export const CONFIDENCES: readonly Confidence[] = ["observed", "parsed", "inferred", "verified"];

/** The event types of provrun-plan.txt, "Classes", and of the telemetry policy and the span receiver. */
export const EVENT_TYPES = [
  "run_created",
  "access_requested",
  "access_granted",
  "access_denied",
  "context_resolved",
  "snapshot_materialized",
  "input_staged",
  "sandbox_started",
  "prompt_rendered",
  "model_called",
  "tool_called",
  "trace_imported",
  "sandbox_completed",
  "input_verified",
  "output_artifact_created",
  "run_completed",
  "run_failed",
  "step_failed",
  "note_added",
  "telemetry_blocked",
  "telemetry_problem",
  "span_recorded",
  "hook_called",
  "spans_received",
] as const;

/** One of {@linkcode EVENT_TYPES}. */
export type EventType = typeof EVENT_TYPES[number];

/** A JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * One evidence event. The fields are those of provrun-plan.txt ("Evidence events") and the OpenTelemetry
 * IDs and `started_at` of provtrace-spec.txt; `docs/evidence-format.md` specifies each.
 */
export interface EvidenceEvent {
  run_id: string;
  seq: number;
  time: string;
  type: string;
  component: string;
  actor: string;
  refs: string[];
  data: { [key: string]: Json };
  payload: string | null;
  confidence: Confidence;
  prev: string | null;
  trace_id: string | null;
  span_id: string | null;
  parent_span_id: string | null;
  started_at: string | null;
}

/** The fields of an event, in the order the format lists them. */
export const EVENT_FIELDS: readonly (keyof EvidenceEvent)[] = [
  "run_id",
  "seq",
  "time",
  "type",
  "component",
  "actor",
  "refs",
  "data",
  "payload",
  "confidence",
  "prev",
  "trace_id",
  "span_id",
  "parent_span_id",
  "started_at",
];

const TIME = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(\.\d{1,9})?Z$/;
const HEX32 = /^[0-9a-f]{32}$/;
const HEX16 = /^[0-9a-f]{16}$/;

/**
 * True when `value` is a real UTC time in the form events write: `YYYY-MM-DDThh:mm:ss[.fraction]Z`, with a
 * date that exists (no 30 February), hours 00–23, minutes and seconds 00–59 (provrun never writes a leap
 * second) and one to nine fraction digits.
 *
 * @param value Any value.
 * @returns Whether it is such a time.
 * @example
 * ```ts
 * import { isUtcTime } from "./event.ts";
 * isUtcTime("2026-02-28T23:59:59.5Z"); // true
 * isUtcTime("2026-02-30T12:00:00Z"); // false
 * ```
 */
export function isUtcTime(value: unknown): value is string {
  // Read for every event's time and start: the digits are at fixed places once the form matches, and are read
  // there, without the match's groups and their arrays.
  if (typeof value !== "string" || !TIME.test(value)) return false;
  const month = digits(value, 5, 2);
  const day = digits(value, 8, 2);
  if (month < 1 || month > 12 || day < 1 || digits(value, 11, 2) > 23) return false;
  if (digits(value, 14, 2) > 59 || digits(value, 17, 2) > 59) return false;
  const year = digits(value, 0, 4);
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= (month === 2 && leap ? 29 : DAYS[month - 1]!);
}

/** The days of each month of a year that is not a leap year. */
const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The number the ASCII digits of `text` from `at` make, `count` of them. */
function digits(text: string, at: number, count: number): number {
  let n = 0;
  for (let i = at; i < at + count; i++) n = n * 10 + text.charCodeAt(i) - 48;
  return n;
}

/**
 * The canonical line of an event: RFC 8785 (JCS) JSON, no newline.
 *
 * @param event The event.
 * @param dataCanonical True when the event's maker vouches that `JSON.stringify(event.data)` is its RFC 8785
 * text (see `EventInit.dataCanonical`).
 * @returns The line whose UTF-8 bytes the chain hashes.
 * @example
 * ```ts
 * import { eventLine } from "./event.ts";
 * // eventLine(event) === '{"actor":"me","component":"RunContext",…}'
 * ```
 */
export function eventLine(event: EvidenceEvent, dataCanonical = false): string {
  const line = fastEventLine(event, dataCanonical) ?? canonicalize(event);
  if (line === undefined) throw new TypeError("an event must be a JSON object");
  return line;
}

/**
 * The RFC 8785 form of a parsed JSON value, or null when it has none: a text holding a lone surrogate (such as
 * the escape `\ud800`) has no UTF-8 form, so no canonical line can hold it.
 *
 * @param value A value that `JSON.parse` gave.
 * @returns The canonical text, or null.
 * @example
 * ```ts
 * import { canonicalOrNull } from "./event.ts";
 * canonicalOrNull(JSON.parse('{"b":1,"a":2}')); // '{"a":2,"b":1}'
 * canonicalOrNull(JSON.parse('"\\ud800"')); // null
 * ```
 */
export function canonicalOrNull(value: unknown): string | null {
  try {
    return canonicalize(value) ?? null;
  } catch {
    return null;
  }
}

/**
 * The problems of a parsed value as an event, empty when it is one. Checks every field's presence and type,
 * and that no other field is present.
 *
 * @param value A parsed JSON value.
 * @returns One text per problem.
 */
export function eventProblems(value: unknown): string[] {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return ["is not a JSON object"];
  const e = value as Record<string, unknown>;
  const problems: string[] = [];
  for (const key of Object.keys(e)) {
    if (!(EVENT_FIELDS as readonly string[]).includes(key)) problems.push(`has an unknown field "${key}"`);
  }
  const missing = EVENT_FIELDS.filter((key) => !(key in e));
  if (missing.length) problems.push(`lacks the field${missing.length > 1 ? "s" : ""} ${missing.join(", ")}`);
  if (problems.length) return problems;
  const text = (k: string) => typeof e[k] === "string" && (e[k] as string).length > 0;
  if (!text("run_id")) problems.push("run_id is not a non-empty text");
  if (!Number.isSafeInteger(e.seq) || (e.seq as number) < 0) {
    problems.push("seq is not a whole number from 0");
  }
  if (!isUtcTime(e.time)) problems.push("time is not a real UTC RFC 3339 time");
  if (!text("type")) problems.push("type is not a non-empty text");
  if (!text("component")) problems.push("component is not a non-empty text");
  if (typeof e.actor !== "string") problems.push("actor is not a text");
  if (!Array.isArray(e.refs) || !e.refs.every((r) => typeof r === "string")) {
    problems.push("refs is not a list of texts");
  }
  if (typeof e.data !== "object" || e.data === null || Array.isArray(e.data)) {
    problems.push("data is not an object");
  }
  if (e.payload !== null && !isSha256(e.payload)) problems.push("payload is neither null nor a SHA-256");
  if (!(CONFIDENCES as readonly unknown[]).includes(e.confidence)) {
    problems.push(`confidence is not one of ${CONFIDENCES.join(", ")}`);
  }
  if (e.prev !== null && !isSha256(e.prev)) problems.push("prev is neither null nor a SHA-256");
  if (e.trace_id !== null && !(typeof e.trace_id === "string" && HEX32.test(e.trace_id))) {
    problems.push("trace_id is neither null nor 32 hex digits");
  }
  for (const k of ["span_id", "parent_span_id"]) {
    if (e[k] !== null && !(typeof e[k] === "string" && HEX16.test(e[k] as string))) {
      problems.push(`${k} is neither null nor 16 hex digits`);
    }
  }
  if (e.started_at !== null && !isUtcTime(e.started_at)) {
    problems.push("started_at is neither null nor a real UTC RFC 3339 time");
  }
  return problems;
}

/**
 * The payload hashes an event names: its `payload` field, and the value of each `data` key that ends in
 * `_payload` (such as a model call's `response_payload`).
 *
 * @param event The event.
 * @returns The SHA-256 texts, in the order named.
 */
export function payloadsOf(event: EvidenceEvent): string[] {
  const found: string[] = [];
  if (event.payload) found.push(event.payload);
  for (const [key, value] of Object.entries(event.data)) {
    if (key.endsWith("_payload") && typeof value === "string") found.push(value);
  }
  return found;
}

/**
 * The current UTC time with microseconds, as events write it: `2026-10-31T18:20:26.242767Z`.
 *
 * @returns The time text.
 */
export function nowUtc(): string {
  const micros = Math.round((performance.timeOrigin + performance.now()) * 1000);
  return formatMicros(micros);
}

/** Formats microseconds since the epoch as an RFC 3339 UTC time with six fraction digits. */
export function formatMicros(micros: number): string {
  const second = Math.floor(micros / 1_000_000);
  if (second !== lastSecond) {
    // toISOString is the costly part, and a run writes many events a second: reuse its prefix.
    lastSecond = second;
    lastPrefix = new Date(second * 1000).toISOString().slice(0, 19);
  }
  const frac = String(micros - second * 1_000_000).padStart(6, "0");
  // joined, not added: one flat text, which JSON.stringify writes at twice the speed of a text made of parts
  return [lastPrefix, ".", frac, "Z"].join("");
}

let lastSecond = NaN;
let lastPrefix = "";

/**
 * Assessments: judgements on a run, an event or a span, such as a score or a yes or no, with a rationale and
 * who made it.
 * @module
 */
import { ProveviError } from "../evidence/errors.ts";
import { checkRunId } from "../evidence/record.ts";

/**
 * What an assessment judges: a run ID, `RUN#SEQ` for an event, or an object naming a run and one event or
 * span.
 */
export type AssessTarget = string | { run: string; seq?: number; span?: string };

/** The optional parts of an assessment. */
export interface AssessOptions {
  /** Why the value is what it is. */
  rationale?: string;
  /** Who or what made it, such as a person's address or an evaluator's name. */
  source?: string;
}

/** One stored assessment. */
export interface Assessment {
  id: number;
  run_id: string;
  /** The event it judges, or null. */
  seq: number | null;
  /** The span it judges, or null. */
  span_id: string | null;
  name: string;
  value: unknown;
  rationale: string | null;
  source: string | null;
  created_at: string;
}

/**
 * The run, event and span that a target names.
 *
 * @param target A run ID, `RUN#SEQ`, or `{ run, seq }` / `{ run, span }`.
 * @returns The run ID and the event's seq or the span ID (null when not given).
 * @throws ProveviError for a target that names both an event and a span, or a malformed seq or span ID.
 * @example
 * ```ts
 * import { assessmentTarget } from "./assess.ts";
 * assessmentTarget("run-x#3"); // { run_id: "run-x", seq: 3, span_id: null }
 * ```
 */
export function assessmentTarget(
  target: AssessTarget,
): { run_id: string; seq: number | null; span_id: string | null } {
  let run: string, seq: number | null = null, span: string | null = null;
  if (typeof target === "string") {
    const hash = target.indexOf("#");
    run = hash < 0 ? target : target.slice(0, hash);
    if (hash >= 0) seq = parseSeq(target.slice(hash + 1));
  } else {
    run = target.run;
    if (target.seq !== undefined) seq = parseSeq(String(target.seq));
    if (target.span !== undefined) span = target.span;
  }
  checkRunId(run);
  if (seq !== null && span !== null) {
    throw new ProveviError("an assessment judges a run, an event or a span, not both");
  }
  if (span !== null && !/^[0-9a-f]{16}$/.test(span)) {
    throw new ProveviError(`"${span}" is not a span ID: write its 16 lowercase hex digits`);
  }
  return { run_id: run, seq, span_id: span };
}

function parseSeq(text: string): number {
  if (!/^\d+$/.test(text)) {
    throw new ProveviError(`"${text}" is not an event's seq: write a whole number from 0`);
  }
  return Number(text);
}

/**
 * The value of an assessment as typed on a command line: `true`/`false`, a number, or else the text.
 *
 * @param text What was typed.
 * @example
 * ```ts
 * import { parseAssessmentValue } from "./assess.ts";
 * parseAssessmentValue("0.8"); // 0.8
 * ```
 */
export function parseAssessmentValue(text: string): boolean | number | string {
  if (text === "true") return true;
  if (text === "false") return false;
  // A number too big for JSON, such as 1e999, stays the text that was typed.
  if (/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(text) && Number.isFinite(Number(text))) return Number(text);
  return text;
}

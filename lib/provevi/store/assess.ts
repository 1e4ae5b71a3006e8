/**
 * Assessments: judgements on an experiment, a run, an event or a span, such as a score or a yes or no, with a
 * rationale and who made it.
 * @module
 */
import { canonicalOrNull } from "../evidence/event.ts";
import { ProveviError } from "../evidence/errors.ts";
import { checkRunId } from "../evidence/record.ts";

/**
 * What an assessment judges: a run ID, `RUN#SEQ` for an event, an `experiment://` URI, or an object naming a
 * run and one event or span, or an experiment (by its URI or its name; pinned, one version of it).
 */
export type AssessTarget = string | { run: string; seq?: number; span?: string } | { experiment: string };

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
  /** The run it judges (or whose event or span it judges); null for an experiment's. */
  run_id: string | null;
  /** The event it judges, or null. */
  seq: number | null;
  /** The span it judges, or null. */
  span_id: string | null;
  /**
   * The experiment it judges, by its whole URI; pinned (`?at=commit:…`) when it judges one version. Null for
   * a run's.
   */
  experiment: string | null;
  name: string;
  value: unknown;
  rationale: string | null;
  source: string | null;
  created_at: string;
}

/** What a target names, as {@linkcode assessmentTarget} reads it. */
export interface AssessmentTargetOf {
  run_id: string | null;
  seq: number | null;
  span_id: string | null;
  /** The experiment as written (a URI or a name, pinned or not); the store finds its whole URI. */
  experiment: string | null;
}

/**
 * The run, event, span or experiment that a target names.
 *
 * @param target A run ID, `RUN#SEQ`, an `experiment://` URI, `{ run, seq }`, `{ run, span }` or
 * `{ experiment }`.
 * @returns The run ID and the event's seq or the span ID (null when not given), or the experiment.
 * @throws ProveviError for a target that names both an event and a span, a malformed seq or span ID, or an
 * experiment that is not one (another scheme, a selector other than `?at=commit:`).
 * @example
 * ```ts
 * import { assessmentTarget } from "./assess.ts";
 * assessmentTarget("run-x#3"); // { run_id: "run-x", seq: 3, span_id: null, experiment: null }
 * ```
 */
export function assessmentTarget(target: AssessTarget): AssessmentTargetOf {
  if (typeof target === "string" && target.startsWith("experiment://")) target = { experiment: target };
  if (typeof target === "object" && target !== null && "experiment" in target) {
    return { run_id: null, seq: null, span_id: null, experiment: experimentTarget(target.experiment) };
  }
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
  return { run_id: run, seq, span_id: span, experiment: null };
}

/** An experiment as a target: its URI (`experiment://…`) or name, with no selector or a commit's. */
function experimentTarget(written: unknown): string {
  if (typeof written !== "string" || written.trim() === "" || /[\s#]|\p{Cc}/u.test(written)) {
    throw new ProveviError(
      `${
        JSON.stringify(written)
      } is not an experiment: write its URI (experiment://org/domain/env/…) or its name`,
    );
  }
  if (written.includes("://") && !written.startsWith("experiment://")) {
    throw new ProveviError(`"${written}" is not an experiment: its URI starts with experiment://`);
  }
  const selector = written.includes("?") ? written.slice(written.indexOf("?")) : "";
  if (selector !== "" && !/^\?at=commit:[0-9a-f]+$/.test(selector)) {
    throw new ProveviError(
      `"${written}" names ${selector}, and an assessment judges an experiment, or one version of it ` +
        `(?at=commit:…): a branch moves`,
    );
  }
  return written;
}

/**
 * The experiment that a target names, among the experiments a store knows: its whole URI, or the one whose
 * URI ends with the name (`q3`, `credit/q3`), as the store's questions by experiment take it.
 *
 * @param written The experiment as the target wrote it, without a selector.
 * @param known The URIs of the experiments that the store's runs named.
 * @param where The store, for the error.
 * @returns The experiment's whole URI.
 * @throws ProveviError when no experiment, or more than one, has that name.
 * @example
 * ```ts
 * import { namedExperiment } from "./assess.ts";
 * namedExperiment("q", ["experiment://acme/risk/dev/credit/q"], "store file"); // "experiment://acme/risk/dev/credit/q"
 * ```
 */
export function namedExperiment(written: string, known: readonly string[], where: string): string {
  const found = written.includes("://")
    ? known.filter((e) => e === written)
    : known.filter((e) => e === written || e.endsWith(`/${written}`));
  if (found.length === 1) return found[0]!;
  if (found.length > 1) {
    throw new ProveviError(
      `"${written}" names ${found.length} experiments (${found.join(", ")}); pass the whole URI`,
    );
  }
  throw new ProveviError(
    `no run in ${where} named the experiment ${written}: an assessment judges an experiment that runs named ` +
      `(prove experiments lists them)`,
  );
}

/**
 * An assessment's name and value checked as a store keeps them: a name that is not empty, and a value with an
 * RFC 8785 form (no Infinity, NaN, BigInt or lone surrogate).
 *
 * @param name The assessment's name.
 * @param value Its value.
 * @returns The value's canonical JSON text.
 * @throws ProveviError for an empty name or a value that JSON cannot hold.
 * @example
 * ```ts
 * import { assessmentValue } from "./assess.ts";
 * assessmentValue("score", { b: 1, a: 0.5 }); // '{"a":0.5,"b":1}'
 * ```
 */
export function assessmentValue(name: string, value: unknown): string {
  if (typeof name !== "string" || name === "") throw new ProveviError("an assessment needs a name");
  const json = value === undefined ? null : canonicalOrNull(value);
  if (json === null || json === undefined) {
    throw new ProveviError(
      `the value of assessment "${name}" is not JSON: use true, false, a number, a text, or a list or object of them`,
    );
  }
  return json;
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

/**
 * A problem a check found, as data: a stable code from {@linkcode PROBLEM_CODES}, where it is (the file, the
 * line of `events.jsonl` and the event's `seq`), and a message for a person. Code that acts on a verdict reads
 * the code and the place, never the message; docs/evidence-format.md lists every code with its check, so that a
 * verifier in another language agrees problem by problem.
 * @module
 */
import { placeholder } from "./_placeholder.ts";
import { PROBLEM_CODES, type ProblemCode } from "./problem_codes.ts";

/** Where a problem is: the file (relative to `evidence/`, or `output/…`, `bundle.json`), line and seq. */
export interface ProblemWhere {
  /** `events.jsonl`, `manifest.json`, `payloads/<sha256>`, `attestation.dsse.json`, `output/<path>`, … */
  file?: string | null;
  /** The line of the file it names (`events.jsonl`, `assessments.jsonl`), from 1. */
  line?: number | null;
  /** The `seq` of the event on that line, when it can be read. */
  seq?: number | null;
}

/** A problem a check found: its code, where it is, and a message for a person. */
export interface Problem {
  /** The stable code ({@linkcode PROBLEM_CODES}); what code acts on. */
  readonly code: ProblemCode;
  /** The file it names, or null. */
  readonly file: string | null;
  /** The line of the file it names (`events.jsonl`, `assessments.jsonl`), from 1, or null. */
  readonly line: number | null;
  /** The `seq` of the event on that line, or null when none can be read. */
  readonly seq: number | null;
  /** One line for a person; never read by code. */
  readonly message: string;
}

/**
 * Makes a problem: the one constructor, so that every problem has a known code and a message of one line.
 *
 * @param code The problem's code.
 * @param message What is wrong, for a person.
 * @param where The file, line and seq it names.
 * @returns The problem.
 * @throws RangeError for a code that is not in {@linkcode PROBLEM_CODES}.
 * @example
 * ```ts
 * import { problem } from "./problem.ts";
 * const p = problem("line.not_json", "events.jsonl line 2 is not JSON", { file: "events.jsonl", line: 2 });
 * p.code; // "line.not_json"
 * ```
 */
export function problem(code: ProblemCode, message: string, where: ProblemWhere = {}): Problem {
  if (!Object.hasOwn(PROBLEM_CODES, code)) {
    throw new RangeError(`unknown problem code ${JSON.stringify(code)}`);
  }
  return {
    code,
    file: where.file ?? null,
    line: where.line ?? null,
    seq: where.seq ?? null,
    // One line, whatever a message quotes from the files; the test switch proves no code reads it.
    message: placeholder.on ? `(${code})` : message.replace(/\s*\n\s*/g, " "),
  };
}

/**
 * Where an event is, for a problem: `events.jsonl`, its line and its seq.
 *
 * @param line The line, from 1.
 * @param seq The event's seq, or null when it cannot be read.
 * @returns The place.
 */
export function atLine(line: number, seq: number | null = null): Required<ProblemWhere> {
  return { file: "events.jsonl", line, seq };
}

/**
 * True when a list of problems holds one of these codes.
 *
 * @param problems The problems.
 * @param codes The codes to look for.
 * @returns Whether any problem has one of them.
 * @example
 * ```ts
 * import { hasCode, problem } from "./problem.ts";
 * hasCode([problem("events.cut", "cut")], "events.cut"); // true
 * ```
 */
export function hasCode(problems: readonly Problem[], ...codes: ProblemCode[]): boolean {
  return problems.some((p) => codes.includes(p.code));
}

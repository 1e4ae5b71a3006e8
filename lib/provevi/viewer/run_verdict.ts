/**
 * The verdict a person reads, from the check's problems by their codes (never their messages): a run is
 * verified, does not verify, cannot be checked here, or is still running. "Cannot be checked here" is a run
 * whose own evidence verifies but whose committed bundle or experiment this viewer could not read (no catalog,
 * a catalog that cannot be opened, no route for the bundle's URI, a store that cannot be reached): a different
 * verdict from tampering, which a person must not confuse with it.
 * @module
 */
import type { Problem } from "../evidence/problem.ts";
import type { ProblemCode } from "../evidence/problem_codes.ts";

/** What the verdict says: `verified`, `does_not_verify`, `cannot_check` or `running`. */
export type VerdictKind = "verified" | "does_not_verify" | "cannot_check" | "running";

/**
 * The codes of the problems that say only that a check could not be made here: the run's evidence itself is not
 * in question. A run whose every problem is one of these cannot be checked here; one other problem and it does
 * not verify.
 */
export const CANNOT_CHECK_CODES: ReadonlySet<ProblemCode> = new Set<ProblemCode>([
  "catalog.missing",
  "catalog.unopenable",
  "bundle.unreachable",
  "experiment.unreadable",
]);

/**
 * The kind of a verdict.
 *
 * @param verdict Whether the run was checked (false while it runs), whether it verifies, and its problems.
 * @returns The kind.
 * @example
 * ```ts
 * import { verdictKind } from "./run_verdict.ts";
 * import { problem } from "../evidence/problem.ts";
 * const missing = problem("catalog.missing", "the committed bundle was not compared: no catalog");
 * verdictKind({ checked: true, ok: false, problems: [missing] }); // "cannot_check"
 * ```
 */
export function verdictKind(
  verdict: { checked: boolean; ok: boolean; problems: readonly Problem[] },
): VerdictKind {
  if (!verdict.checked) return "running";
  if (verdict.ok) return "verified";
  const only = verdict.problems.length > 0 && verdict.problems.every((p) => CANNOT_CHECK_CODES.has(p.code));
  return only ? "cannot_check" : "does_not_verify";
}

/** The words a page shows for a verdict's kind. */
export const VERDICT_WORDS: Readonly<Record<VerdictKind, string>> = {
  verified: "verified",
  does_not_verify: "does not verify",
  cannot_check: "cannot be checked here",
  running: "running",
};

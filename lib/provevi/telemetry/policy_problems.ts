/**
 * The problems of a telemetry policy, as data: each has a `policy.*` code of the problem registry
 * (`evidence/problem.ts`), the policy's file when it was read from one, and a message that starts with the key
 * or the library it is about (`destinations.collector.endpoint: …`).
 * @module
 */
import { type Problem, problem } from "../evidence/problem.ts";
import type { ProblemCode } from "../evidence/problem_codes.ts";

/** A code of a policy's problem. */
export type PolicyCode = Extract<ProblemCode, `policy.${string}`>;

/**
 * Collects the problems of one policy, or of one run file's telemetry section.
 *
 * @example
 * ```ts
 * import { PolicyProblems } from "./policy_problems.ts";
 * const problems = new PolicyProblems("policy.yaml");
 * problems.add("policy.version", "version: missing; write version: 1");
 * problems.list[0]!.code; // "policy.version"
 * ```
 */
export class PolicyProblems {
  /** The problems, in the order found. */
  readonly list: Problem[] = [];
  /** @param file The policy's file, or null when it was not read from one. */
  constructor(readonly file: string | null = null) {}

  /** Adds a problem. */
  add(code: PolicyCode, message: string): void {
    this.list.push(problem(code, message, { file: this.file }));
  }

  /** The number of problems. */
  get length(): number {
    return this.list.length;
  }
}

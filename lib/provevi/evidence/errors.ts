/**
 * The errors that provevi raises on purpose. Everything a user can cause is a
 * {@linkcode ProveviError}; misuse by a programmer is a `TypeError` or `RangeError`.
 * @module
 */
import type { Problem } from "./problem.ts";

/**
 * An error a user can cause, with a message that names the thing and the fix.
 *
 * @example
 * ```ts
 * import { ProveviError } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const error = new ProveviError('cannot open store "x": unknown scheme; use file or sqlite:///path.db');
 * assert.equal(error.exitCode, 1);
 * ```
 */
export class ProveviError extends Error {
  /** The exit code a command gives for this error. */
  readonly exitCode: number = 1;
  /**
   * @param message One line that names the thing and the fix.
   * @param options The `cause` when this error wraps another.
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ProveviError";
  }
}

/**
 * No run of that ID or path; a lookup error.
 *
 * @example
 * ```ts
 * import { findRun, RunNotFound } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * await assert.rejects(findRun("run-20260101T000000Z-00000000", { runs: "fixtures/runs" }), RunNotFound);
 * ```
 */
export class RunNotFound extends ProveviError {
  /** @param message What was looked up, and where. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "RunNotFound";
  }
}

/**
 * The events of a run cannot be read, or a line is not an event (exit code 2 in `prove show`).
 *
 * @example
 * ```ts
 * import { EvidenceReadError, ProveviError } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const error = new EvidenceReadError("events.jsonl line 3 is not JSON");
 * assert.ok(error instanceof ProveviError);
 * assert.equal(error.name, "EvidenceReadError");
 * assert.equal(error.exitCode, 2);
 * ```
 */
export class EvidenceReadError extends ProveviError {
  override readonly exitCode = 2;
  /** @param message The file and line that could not be read. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "EvidenceReadError";
  }
}

/**
 * A question that only an indexed store (sqlite, postgres) can answer.
 *
 * @example
 * ```ts
 * import { FileStore, NeedsIndexedStore, questionsOf } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * await assert.rejects(questionsOf(new FileStore({ runs: "fixtures/runs" }), "agents").agents(), NeedsIndexedStore);
 * ```
 */
export class NeedsIndexedStore extends ProveviError {
  /** @param question The method or command that was asked. */
  constructor(question: string) {
    super(
      `${question} needs a sqlite store: questions across runs need its index, which the file store lacks; ` +
        `make one with prove export RUN --to sqlite:///evidence.db (or run with --store sqlite:///evidence.db), ` +
        `then pass --store sqlite:///evidence.db`,
    );
    this.name = "NeedsIndexedStore";
  }
}

/**
 * An event or a payload could not be written; the recorder counts it as lost.
 *
 * @example
 * ```ts
 * import { EvidenceError, ProveviError } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const error = new EvidenceError("cannot write payload 9f86d081…: disk full");
 * assert.ok(error instanceof ProveviError);
 * assert.equal(error.name, "EvidenceError");
 * ```
 */
export class EvidenceError extends ProveviError {
  /** @param message What could not be written. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "EvidenceError";
  }
}

/**
 * A telemetry policy that cannot be read, or a section that would widen one: every problem at once, each with its
 * `policy.*` code.
 *
 * @example
 * ```ts
 * import { TelemetryPolicy, TelemetryPolicyError } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * assert.throws(() => TelemetryPolicy.fromDict({ version: 2, extra: 1 }), (error) => {
 *   assert.ok(error instanceof TelemetryPolicyError);
 *   assert.deepEqual(error.problems.map((p) => p.code).sort(), ["policy.unknown_key", "policy.version"]);
 *   return true;
 * });
 * ```
 */
export class TelemetryPolicyError extends ProveviError {
  /** Every problem, each naming the key and the fix in its message. */
  readonly problems: readonly Problem[];
  /**
   * @param what What was read, such as `the telemetry policy policy.yaml`.
   * @param problems Every problem found.
   */
  constructor(what: string, problems: readonly Problem[], options?: ErrorOptions) {
    const n = problems.length;
    super(
      `${what} has ${n} problem${n === 1 ? "" : "s"}: ${problems.map((p) => p.message).join("; ")}`,
      options,
    );
    this.name = "TelemetryPolicyError";
    this.problems = problems;
  }
}

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
 * import { ProveviError } from "./errors.ts";
 * throw new ProveviError('cannot open store "x": unknown scheme; use file or sqlite:///path.db');
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

/** No run of that ID or path; a lookup error. */
export class RunNotFound extends ProveviError {
  /** @param message What was looked up, and where. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "RunNotFound";
  }
}

/** The events of a run cannot be read, or a line is not an event (exit code 2 in `prove show`). */
export class EvidenceReadError extends ProveviError {
  override readonly exitCode = 2;
  /** @param message The file and line that could not be read. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "EvidenceReadError";
  }
}

/** A question that only an indexed store (sqlite, postgres) can answer. */
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

/** An event or a payload could not be written; the recorder counts it as lost. */
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
 * import { TelemetryPolicy } from "../telemetry/policy.ts";
 * import { TelemetryPolicyError } from "./errors.ts";
 * try {
 *   TelemetryPolicy.fromDict({ version: 2, extra: 1 });
 * } catch (error) {
 *   if (error instanceof TelemetryPolicyError) error.problems.map((p) => p.code); // ["policy.unknown_key", "policy.version"]
 * }
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

/**
 * What one run may send to a span receiver in all: spans, bytes (of its bodies, unpacked), and the problems the
 * receiver writes for it. A program that never stops sending, or a run that never seals, holds no more than this:
 * past a limit the run takes no more spans (413, which an OTLP exporter does not send again), the receiver
 * writes one problem saying so, and a daemon releases what it held for the run. Problems are counted too, so
 * that a program sending bad bodies without end cannot fill the run's chain with them.
 * @module
 */

/** The limits of one run. */
export interface RunLimits {
  /** The spans a run may send in all; {@linkcode DEFAULT_RUN_LIMITS} by default. */
  maxSpans?: number;
  /** The bytes of bodies (unpacked) a run may send in all. */
  maxBytes?: number;
  /** The problems the receiver writes for a run, at most (one more says that it stopped). */
  maxProblems?: number;
}

/** The default limits: 200,000 spans and 256 MiB a run, 100 problems. */
export const DEFAULT_RUN_LIMITS: Readonly<Required<RunLimits>> = Object.freeze({
  maxSpans: 200_000,
  maxBytes: 256 * 1024 * 1024,
  maxProblems: 100,
});

/**
 * The budget of one run: what it has sent so far against its limits.
 *
 * @example
 * ```ts
 * import { RunBudget } from "./run_budget.ts";
 * const budget = new RunBudget({ maxSpans: 10 });
 * budget.take(8, 1000); // null
 * budget.take(8, 1000); // "the run passed its limit of 10 spans; no more of its spans are taken"
 * ```
 */
export class RunBudget {
  /** The spans taken. */
  spans = 0;
  /** The bytes taken. */
  bytes = 0;
  /** The problems written. */
  problems = 0;
  /** Why the run takes no more spans, once it passed a limit; else null. */
  over: string | null = null;
  readonly limits: Readonly<Required<RunLimits>>;
  readonly #onOver: (() => void) | null;

  /**
   * @param limits The limits; {@linkcode DEFAULT_RUN_LIMITS} for any not given.
   * @param onOver Called once, when the run passes a limit: a daemon releases what it held for the run.
   * @throws RangeError when a limit is not a whole number above zero.
   */
  constructor(limits: RunLimits = {}, onOver: (() => void) | null = null) {
    const all = { ...DEFAULT_RUN_LIMITS, ...definedOf(limits) };
    for (const [name, value] of Object.entries(all)) {
      if (!Number.isSafeInteger(value) || value < 1) {
        throw new RangeError(`the run limit ${name} is ${value}: give a whole number above zero`);
      }
    }
    this.limits = Object.freeze(all);
    this.#onOver = onOver;
  }

  /**
   * Counts a request's spans and bytes against the limits.
   *
   * @param spans The request's spans.
   * @param bytes The request's body, unpacked.
   * @returns Null when they are taken, else why not (and from then on, for every request).
   */
  take(spans: number, bytes: number): string | null {
    if (this.over !== null) return this.over;
    const { maxSpans, maxBytes } = this.limits;
    if (this.spans + spans > maxSpans) {
      this.over = `the run passed its limit of ${maxSpans} spans; no more of its spans are taken`;
    } else if (this.bytes + bytes > maxBytes) {
      this.over = `the run passed its limit of ${maxBytes} bytes of spans; no more of its spans are taken`;
    } else {
      this.spans += spans;
      this.bytes += bytes;
      return null;
    }
    this.#onOver?.();
    return this.over;
  }

  /**
   * Whether one more problem may be written, and counts it.
   *
   * @returns `"write"` while under the limit, `"last"` for the one that says no more will be, then `"skip"`.
   */
  problem(): "write" | "last" | "skip" {
    this.problems += 1;
    if (this.problems < this.limits.maxProblems) return "write";
    return this.problems === this.limits.maxProblems ? "last" : "skip";
  }
}

function definedOf(limits: RunLimits): RunLimits {
  const out: RunLimits = {};
  if (limits.maxSpans !== undefined) out.maxSpans = limits.maxSpans;
  if (limits.maxBytes !== undefined) out.maxBytes = limits.maxBytes;
  if (limits.maxProblems !== undefined) out.maxProblems = limits.maxProblems;
  return out;
}

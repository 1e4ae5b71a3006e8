/**
 * The run's limits as a part: a cancel (the caller's signal), `agent.limits.seconds` (a timer from the start of
 * the run) and `agent.limits.tokens` (the tokens of the model calls so far) each stop the run, which ends with
 * `run_failed`, error `CancelledError`, sealed.
 * @module
 */
import { CancelledError } from "../run/errors.ts";
import type { AgentSpec } from "../run/run_file.ts";
import type { PartRun, PartUsage, RunPart } from "../run/run_part.ts";

/**
 * The limits part of a run.
 *
 * @example
 * ```ts
 * import { LimitsPart } from "./limits_part.ts";
 * const part = new LimitsPart({ seconds: 60, tokens: 10_000 }, AbortSignal.timeout(120_000));
 * ```
 */
export class LimitsPart implements RunPart {
  readonly name = "limits";
  readonly #limits: NonNullable<AgentSpec["limits"]>;
  readonly #signal: AbortSignal | undefined;
  #run: PartRun | null = null;
  #timer: ReturnType<typeof setTimeout> | null = null;
  #tokens = 0;
  readonly #onAbort = () => this.#run?.abort(new CancelledError("the run was cancelled"));

  /** @param limits `agent.limits`. @param signal The caller's cancel. */
  constructor(limits: AgentSpec["limits"], signal?: AbortSignal) {
    this.#limits = limits ?? {};
    this.#signal = signal;
  }

  /** Listens for the cancel, and starts the clock of `limits.seconds`. */
  beforeStart(run: PartRun): void {
    this.#run = run;
    this.#signal?.addEventListener("abort", this.#onAbort, { once: true });
    if (this.#signal?.aborted) this.#onAbort();
    const seconds = this.#limits.seconds;
    if (seconds !== undefined) {
      this.#timer = setTimeout(
        () => run.abort(new CancelledError(`the run passed its limit of ${seconds} seconds`)),
        seconds * 1000,
      );
    }
  }

  /** Counts a model call's tokens against `limits.tokens`. */
  onUsage(usage: PartUsage): void {
    this.#tokens += usage.input + usage.output;
    const limit = this.#limits.tokens;
    if (limit !== undefined && this.#tokens > limit) {
      this.#run?.abort(new CancelledError(`the run passed its limit of ${limit} tokens (${this.#tokens})`));
    }
  }

  /** Stops the clock and the listener once the run has written its last event. */
  beforeSeal(): Promise<void> {
    return this.close();
  }

  /** As `beforeSeal`, for a run that ended before it. */
  close(): Promise<void> {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#signal?.removeEventListener("abort", this.#onAbort);
    return Promise.resolve();
  }
}

/**
 * The copy in MLflow as a part of the run: after `run_created` it writes a `telemetry_problem` when the copy's
 * variables would refuse it, and after the seal it starts the copy, when the policy approves an MLflow place.
 * @module
 */
import type { EvidenceStore, TelemetryPolicy } from "../../provevi/mod.ts";
import { problemData } from "../../provevi/telemetry/telemetry_events.ts";
import type { PartRun, RunPart, SealedRun } from "../run/run_part.ts";
import {
  type CopyEnviron,
  type MlflowCopyOutcome,
  prepareMlflowCopy,
  startMlflowCopy,
} from "./mlflow_copy.ts";

/**
 * The MLflow part of a run.
 *
 * @example
 * ```ts
 * import { FileStore, TelemetryPolicy } from "../../provevi/mod.ts";
 * import { MlflowCopyPart } from "./mlflow_copy_part.ts";
 * const part = new MlflowCopyPart(TelemetryPolicy.denyAll(), new FileStore({ runs: "/tmp/runs" }), {});
 * part.copy; // null until the seal, and after it when no place is approved
 * ```
 */
export class MlflowCopyPart implements RunPart {
  readonly name = "copy in MLflow";
  readonly #policy: TelemetryPolicy;
  readonly #store: EvidenceStore;
  readonly #environ: CopyEnviron | null;
  readonly #problem: string | null;
  /** The copy started at the seal: it never rejects. Null before the seal, or when no place is approved. */
  copy: Promise<MlflowCopyOutcome> | null = null;

  /**
   * @param policy The run's policy.
   * @param store The store the run is written to.
   * @param environ The copy's variables; the process's by default.
   */
  constructor(policy: TelemetryPolicy, store: EvidenceStore, environ?: CopyEnviron) {
    this.#policy = policy;
    this.#store = store;
    const prepared = prepareMlflowCopy(policy, store, environ);
    this.#environ = prepared.environ;
    this.#problem = prepared.problem;
  }

  /** Writes the problem of a copy that its variables would refuse. */
  async afterCreated(run: PartRun): Promise<void> {
    if (this.#problem === null) return;
    await run.ctx.recorder.record({
      type: "telemetry_problem",
      component: "RunContext",
      data: problemData(this.#problem),
    });
  }

  /** Starts the copy beside the run's result. */
  afterSeal(sealed: SealedRun): Promise<void> {
    if (this.#environ) {
      this.copy = startMlflowCopy(sealed.runId, this.#store, {
        policy: this.#policy,
        environ: this.#environ,
      });
    }
    return Promise.resolve();
  }
}

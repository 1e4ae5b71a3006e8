/**
 * The copy in MLflow at the seal: when the policy approves the MLflow place of the run (the one that
 * `MLFLOW_TRACKING_URI` names, or the sqlite store's own file), provrun copies the sealed run there with
 * provevi's `copyRun`. The copy runs beside the run's result, never in its way: the result is returned at once,
 * a copy that fails or passes its time limit gives a problem (never a failed run), and `prove mlflow` makes the
 * copy again. A copy the policy approves but the variables would refuse is known at the start, so the run
 * records it as `telemetry_problem` before its seal.
 * @module
 */
import type { EvidenceStore, TelemetryPolicy } from "../../provevi/mod.ts";
import { openStore } from "../../provevi/runs/mod.ts";
import { isSqliteUri } from "../../provevi/store/mod.ts";
import type { CopyResult } from "../../provevi/mlflow/mod.ts";
// The variables and the redirect check, without the MLflow client: every run reads them at its start.
import { copyEnviron } from "../../provevi/mlflow/copy_environ.ts";
import { redirectingVariables } from "../../provevi/mlflow/refuse_redirects.ts";

/** The variables the copy reads: `MLFLOW_TRACKING_URI`, the refused ones, `PATH`. */
export type CopyEnviron = Readonly<Record<string, string | undefined>>;

/** How the copy at the seal ended. */
export type MlflowCopyOutcome =
  | { status: "copied"; result: CopyResult }
  | { status: "failed"; problem: string };

/** The time a copy at the seal may take before provrun stops it, in milliseconds. */
export const MLFLOW_COPY_TIMEOUT = 120_000;

/**
 * True when the policy approves an MLflow place for this run: the destination that `MLFLOW_TRACKING_URI`
 * matches, or with it unset, the store's own file of a sqlite store.
 */
function approvedPlace(policy: TelemetryPolicy, store: EvidenceStore, environ: CopyEnviron): boolean {
  const url = environ.MLFLOW_TRACKING_URI?.trim() || null;
  if (url === null && !isSqliteUri(store.uri)) return false;
  return policy.matchDestination("mlflow", url) !== null;
}

/**
 * What the run needs for its copy at the seal, found as it starts: the variables the copy reads, and the
 * problem of an approved copy that they would refuse (or that cannot read them), for `telemetry_problem`.
 *
 * @param policy The run's policy, narrowed.
 * @param store The run's store.
 * @param given Variables given to the run (`RunOptions.environ`), used instead of the process's.
 * @returns `environ` (null when the copy cannot read its variables) and `problem` (null when there is none).
 * @example
 * ```ts
 * import { FileStore, TelemetryPolicy } from "../../provevi/mod.ts";
 * import { prepareMlflowCopy } from "./mlflow_copy.ts";
 * prepareMlflowCopy(TelemetryPolicy.denyAll(), new FileStore({ runs: "/tmp/runs" }), {}); // { environ: {}, problem: null }
 * ```
 */
export function prepareMlflowCopy(
  policy: TelemetryPolicy,
  store: EvidenceStore,
  given?: CopyEnviron,
): { environ: CopyEnviron | null; problem: string | null } {
  let environ: CopyEnviron;
  try {
    environ = given ?? copyEnviron();
  } catch (error) {
    const approved = policy.destinations.some((d) => d.kind === "mlflow");
    return {
      environ: null,
      problem: approved ? `the copy in MLflow at the seal cannot run: ${(error as Error).message}` : null,
    };
  }
  if (!approvedPlace(policy, store, environ)) return { environ, problem: null };
  const url = environ.MLFLOW_TRACKING_URI?.trim() || null;
  const set = redirectingVariables(url, environ);
  if (set.length === 0) return { environ, problem: null };
  return {
    environ,
    problem: `the copy in MLflow at the seal will be refused while ${set.join(", ")} ${
      set.length === 1 ? "is" : "are"
    } set; unset ${set.length === 1 ? "it" : "them"} and run prove mlflow`,
  };
}

/**
 * Starts the copy of a sealed run into MLflow, if the policy approves a place for it. The copy opens the store
 * again by its URI (the run's own store may be closed before the copy ends), and stops after `timeout`.
 *
 * @param runId The sealed run.
 * @param store The run's store.
 * @param options The policy, the variables, the time limit.
 * @returns The copy's outcome, which never rejects; null when no MLflow place is approved.
 * @example
 * ```ts
 * import { startMlflowCopy } from "./mlflow_copy.ts";
 * // const copy = startMlflowCopy(runId, store, { policy, environ });
 * // if (copy) console.log(await copy);
 * ```
 */
export function startMlflowCopy(
  runId: string,
  store: EvidenceStore,
  options: { policy: TelemetryPolicy; environ: CopyEnviron; timeout?: number },
): Promise<MlflowCopyOutcome> | null {
  if (!approvedPlace(options.policy, store, options.environ)) return null;
  const timeout = options.timeout ?? MLFLOW_COPY_TIMEOUT;
  const controller = new AbortController();
  const copy = (async (): Promise<MlflowCopyOutcome> => {
    // The MLflow client and its OTLP encoder are imported by the runs that copy.
    const { copyRun } = await import("../../provevi/mlflow/mod.ts");
    await using copyStore = await openStore(store.uri, { runs: store.runsRoot, readOnly: true });
    const result = await copyRun(copyStore, runId, options.policy, {
      environ: options.environ,
      signal: controller.signal,
    });
    return { status: "copied", result };
  })();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<MlflowCopyOutcome>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new Error(`the copy passed its limit of ${timeout / 1000} s`));
      resolve({
        status: "failed",
        problem: `the copy in MLflow passed its limit of ${
          timeout / 1000
        } s and was stopped; run prove mlflow ${runId} to copy again`,
      });
    }, timeout);
  });
  const ended = copy.catch((error): MlflowCopyOutcome => ({
    status: "failed",
    problem: `the copy in MLflow failed: ${
      (error instanceof Error ? error.message : String(error)).split("\n")[0]
    }; run prove mlflow ${runId} to copy again`,
  }));
  return Promise.race([ended, limit]).finally(async () => {
    clearTimeout(timer);
    // A stopped copy ends soon after its signal; wait for it, so that nothing of it outlives the outcome.
    await ended;
  });
}

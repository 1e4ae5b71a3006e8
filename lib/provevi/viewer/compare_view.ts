/**
 * Two runs side by side, as MLflow's compare does: for each, its settings, inputs and answers, at the
 * viewer's level for that run, with its verdict.
 * @module
 */
import type { EvidenceStore } from "../store/store.ts";
import { runView, type RunViewOptions } from "./run_view.ts";
import { type CompareSide, sideOf } from "./compare_side.ts";

export type { CompareSide } from "./compare_side.ts";

/**
 * The two runs' sides.
 *
 * @param store The store.
 * @param runIds The two runs.
 * @param options As for {@linkcode runView}.
 * @returns One side per run, in the order given.
 * @throws RunNotFound when the store has no such run.
 * @example
 * ```ts
 * import { compareRuns } from "./compare_view.ts";
 * // const [a, b] = await compareRuns(store, [idA, idB], { policy });
 * ```
 */
export async function compareRuns(
  store: EvidenceStore,
  runIds: readonly string[],
  options: Pick<RunViewOptions, "policy" | "catalog">,
): Promise<CompareSide[]> {
  const sides: CompareSide[] = [];
  for (const id of runIds) {
    // Never the unverified content, and only the root span, for the run's length.
    const view = await runView(store, await store.readRun(id), {
      policy: options.policy,
      ...(options.catalog ? { catalog: options.catalog } : {}),
      spansLimit: 1,
    });
    sides.push(sideOf(view));
  }
  return sides;
}

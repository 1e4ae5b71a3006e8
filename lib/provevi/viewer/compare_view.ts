/**
 * Two runs side by side, as MLflow's compare does: for each, its settings, inputs and answers, at the
 * viewer's level for that run, with its verdict.
 * @module
 */
import type { EvidenceStore } from "../store/store.ts";
import { type RunView, runView, type RunViewOptions } from "./run_view.ts";

/** One side of a comparison. */
export type CompareSide =
  & Pick<RunView, "run_id" | "status" | "level" | "note" | "verdict" | "settings" | "inputs" | "outputs">
  & {
    /** Each model call's answer, in order, on the first page of the run's events, each cut as the page cuts it. */
    answers: { seq: number; text: string }[];
    /** The token counts of the run's model calls, summed, when the level shows them. */
    tokens: { input: number; output: number } | null;
    /** The run's length in microseconds. */
    duration_us: number;
  };

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
    sides.push({
      run_id: view.run_id,
      status: view.status,
      level: view.level,
      note: view.note,
      verdict: view.verdict,
      settings: view.settings,
      inputs: view.inputs,
      outputs: view.outputs,
      answers: view.events.flatMap((e) => (e.answer !== undefined ? [{ seq: e.seq, text: e.answer }] : [])),
      tokens: view.summary.tokens,
      duration_us: view.spans[0]?.end_us ?? 0,
    });
  }
  return sides;
}

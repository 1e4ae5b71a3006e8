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
 * import { compareRuns, FileStore, TelemetryPolicy } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const policy = await TelemetryPolicy.load("fixtures/policies/live-viewer.yaml");
 * await using store = new FileStore({ runs: "fixtures/runs" });
 * const sides = await compareRuns(store, ["run-20261129T120000Z-0badc0de", "run-20261129T120000Z-0badc0de"], { policy });
 * assert.equal(sides.length, 2);
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

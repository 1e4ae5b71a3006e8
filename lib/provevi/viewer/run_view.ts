/**
 * The run page's data, bounded whatever the run's size: the verdict of `verifyRun` with each problem, a summary
 * of all its events (counts by type, times, tokens), one page of its events (each event's structure always; its
 * content at the viewer's level, cut to the page), one page of its trace as a timeline of nested spans, the
 * inputs with their pins and hashes, the outputs, the grants and refusals, the assessments and each model
 * call's answer. A run that does not verify shows only its structure and its problems, unless the viewer asks
 * for the unverified content, which is then marked as such. What a page cuts is whole at its own address,
 * fetched on demand (`run_whole.ts`).
 * @module
 */
import type { RunRecord } from "../evidence/record.ts";
import type { EvidenceStore } from "../store/store.ts";
import { runModel } from "./run_model.ts";
import { pageOf, type RunView, type RunViewOptions } from "./run_page.ts";

export type { RunView, RunViewOptions, RunViewSummary } from "./run_page.ts";
export type { ViewCut, ViewEvent } from "./view_event.ts";
export type { ViewSpan } from "./run_spans.ts";
export type { ViewVerdict } from "./run_model.ts";

/**
 * The run page's data for one run: one page of it, bounded whatever the run's size.
 *
 * @param store The store.
 * @param record The run, as `findRun` or the store gives it.
 * @param options The policy, the catalog, whether to show unverified content, and which page.
 * @returns The view.
 * @example
 * ```ts
 * import { FileStore, runView, TelemetryPolicy } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const policy = await TelemetryPolicy.load("fixtures/policies/live-viewer.yaml");
 * await using store = new FileStore({ runs: "fixtures/runs" });
 * const view = await runView(store, await store.readRun("run-20261129T120000Z-0badc0de"), { policy });
 * assert.equal(view.verdict.ok, true);
 * ```
 */
export async function runView(
  store: EvidenceStore,
  record: RunRecord,
  options: RunViewOptions,
): Promise<RunView> {
  return await pageOf(store, await runModel(store, record, options), options);
}

/**
 * Two runs side by side, as MLflow's compare does: for each, its settings, inputs and answers, at the
 * viewer's level for that run, with its verdict; and the two aligned step by step, as `prove diff` aligns them.
 * @module
 */
import type { EvidenceStore } from "../store/store.ts";
import type { EvidenceEvent } from "../evidence/event.ts";
import { diffRuns } from "../diff/diff_runs.ts";
import type { DiffWhat, Divergence } from "../diff/divergence.ts";
import type { Level } from "../telemetry/attributes.ts";
import { type RunView, runView, type RunViewOptions } from "./run_view.ts";
import { viewerLevel } from "./viewer_level.ts";

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

/** Two runs aligned step by step, at the lower of their levels. */
export interface CompareDiff {
  /** The lower of the two runs' levels: below `bodies`, each difference says what differs, not the content. */
  level: Level | null;
  identical: boolean;
  /** The first divergence, or null. */
  first: Divergence | null;
  /** Every divergence, in order, up to 200. */
  differences: Divergence[];
  /** How many more there are. */
  more: number;
  /** How many of each kind. */
  counts: Partial<Record<DiffWhat, number>>;
}

const ORDER: (Level | null)[] = [null, "names", "usage", "bodies"];

/**
 * The step-aligned difference of two runs, as `prove diff` finds it, cut to the viewer's level: a difference's
 * detail and path quote the runs' content (a prompt, an answer, arguments), so they are shown only when both runs
 * are shown at `bodies`.
 *
 * @param store The store.
 * @param runIds The two runs.
 * @param options The viewer's policy.
 * @returns The difference.
 * @throws RunNotFound when the store has no such run; EvidenceReadError for events that cannot be read.
 * @example
 * ```ts
 * import { compareDiff } from "./compare_view.ts";
 * // const diff = await compareDiff(store, [idA, idB], { policy });
 * ```
 */
export async function compareDiff(
  store: EvidenceStore,
  runIds: readonly string[],
  options: Pick<RunViewOptions, "policy">,
): Promise<CompareDiff> {
  const [a, b] = [await store.readRun(runIds[0]!), await store.readRun(runIds[1]!)];
  // Each run's level as its own run file narrows it: from its first event, run_created.
  const firstOf = async (r: typeof a) => {
    const text = await r.eventsText().catch(() => null);
    try {
      return text ? JSON.parse(text.slice(0, text.indexOf("\n"))) as EvidenceEvent : undefined;
    } catch {
      return undefined;
    }
  };
  const levels = await Promise.all(
    [a, b].map(async (r) => (await viewerLevel(options.policy, r, await firstOf(r))).level),
  );
  const level = ORDER[Math.min(...levels.map((l) => ORDER.indexOf(l)))] ?? null;
  const bodies = level === "bodies";
  const diff = await diffRuns(a, b, bodies ? {} : { refine: 0 });
  const cut = (d: Divergence): Divergence =>
    bodies ? d : { ...d, path: null, detail: `${d.what.replaceAll("_", " ")} differs` };
  return {
    level,
    identical: diff.identical,
    first: diff.first ? cut(diff.first) : null,
    differences: diff.differences.map(cut),
    more: diff.more,
    counts: diff.counts,
  };
}

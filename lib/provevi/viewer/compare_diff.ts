/**
 * The compare page's `prove diff`: two runs aligned step by step as `diffRuns` aligns them (the setup, each model
 * step with its tool calls, the end), with what differs at each place, cut to the viewer's level.
 * @module
 */
import { diffRuns } from "../diff/diff_runs.ts";
import type { DiffWhat, Divergence } from "../diff/divergence.ts";
import type { EvidenceStore } from "../store/store.ts";
import type { Level } from "../telemetry/attributes.ts";

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
 * detail and path quote the runs' content (a prompt, an answer, arguments), so they are given only when both runs
 * are shown at `bodies`; below it, each difference names what differs and where.
 *
 * @param store The store.
 * @param runIds The two runs.
 * @param levels Each run's level in the viewer.
 * @returns The difference.
 * @throws RunNotFound when the store has no such run; EvidenceReadError for events that cannot be read.
 * @example
 * ```ts
 * import { compareDiff } from "./compare_diff.ts";
 * // const diff = await compareDiff(store, [idA, idB], ["bodies", "names"]);
 * ```
 */
export async function compareDiff(
  store: EvidenceStore,
  runIds: readonly string[],
  levels: readonly (Level | null)[],
): Promise<CompareDiff> {
  const [a, b] = [await store.readRun(runIds[0]!), await store.readRun(runIds[1]!)];
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

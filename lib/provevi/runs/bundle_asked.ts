/**
 * Whether a run's own record asked for a committed bundle: then a run folder without `bundle.json` does not
 * verify, since deleting that file would otherwise let a forged run pass as one that was never committed. The
 * record says it twice, in `run_created`'s `data.bundle` and in the run file stored as its payload
 * (`run.bundle`); the two must agree, so that a forger who rewrites one is caught by the other.
 * @module
 */
import { parse } from "yaml";
import type { EvidenceEvent } from "../evidence/event.ts";
import { atLine, type Problem, problem } from "../evidence/problem.ts";
import type { RunRecord } from "../evidence/record.ts";

/** What {@linkcode bundleAsked} found. */
export interface BundleAsked {
  /** True when the record says the run file asked for a bundle (either place, when they disagree). */
  asked: boolean;
  /** `bundle.flag_disagrees` when `data.bundle` and the run file's `run.bundle` differ. */
  problems: Problem[];
}

/**
 * Whether `run_created` says that the run file asked for a bundle: `data.bundle` is true, or the run file
 * stored as its payload has `run.bundle: true` (the only place in runs written before `data.bundle` existed).
 * When both can be read, they must agree.
 *
 * @param record The run.
 * @param events Its events, as the evidence check read them.
 * @returns Whether a bundle was asked for (false when the record cannot say), and a disagreement as a problem.
 * @example
 * ```ts
 * import { findRun } from "./find_run.ts";
 * import { bundleAsked } from "./bundle_asked.ts";
 * const record = await findRun("fixtures/runs/run-20261129T120000Z-0badc0de");
 * (await bundleAsked(record, [])).asked; // false
 * ```
 */
export async function bundleAsked(record: RunRecord, events: readonly EvidenceEvent[]): Promise<BundleAsked> {
  const created = events[0]?.type === "run_created" ? events[0] : undefined;
  if (!created) return { asked: false, problems: [] };
  const flag = typeof created.data.bundle === "boolean" ? created.data.bundle : null;
  const run = await runFileSection(record, created);
  const file = run === null ? null : run.bundle === true;
  const asked = flag === true || file === true;
  if (flag === null || file === null || flag === file) return { asked, problems: [] };
  return {
    asked,
    problems: [problem(
      "bundle.flag_disagrees",
      `events.jsonl line 1 (seq ${created.seq}, run_created) has data.bundle ${flag}, but the run file stored as its payload has run.bundle ${file}: the two must agree`,
      atLine(1, created.seq),
    )],
  };
}

/**
 * The `run` mapping of the run file stored as `run_created`'s payload, or null when there is none or it is not a
 * run file that can be read (a payload that is missing or changed is the evidence check's problem).
 *
 * @param record The run.
 * @param created Its `run_created` event.
 * @returns The mapping, as parsed.
 */
export async function runFileSection(
  record: RunRecord,
  created: EvidenceEvent,
): Promise<Record<string, unknown> | null> {
  if (created.payload === null) return null;
  try {
    const file = parse(new TextDecoder().decode(await record.payload(created.payload)));
    if (typeof file !== "object" || file === null || typeof file.run !== "object" || file.run === null) {
      return null;
    }
    return file.run as Record<string, unknown>;
  } catch {
    return null;
  }
}

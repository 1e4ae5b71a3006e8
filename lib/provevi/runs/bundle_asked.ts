/**
 * Whether a run's own record asked for a committed bundle: then a run folder without `bundle.json` does not
 * verify, since deleting that file would otherwise let a forged run pass as one that was never committed.
 * @module
 */
import { parse } from "yaml";
import type { EvidenceEvent } from "../evidence/event.ts";
import type { RunRecord } from "../evidence/record.ts";

/**
 * True when the run's `run_created` event says that the run file asked for a bundle: `data.bundle` is true, or,
 * for a run written before `data.bundle` existed, the run file stored as its payload has `run.bundle: true`.
 *
 * @param record The run.
 * @param events Its events, as the evidence check read them.
 * @returns Whether a bundle was asked for; false when the record cannot say.
 * @example
 * ```ts
 * import { findRun } from "./find_run.ts";
 * import { bundleAsked } from "./bundle_asked.ts";
 * const record = await findRun("fixtures/runs/run-20261129T120000Z-0badc0de");
 * await bundleAsked(record, []); // false
 * ```
 */
export async function bundleAsked(record: RunRecord, events: readonly EvidenceEvent[]): Promise<boolean> {
  const created = events[0]?.type === "run_created" ? events[0] : undefined;
  if (!created) return false;
  if (typeof created.data.bundle === "boolean") return created.data.bundle;
  if (created.payload === null) return false;
  try {
    const file = parse(new TextDecoder().decode(await record.payload(created.payload)));
    return file?.run?.bundle === true;
  } catch {
    return false; // a payload that is missing or changed is the evidence check's problem
  }
}

/**
 * The work of events_size_attacks_test.ts that is measured in a process of its own (`measuredInChild`):
 * `prove verify`'s check of a run folder.
 * @module
 */
import { findRun, verifyRun } from "../../lib/provevi/runs/mod.ts";

/** Measured: the check of the run in `folder`, its verdict and its problems. */
export async function verify(folder: string) {
  const check = await verifyRun(await findRun(folder));
  return { ok: check.ok, problems: check.problems.map(({ code, message }) => ({ code, message })) };
}

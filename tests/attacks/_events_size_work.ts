/**
 * The work of events_size_attacks_test.ts that is measured in a process of its own (`measuredInChild`):
 * `prove verify`'s check of a run folder, `prove sign`'s signing of one, and `prove list`'s page.
 * @module
 */
import { findRun, listRuns, verifyRun } from "../../lib/provevi/runs/mod.ts";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { attestRun } from "../../lib/provevi/evidence/attestation.ts";
import { readSigningKey } from "../../lib/provevi/evidence/signing_key.ts";

/** Measured: the check of the run in `folder`, its verdict and its problems. */
export async function verify(folder: string) {
  const check = await verifyRun(await findRun(folder));
  return { ok: check.ok, problems: check.problems.map(({ code, message }) => ({ code, message })) };
}

/** Measured: `prove sign`'s signing of the run in `folder` with the key at `key`: its error, or null. */
export async function sign(folder: string, key: string) {
  try {
    await attestRun(await findRun(folder), await readSigningKey(key));
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

/** Measured: `prove list`'s page of the runs under `runs` (a file store): each run's ID and tokens. */
export async function list(runs: string) {
  const page = await listRuns(new FileStore({ runs }));
  return page.runs.map((r) => ({ run_id: r.run_id, tokens: r.tokens }));
}

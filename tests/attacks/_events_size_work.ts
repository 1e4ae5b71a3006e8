/**
 * The work of events_size_attacks_test.ts that is measured in a process of its own (`measuredInChild`):
 * `prove verify`'s check of a run folder, and `prove sign`'s signing of one.
 * @module
 */
import { findRun, verifyRun } from "../../lib/provevi/runs/mod.ts";
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

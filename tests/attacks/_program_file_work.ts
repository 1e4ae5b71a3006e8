/**
 * The work of program_file_attacks_test.ts that is measured in a process of its own (`measuredInChild`): provr's
 * run of a stand-in for Codex (`standInRun`).
 * @module
 */
import { standInRun } from "./_setup.ts";

/** Measured: the run of the stand-in `program` into `runs`, with a time limit of 120 s: how it ended, and where. */
export async function run(program: string, runs: string) {
  const outcome = await standInRun(program, { runs, seconds: 120 });
  return { status: outcome.status, message: outcome.error?.message ?? "", folder: outcome.folder };
}

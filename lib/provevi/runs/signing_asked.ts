/**
 * Whether a run's own record asked for a signed seal, in its second place: the run file stored as `run_created`'s
 * payload. A run file with `run.sign_key` makes a signed run (provr reads the key before the run starts), so
 * `run_created`'s `data.signing_key` must then be a key ID: a forger who writes null there and removes the
 * attestation is caught by the run file, as for the bundle's two flags.
 * @module
 */
import type { EvidenceEvent } from "../evidence/event.ts";
import { atLine, type Problem, problem } from "../evidence/problem.ts";
import type { RunRecord } from "../evidence/record.ts";
import { runFileSection } from "./bundle_asked.ts";

/**
 * The problem of a run whose run file names a signing key while `run_created` records none.
 *
 * @param record The run.
 * @param events Its events, as the evidence check read them.
 * @returns `attestation.flag_disagrees`, or nothing.
 * @example
 * ```ts
 * import { findRun } from "./find_run.ts";
 * import { signingAskedProblems } from "./signing_asked.ts";
 * const record = await findRun("fixtures/runs/run-20261129T120000Z-0badc0de");
 * await signingAskedProblems(record, []); // []
 * ```
 */
export async function signingAskedProblems(
  record: RunRecord,
  events: readonly EvidenceEvent[],
): Promise<Problem[]> {
  const created = events[0]?.type === "run_created" ? events[0] : undefined;
  if (!created || typeof created.data.signing_key === "string") return [];
  const run = await runFileSection(record, created);
  if (run === null || typeof run.sign_key !== "string" || run.sign_key === "") return [];
  return [problem(
    "attestation.flag_disagrees",
    `events.jsonl line 1 (seq ${created.seq}, run_created) records no signing key, but the run file stored as its payload has run.sign_key: a run file that names a key makes a signed run`,
    atLine(1, created.seq),
  )];
}

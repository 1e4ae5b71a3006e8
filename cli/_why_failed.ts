/**
 * The line `provr run` prints for a failed run.
 * @module
 */
import type { RunOutcome } from "../lib/provrun/runner/mod.ts";

/**
 * Why a run failed, in one line: its error, or, for a run that ended without one (lenient mode lost its ending
 * event, so its evidence ends incomplete), what its manifest says: how many events were lost, and the first
 * loss in its own words.
 */
export function whyFailed(outcome: Pick<RunOutcome, "runId" | "error" | "manifest">): string {
  if (outcome.error) return `${outcome.error.name || "Error"}: ${outcome.error.message || "(no message)"}`;
  const manifest = outcome.manifest;
  if (manifest === null) return "it was not sealed, and no error was recorded";
  const ended = manifest.status === "incomplete"
    ? "its evidence ends without the run's ending event (status incomplete)"
    : `its manifest says ${manifest.status}`;
  const lost = manifest.lost ?? [];
  if (lost.length === 0) return ended;
  const first = lost[0]!;
  const events = lost.length === 1 ? "1 event" : `${lost.length} events`;
  return `${ended}: lenient mode lost ${events}, the first ${first.type}: ${first.error} (prove show ${outcome.runId} lists what was recorded)`;
}

/**
 * Opens a file of a run folder to write or lock many times with one of the writers that another party's plants
 * meet (the writer's lock, the live feed, the assessments), and prints `done` with how many opens wrote and how
 * many were refused: a writer that waited on a pipe swapped in never prints. The writer of
 * `write_swap_attacks_test.ts`, run under a command's permission set (where Deno drops `O_NOFOLLOW` and refuses
 * `/proc/self/fd/`). With one open, it prints the refusal's message instead.
 * Arguments: the writer (`lock-hold`, `lock-state`, `live-feed`, `assessment`), the run folder, the number of opens.
 * @module
 */
import { holdWriterLock, runWriterState } from "../../lib/provevi/evidence/writer_process.ts";
import { appendAssessmentLine } from "../../lib/provevi/evidence/assessments_file.ts";
import { LiveFeed } from "../../lib/provrun/telemetry/live_feed.ts";

const [writer, folder, times] = Deno.args as [string, string, string];
const write: Record<string, () => Promise<unknown>> = {
  "lock-hold": () => {
    const file = holdWriterLock(folder);
    if (file === null) throw new Error("no lock taken");
    file.close();
    return Promise.resolve();
  },
  "lock-state": () => runWriterState(folder, null),
  "live-feed": async () => await (await LiveFeed.open("run-x", folder, "names")).close(),
  assessment: () =>
    appendAssessmentLine(folder, "0".repeat(64), {
      run_id: "run-x",
      seq: null,
      span_id: null,
      name: "correct",
      value: true,
      rationale: null,
      source: "attack",
      created_at: "2026-12-02T00:00:00Z",
    }),
};
let [wrote, refused, last] = [0, 0, ""];
for (let i = 0; i < Number(times); i++) {
  try {
    await write[writer]!();
    wrote += 1;
  } catch (error) {
    refused += 1;
    last = (error as Error).message;
  }
}
console.log(Number(times) === 1 ? (refused ? `refused: ${last}` : "wrote") : `done ${wrote} ${refused}`);

/**
 * `prove show`: the events of a run, one line each, and its assessments.
 * @module
 */
import {
  findRun,
  NeedsIndexedStore,
  questionsOf,
  readEventsText,
  type RunRecord,
  runWriterState,
} from "../../lib/provevi/mod.ts";
import { printAssessments } from "../_listing.ts";
import { showRun } from "../_commands.ts";
import type { ProveContext } from "./_context.ts";

/** Adds the command to `prove`. */
export function addShow({ program, io, withStore }: ProveContext): void {
  program.command("show")
    .description("Print the events of a run, one line each.")
    .argument("<run>", "a run ID under the runs root, or a run folder's path")
    .option("--wide", "on a terminal, print each event's whole line instead of cutting it to the width")
    .option("--json", "print JSON")
    .action((run: string, opts: { json?: boolean; wide?: boolean }) =>
      withStore(async (store) => {
        const record = await findRun(run, { store });
        await showRun(record, io, opts);
        const open = await openRunState(record);
        if (open) io.err(open);
        if (!opts.json) {
          // The file store keeps no assessments; the sqlite store lists them after the events.
          const list = await questionsOf(store, "assessments").assessments(record.runId).catch((error) => {
            if (error instanceof NeedsIndexedStore) return [];
            throw error;
          });
          if (list.length) {
            io.out("");
            io.out("assessments:");
            printAssessments(list, io);
          }
        }
      })
    );
}

/**
 * What `prove show` says of a run that has no seal and no ending event: `cut at seq N` when its writer is gone,
 * `running` while it is alive or cannot be seen; null for any other run.
 */
export async function openRunState(record: RunRecord): Promise<string | null> {
  if ((await record.manifestText().catch(() => null)) !== null) return null;
  const text = await record.eventsText().catch(() => null);
  if (text === null) return null;
  const events = readEventsText(text).events;
  const last = events.at(-1);
  if (last === undefined || last.type === "run_completed" || last.type === "run_failed") return null;
  const state = await runWriterState(record.folder, events[0]?.data?.writer);
  return state === "gone"
    ? `${record.runId}: cut at seq ${last.seq}: its writer is gone, and the record has no seal and no ending event`
    : `${record.runId}: running: its writer is still at work (last event: seq ${last.seq})`;
}

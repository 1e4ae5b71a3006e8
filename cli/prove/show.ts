/**
 * `prove show`: the events of a run, one line each, and its assessments.
 * @module
 */
import { findRun, NeedsIndexedStore, questionsOf } from "../../lib/provevi/mod.ts";
import { printAssessments } from "../_listing.ts";
import { showRun } from "../_commands.ts";
import type { ProveContext } from "./_context.ts";

/** Adds the command to `prove`. */
export function addShow({ program, io, withStore }: ProveContext): void {
  program.command("show")
    .description("Print the events of a run, one line each.")
    .argument("<run>", "a run ID under the runs root, or a run folder's path")
    .option("--json", "print JSON")
    .action((run: string, opts: { json?: boolean }) =>
      withStore(async (store) => {
        const record = await findRun(run, { store });
        await showRun(record, io, opts);
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

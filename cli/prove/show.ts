/**
 * `prove show`: the events of a run, one line each with its span, and its assessments.
 * @module
 */
import type { EvidenceStore, Problem, RunCheck, RunRecord } from "../../lib/provevi/mod.ts";
import { NeedsIndexedStore } from "../../lib/provevi/evidence/mod.ts";
import { verifyRun } from "../../lib/provevi/runs/mod.ts";
import { FileStore, questionsOf } from "../../lib/provevi/store/mod.ts";
import { assessmentsInFolder } from "../../lib/provevi/store/mod.ts";
import { findStoredRun } from "../../lib/provevi/runs/mod.ts";
import { readEventsText, runWriterState } from "../../lib/provevi/evidence/mod.ts";
import type { Catalog } from "../../lib/provcat/mod.ts";
import { type CatalogChoice, openCatalog } from "../_catalog.ts";
import { printAssessments } from "../_listing.ts";
import { readRunEvents, showRun } from "../_commands.ts";
import type { ProveContext } from "./_context.ts";

/** Adds the command to `prove`. */
export function addShow({ program, io, withStore }: ProveContext): void {
  program.command("show")
    .description(
      "Print the events of a run, one line each, with the span of each: its name under its parent, and how long it took.",
    )
    .argument("<run>", "a run ID under the runs root, or a run folder's path")
    .option("--wide", "on a terminal, print each event's whole line instead of cutting it to the width")
    .option("--json", "print JSON, with the run's verdict")
    .option("--config <file>", "the catalog config that reads the run's committed bundle, as for verify")
    .option("--tenant <name>", "use this tenant's part of the catalog config")
    .action((run: string, opts: { json?: boolean; wide?: boolean } & CatalogChoice) =>
      withStore(async (store) => {
        // An indexed store's rows hold every line: the events are read there, so a moved folder is still shown
        // (the verdict, read from the folder, says what is missing).
        const { record, shown } = await findStoredRun(run, { store });
        const events = await readRunEvents(shown); // a line that is not an event: exit 2, before any check
        const open = await openRunState(record);
        // A run that does not verify is shown, but told first, so its events are not read as trustworthy.
        const verdict = open ? null : await showVerdict(record, store, opts);
        if (verdict && !verdict.ok) {
          io.err(
            `prove: warning: run ${record.runId} does not verify (${
              verdict.problems[0]!.message
            }); its events are shown as recorded, not as trustworthy: prove verify ${record.runId} lists every problem`,
          );
        }
        // The spans from the run folder's span index, where the folder is here, and from the events.
        await showRun(shown, io, {
          ...opts,
          events,
          folder: record.folder,
          ...(opts.json ? { verdict } : {}),
        });
        if (open) io.err(open);
        if (!opts.json) {
          // The assessments after the events: the file store's from the run folder, an indexed store's rows.
          // A run folder given by its path is not under the runs root: its own file is read.
          const list = store instanceof FileStore
            ? await assessmentsInFolder(record)
            : await questionsOf(store, "assessments").assessments(record.runId).catch((error) => {
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
 * The verdict `prove show` gives with a run: `prove verify`'s, with the catalog when one can be opened. A
 * committed bundle or an experiment that cannot be compared because no catalog config is at hand (`deno task prove show RUN`
 * typed where there is no provcat.yaml) is a note, not a reason to warn: nothing was found wrong.
 */
async function showVerdict(
  record: RunRecord,
  store: EvidenceStore,
  choice: CatalogChoice,
): Promise<RunCheck> {
  let catalog: Catalog | null = null;
  try {
    catalog = await openCatalog(choice);
  } catch (error) {
    if (choice.config) throw error; // a --config given must be one
  }
  try {
    const check = await verifyRun(record, { store, ...(catalog ? { catalog } : {}) });
    if (catalog) return check;
    const unread = (p: Problem) => p.code === "catalog.missing";
    const problems = check.problems.filter((p) => !unread(p));
    const notes = [...check.notes, ...check.problems.filter(unread).map((p) => p.message)];
    return { ...check, ok: problems.length === 0, problems, notes };
  } finally {
    await catalog?.close();
  }
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

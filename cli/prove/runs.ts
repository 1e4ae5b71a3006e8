/**
 * `prove runs`: the run IDs of a store, or the runs that read a URI, named an experiment or ran an agent class.
 * @module
 */
import { questionsOf } from "../../lib/provevi/mod.ts";
import { printRuns } from "../_listing.ts";
import { UsageError } from "../_main.ts";
import type { ProveContext } from "./_context.ts";

/** Adds the command to `prove`. */
export function addRuns({ program, io, withStore }: ProveContext): void {
  program.command("runs")
    .description(
      "List the run IDs in the store, oldest first; or the runs that read a URI, named an experiment, or ran an agent class.",
    )
    .option("--reading <uri>", "the runs that staged the URI as an input (or a pinned version of it)")
    .option("--experiment <uri>", "the runs that named the experiment (a pinned URI: that version)")
    .option("--agent <name>", "the runs of an agent class (org/domain/env/name, or its name)")
    .option("--version <sha256>", "with --agent: one version of the class, by its SHA-256 or the start of it")
    .option("--json", "print JSON")
    .action((
      opts: { reading?: string; experiment?: string; agent?: string; version?: string; json?: boolean },
    ) =>
      withStore(async (store) => {
        const json = opts.json ?? false;
        const filters = [opts.reading, opts.experiment, opts.agent].filter((f) => f !== undefined);
        if (filters.length > 1) throw new UsageError("give one of --reading, --experiment and --agent");
        if (opts.version !== undefined && opts.agent === undefined) {
          throw new UsageError("--version needs --agent");
        }
        for (const [flag, uri] of [["--reading", opts.reading], ["--experiment", opts.experiment]] as const) {
          const branch = uri?.match(/\?at=branch:.*$/)?.[0];
          if (uri !== undefined && branch) {
            throw new UsageError(
              `${flag} ${uri} names a branch, which moves, and runs record the pinned version they used; ` +
                `drop ${branch} to list the runs of every version, or give ?at=commit:…`,
            );
          }
        }
        if (opts.reading !== undefined) {
          return printRuns(
            await questionsOf(store, "prove runs --reading").runsReading(opts.reading),
            io,
            json,
          );
        }
        if (opts.experiment !== undefined) {
          return printRuns(
            await questionsOf(store, "prove runs --experiment").runsOfExperiment(opts.experiment),
            io,
            json,
          );
        }
        if (opts.agent !== undefined) {
          return printRuns(
            await questionsOf(store, "prove runs --agent").runsOfAgent(opts.agent, {
              ...(opts.version !== undefined ? { version: opts.version } : {}),
            }),
            io,
            json,
          );
        }
        const ids = await store.runIds();
        if (json) io.out(JSON.stringify(ids.map((run_id) => ({ run_id })), null, 2));
        else for (const id of ids) io.out(id);
      })
    );
}

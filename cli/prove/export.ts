/**
 * `prove export`: a sealed run copied into another store, and the copy verified.
 * @module
 */
import { ProveviError } from "../../lib/provevi/evidence/mod.ts";
import { exportRun, findRun, openStore, verifyRun } from "../../lib/provevi/runs/mod.ts";
import { printCheck } from "../_commands.ts";
import { type CatalogChoice, openCatalog } from "../_catalog.ts";
import type { ProveContext } from "./_context.ts";
import { jsonText } from "../_json.ts";

/** Adds the command to `prove`. */
export function addExport({ program, io, result, withStore }: ProveContext): void {
  program.command("export")
    .description(
      "Copy a sealed run into another store (between file, sqlite and postgres stores), and verify the copy.",
    )
    .argument("<run>", "a run ID in the store")
    .requiredOption(
      "--to <uri>",
      "the store to copy into: file, sqlite:///path.db or postgresql://user@host:port/db",
    )
    .option("--to-runs <dir>", "the runs root of the target store (default: the same runs root)")
    .option("--config <file>", "the catalog config, to check the run's bundle and experiment")
    .option("--tenant <name>", "use this tenant's part of the catalog config")
    .option("--json", "print JSON")
    .action((run: string, opts: { to: string; toRuns?: string; json?: boolean } & CatalogChoice) =>
      withStore(async (from, g) => {
        const runs = opts.toRuns ?? g.runs;
        // The source is checked before the target is opened, so a refused copy creates and changes nothing there.
        const source = await verifyRun(await findRun(run, { store: from }), {
          store: from,
          catalog: () => openCatalog(opts),
        });
        if (!source.ok) {
          throw new ProveviError(
            `run "${run}" does not verify in ${from.uri} (${
              source.problems[0]?.message
            }); only a run that verifies is copied`,
          );
        }
        const to = await openStore(opts.to, runs ? { runs } : {});
        try {
          const check = await exportRun(run, { from, to }, { catalog: () => openCatalog(opts) });
          result.code = check.ok ? 0 : 1;
          if (opts.json) io.out(jsonText({ ...check, store: to.uri }));
          else if (check.ok) io.out(`${run}: copied to ${to.uri}; the copy verifies`);
          else printCheck(check, io, false);
        } finally {
          await to.close();
        }
      })
    );
}

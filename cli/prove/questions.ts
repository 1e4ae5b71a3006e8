/**
 * `prove experiments`, `experiment show`, `agents`, `agent show` and `access`: the questions across runs that an indexed store answers.
 * @module
 */
import { ProveviError } from "../../lib/provevi/evidence/mod.ts";
import { readExperiment } from "../../lib/provevi/experiments/mod.ts";
import { questionsOf } from "../../lib/provevi/store/mod.ts";
import { resolveRunRef } from "../../lib/provevi/runs/mod.ts";
import { type CatalogChoice, openCatalog } from "../_catalog.ts";
import {
  type NewestExperiment,
  printAccess,
  printAgent,
  printAgents,
  printExperiment,
  printExperiments,
} from "../_listing.ts";
import type { ProveContext } from "./_context.ts";
import { UsageError } from "../_main.ts";

/** Adds the command to `prove`. */
export function addQuestions(context: ProveContext): void {
  const { program, io, withStore } = context;
  program.command("experiments")
    .description("List the experiments that runs named, with their numbers of versions and runs.")
    .option("--json", "print JSON")
    .action((opts: { json?: boolean }) =>
      withStore(async (store) =>
        printExperiments(await questionsOf(store, "prove experiments").experiments(), io, opts.json ?? false)
      )
    );

  addExperimentShow(context);

  program.command("agents")
    .description("List the agent classes, with their numbers of versions and runs.")
    .option("--json", "print JSON")
    .action((opts: { json?: boolean }) =>
      withStore(async (store) =>
        printAgents(await questionsOf(store, "prove agents").agents(), io, opts.json ?? false)
      )
    );

  program.command("agent")
    .description("Show one agent class.")
    .command("show")
    .description("Print each version of an agent class, with its settings and its runs.")
    .argument("<name>", "the class, org/domain/env/name, or its name")
    .option("--json", "print JSON")
    .action((name: string, opts: { json?: boolean }) =>
      withStore(async (store) => {
        const detail = await questionsOf(store, "prove agent show").agent(name);
        if (!detail) throw new ProveviError(`no run in store ${store.uri} used an agent class ${name}`);
        printAgent(detail, io, opts.json ?? false);
      })
    );

  program.command("access")
    .description("Print the grants and refusals of a run, in order.")
    .argument("<run>", "a run ID in the store")
    .option("--json", "print JSON")
    .action((run: string, opts: { json?: boolean }) =>
      withStore(async (store) => {
        const q = questionsOf(store, "prove access");
        run = await resolveRunRef(store, run);
        const list = await q.access(run); // first, so the file store says that prove access needs a sqlite store
        if (!(await q.run(run))) throw new ProveviError(`no run "${run}" in store ${store.uri}`);
        printAccess(run, list, io, opts.json ?? false);
      })
    );
}

/** Adds `prove experiment show`. */
function addExperimentShow({ program, io, withStore }: ProveContext): void {
  program.command("experiment")
    .description("Show one experiment.")
    .command("show")
    .description(
      "Print each version of an experiment that runs reported, and its runs; with --config, also the newest " +
        "version in the catalog.",
    )
    .argument("<uri>", "the experiment's URI, such as experiment://acme/risk/dev/credit/q, or its name")
    .option("--config <file>", "the catalog config: also print the newest version of the experiment in it")
    .option("--tenant <name>", "with --config: use this tenant's part of the catalog config")
    .option("--json", "print JSON")
    .action((uri: string, opts: { json?: boolean } & CatalogChoice) =>
      withStore(async (store) => {
        if (opts.tenant !== undefined && opts.config === undefined) {
          throw new UsageError("--tenant needs --config, the catalog config it is a part of");
        }
        const questions = questionsOf(store, "prove experiment show");
        const detail = await questions.experiment(uri);
        // With a catalog, an experiment that no run named yet is still shown, by its whole URI.
        if (!detail && (opts.config === undefined || !uri.includes("://"))) {
          throw new ProveviError(`no run in store ${store.uri} named the experiment ${uri}`);
        }
        const shown = detail ??
          { experiment: uri.replace(/[?#].*$/, ""), first_run: null, versions: [], unpinned_runs: [] };
        const newest = opts.config === undefined ? undefined : await newestVersion(shown.experiment, opts);
        const assessments = detail ? await questions.experimentAssessments(detail.experiment) : [];
        printExperiment({ ...shown, assessments }, io, opts.json ?? false, newest);
      })
    );
}

/** The newest version of an experiment in the catalog that `--config` and `--tenant` name. */
async function newestVersion(uri: string, choice: CatalogChoice): Promise<NewestExperiment> {
  await using catalog = await openCatalog(choice);
  const read = await readExperiment(catalog, uri);
  return { pin: read.pin, sha256: read.sha256, experiment: read.experiment };
}

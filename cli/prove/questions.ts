/**
 * `prove experiments`, `experiment show`, `agents`, `agent show` and `access`: the questions across runs that an indexed store answers.
 * @module
 */
import { ProveviError, questionsOf } from "../../lib/provevi/mod.ts";
import { resolveRunRef } from "../../lib/provevi/runs/mod.ts";
import { printAccess, printAgent, printAgents, printExperiment, printExperiments } from "../_listing.ts";
import type { ProveContext } from "./_context.ts";

/** Adds the command to `prove`. */
export function addQuestions({ program, io, withStore }: ProveContext): void {
  program.command("experiments")
    .description("List the experiments that runs named, with their numbers of versions and runs.")
    .option("--json", "print JSON")
    .action((opts: { json?: boolean }) =>
      withStore(async (store) =>
        printExperiments(await questionsOf(store, "prove experiments").experiments(), io, opts.json ?? false)
      )
    );

  program.command("experiment")
    .description("Show one experiment.")
    .command("show")
    .description("Print each version of an experiment that runs reported, and its runs.")
    .argument("<uri>", "the experiment's URI, such as experiment://acme/risk/dev/credit/q, or its name")
    .option("--json", "print JSON")
    .action((uri: string, opts: { json?: boolean }) =>
      withStore(async (store) => {
        const detail = await questionsOf(store, "prove experiment show").experiment(uri);
        if (!detail) throw new ProveviError(`no run in store ${store.uri} named the experiment ${uri}`);
        printExperiment(detail, io, opts.json ?? false);
      })
    );

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

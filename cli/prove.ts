/**
 * `prove`: reads, checks and shows the evidence of runs.
 *
 * ```sh
 * prove [--runs DIR] [--store URI] runs [--json]
 * prove [--runs DIR] [--store URI] show RUN [--json]
 * prove [--runs DIR] [--store URI] verify RUN [--require-bundle] [--bundle URI] [--config FILE] [--tenant NAME] [--json]
 * prove [--runs DIR] [--store URI] telemetry RUN [--json]
 * prove policy FILE [--config deno.json] [--json]
 * prove [--store URI] runs --reading URI | --experiment URI | --agent NAME [--version SHA] [--json]
 * prove [--store URI] experiments | experiment show URI | agents | agent show NAME | access RUN [--json]
 * prove [--store URI] assess RUN NAME VALUE [--rationale TEXT] [--source WHO] [--event SEQ | --span ID]
 * prove [--store URI] export RUN --to URI [--to-runs DIR] [--json]
 * ```
 * @module
 */
import { Command } from "commander";
import {
  exportRun,
  findRun,
  NeedsIndexedStore,
  openStore,
  parseAssessmentValue,
  ProveviError,
  questionsOf,
  readInstalledPackages,
  telemetryItems,
  TelemetryPolicy,
} from "../lib/provevi/mod.ts";
import {
  printAccess,
  printAgent,
  printAgents,
  printAssessments,
  printExperiment,
  printExperiments,
  printRuns,
} from "./_listing.ts";
import { enterUserFolder, type Io, processIo } from "./_io.ts";
import { runProgram, UsageError } from "./_main.ts";
import {
  addVerifyCommand,
  policyLines,
  printCheck,
  readRunEvents,
  showRun,
  telemetryLine,
} from "./_commands.ts";
import { storeScope } from "./_commands.ts";
import { type CatalogChoice, openCatalog } from "./_catalog.ts";

/**
 * Runs `prove` with the given arguments.
 *
 * @param args The arguments, without the program's name.
 * @param io Where to write; the process's standard output and error by default.
 * @returns The exit code.
 * @example
 * ```ts
 * import { prove } from "./prove.ts";
 * const code = await prove(["--runs", "fixtures/runs", "runs"]);
 * ```
 */
export async function prove(args: string[], io: Io = processIo()): Promise<number> {
  const result = { code: 0 };
  const program = new Command("prove")
    .description("Read, check and show the evidence of agent runs.")
    .option(
      "--runs <dir>",
      "the runs root (default: PROVRUN_RUNS, $XDG_DATA_HOME/provrun/runs, ~/.local/share/provrun/runs)",
    )
    .option("--store <uri>", "the store: file (default) or sqlite:///path.db")
    .enablePositionalOptions()
    .showHelpAfterError(false);

  const withStore = storeScope(program);

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
        if (!(await q.run(run))) throw new ProveviError(`no run "${run}" in store ${store.uri}`);
        printAccess(run, await q.access(run), io, opts.json ?? false);
      })
    );

  program.command("assess")
    .description("Record a judgement on a run, one of its events, or one of its spans (writes the store).")
    .argument("<run>", "a run ID in the store")
    .argument("<name>", "the assessment's name, such as correct or score")
    .argument("<value>", "true, false, a number, or a text")
    .option("--rationale <text>", "why")
    .option("--source <who>", "who or what judged, such as an email address or an evaluator's name")
    .option("--event <seq>", "judge the event with this seq")
    .option("--span <id>", "judge the span with this ID (16 hex digits)")
    .option("--json", "print JSON")
    .action((
      run: string,
      name: string,
      value: string,
      opts: { rationale?: string; source?: string; event?: string; span?: string; json?: boolean },
    ) =>
      withStore(async (store) => {
        if (opts.event !== undefined && opts.span !== undefined) {
          throw new UsageError("give --event or --span, not both");
        }
        if (opts.event !== undefined && !/^\d+$/.test(opts.event)) {
          throw new UsageError("--event takes a seq, a whole number");
        }
        const target = {
          run,
          ...(opts.event !== undefined ? { seq: Number(opts.event) } : {}),
          ...(opts.span !== undefined ? { span: opts.span } : {}),
        };
        const a = await questionsOf(store, "prove assess").assess(target, name, parseAssessmentValue(value), {
          ...(opts.rationale !== undefined ? { rationale: opts.rationale } : {}),
          ...(opts.source !== undefined ? { source: opts.source } : {}),
        });
        if (opts.json) io.out(JSON.stringify(a, null, 2));
        else printAssessments([a], io);
      }, { write: true })
    );

  program.command("export")
    .description("Copy a sealed run into another store (file to sqlite and back), and verify the copy.")
    .argument("<run>", "a run ID in the store")
    .requiredOption("--to <uri>", "the store to copy into: file or sqlite:///path.db")
    .option("--to-runs <dir>", "the runs root of the target store (default: the same runs root)")
    .option("--config <file>", "the catalog config, to check the run's bundle and experiment")
    .option("--tenant <name>", "use this tenant's part of the catalog config")
    .option("--json", "print JSON")
    .action((run: string, opts: { to: string; toRuns?: string; json?: boolean } & CatalogChoice) =>
      withStore(async (from, g) => {
        const runs = opts.toRuns ?? g.runs;
        const to = await openStore(opts.to, runs ? { runs } : {});
        try {
          const check = await exportRun(run, { from, to }, { catalog: () => openCatalog(opts) });
          result.code = check.ok ? 0 : 1;
          if (opts.json) io.out(JSON.stringify({ ...check, store: to.uri }, null, 2));
          else if (check.ok) io.out(`${run}: copied to ${to.uri}; the copy verifies`);
          else printCheck(check, io, false);
        } finally {
          await to.close();
        }
      })
    );

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

  addVerifyCommand(program, {
    io,
    result,
    help: {
      command: "Check the evidence, the outputs and the committed bundle of a run.",
      run: "a run ID under the runs root, or a run folder's path",
      bundle: "the pinned URI of the bundle, instead of the run folder's bundle.json",
      requireBundle: "fail a run that has no committed bundle to compare with",
    },
  });

  program.command("telemetry")
    .description("Print the attempts that the telemetry policy blocked in a run, and its telemetry problems.")
    .argument("<run>", "a run ID under the runs root, or a run folder's path")
    .option("--json", "print JSON")
    .action((run: string, opts: { json?: boolean }) =>
      withStore(async (store) => {
        const record = await findRun(run, { store });
        const items = telemetryItems(await readRunEvents(record));
        if (opts.json) io.out(JSON.stringify({ run_id: record.runId, items }, null, 2));
        else if (items.length === 0) io.out(`${record.runId}: no blocked attempts and no problems`);
        else for (const item of items) io.out(telemetryLine(item));
      })
    );

  program.command("policy")
    .description("Check a telemetry policy file, and the installed version of each library it approves.")
    .argument("<file>", "the policy, a YAML or JSON file")
    .option(
      "--config <file>",
      "another deno.json whose imports pin the installed packages (default: this toolkit's)",
    )
    .option("--json", "print JSON")
    .action(async (file: string, opts: { config?: string; json?: boolean }) => {
      const policy = await TelemetryPolicy.load(file);
      const installed = await readInstalledPackages({
        ...(opts.config ? { config: opts.config } : {}),
        npmCache: null,
      });
      if (installed === null) {
        throw new ProveviError(
          `cannot read ${opts.config} as a deno.json; give the path of one, or leave --config out`,
        );
      }
      const versions = new Map([...(installed ?? new Map()).values()].map((p) => [p.name, p.version]));
      const problems = policy.versionProblems(versions);
      if (opts.json) {
        io.out(JSON.stringify({ file, sha256: policy.digest(), policy: policy.toJSON(), problems }, null, 2));
      } else for (const line of policyLines(file, policy)) io.out(line);
      for (const problem of problems) io.err(`prove: ${problem}`);
      if (problems.length) result.code = 1;
    });

  return await runProgram(program, args, io, result);
}

if (import.meta.main) {
  const problem = enterUserFolder();
  if (problem) {
    processIo().err(`prove: ${problem}`);
    Deno.exitCode = 1;
  } else Deno.exitCode = await prove(Deno.args);
}

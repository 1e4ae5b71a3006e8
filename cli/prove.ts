/**
 * `prove`: reads, checks and shows the evidence of runs.
 *
 * ```sh
 * prove [--runs DIR] [--store URI] runs [--json]
 * prove [--runs DIR] [--store URI] show RUN [--json]
 * prove [--runs DIR] [--store URI] verify RUN [--require-bundle] [--bundle URI] [--config FILE] [--tenant NAME] [--json]
 * prove [--runs DIR] [--store URI] telemetry RUN [--json]
 * prove policy FILE [--config deno.json] [--json]
 * ```
 * @module
 */
import { Command } from "commander";
import {
  type EvidenceStore,
  findRun,
  openStore,
  readInstalledPackages,
  telemetryItems,
  TelemetryPolicy,
} from "../lib/provevi/mod.ts";
import { type Io, processIo } from "./_io.ts";
import { runProgram } from "./_main.ts";
import { policyLines, readRunEvents, showRun, telemetryLine, verifyAndPrint } from "./_commands.ts";
import { type CatalogChoice, openCatalog } from "./_catalog.ts";

interface Globals {
  runs?: string;
  store?: string;
}

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

  const withStore = async <T>(fn: (store: EvidenceStore, g: Globals) => Promise<T>): Promise<T> => {
    const g = program.opts<Globals>();
    const store = await openStore(g.store ?? "file", { ...(g.runs ? { runs: g.runs } : {}), readOnly: true });
    try {
      return await fn(store, g);
    } finally {
      await store.close();
    }
  };

  program.command("runs")
    .description("List the run IDs in the store, oldest first.")
    .option("--json", "print JSON")
    .action((opts: { json?: boolean }) =>
      withStore(async (store) => {
        const ids = await store.runIds();
        if (opts.json) io.out(JSON.stringify(ids.map((run_id) => ({ run_id })), null, 2));
        else for (const id of ids) io.out(id);
      })
    );

  program.command("show")
    .description("Print the events of a run, one line each.")
    .argument("<run>", "a run ID under the runs root, or a run folder's path")
    .option("--json", "print JSON")
    .action((run: string, opts: { json?: boolean }) =>
      withStore(async (store) => {
        await showRun(await findRun(run, { store }), io, opts);
      })
    );

  program.command("verify")
    .description("Check the evidence, the outputs and the committed bundle of a run.")
    .argument("<run>", "a run ID under the runs root, or a run folder's path")
    .option("--bundle <uri>", "the pinned URI of the bundle, instead of the run folder's bundle.json")
    .option("--require-bundle", "fail a run that has no committed bundle to compare with")
    .option("--config <file>", "the catalog config that reads the bundle and the experiment")
    .option("--tenant <name>", "use this tenant's part of the catalog config")
    .option("--json", "print JSON")
    .action((
      run: string,
      opts: { bundle?: string; requireBundle?: boolean; json?: boolean } & CatalogChoice,
    ) =>
      withStore(async (store) => {
        result.code = await verifyAndPrint(run, io, {
          store,
          catalog: () => openCatalog(opts),
          ...(opts.bundle ? { bundle: opts.bundle } : {}),
          ...(opts.requireBundle ? { requireBundle: true } : {}),
          ...(opts.json ? { json: true } : {}),
        });
      })
    );

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
    .option("--config <file>", "the deno.json whose imports pin the installed packages", "deno.json")
    .option("--json", "print JSON")
    .action(async (file: string, opts: { config: string; json?: boolean }) => {
      const policy = await TelemetryPolicy.load(file);
      const installed = await readInstalledPackages({ config: opts.config, npmCache: null });
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

if (import.meta.main) Deno.exitCode = await prove(Deno.args);

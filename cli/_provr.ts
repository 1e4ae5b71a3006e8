/**
 * The `provr` command itself, which cli/provr.ts loads when it runs as the command (not as a sandbox process):
 * its subcommands, options and output.
 * @module
 */
import "./_import_env.ts"; // first: checks the variables the libraries below read as they load
import { Command } from "commander";
import { findRun, openStore } from "../lib/provevi/runs/mod.ts";
import { TelemetryPolicy } from "../lib/provevi/telemetry/mod.ts";
import { type Io, processIo } from "./_io.ts";
import { runProgram } from "./_main.ts";
import { runProgress } from "./_progress.ts";
import { addVerifyCommand, showRun } from "./_commands.ts";
import { type Globals, storeScope } from "./_commands.ts";
import { RunFile } from "../lib/provrun/run/run_file.ts";
// The runner (the AI SDK, OpenTelemetry's SDK, the backends) is imported when `provr run FILE` runs: `provr show`,
// `verify` and `catalog` never load it (#25).
import type { RunOutcome } from "../lib/provrun/runner/mod.ts";
import { whyFailed } from "./_why_failed.ts";
import { type CatalogChoice, catalogCommand } from "./_catalog.ts";
import { cancelOnSignals, runCatalog } from "./_run_support.ts";
import { addServeCommands, forkCommand, type ForkCommandOptions } from "./_provr_serve.ts";
import { UsageError } from "./_main.ts";
import { jsonText } from "./_json.ts";

/**
 * Runs `provr` with the given arguments.
 *
 * @param args The arguments, without the program's name.
 * @param io Where to write.
 * @returns The exit code.
 * @example
 * ```ts
 * import { provr } from "./_provr.ts";
 * const code = await provr(["verify", "fixtures/runs/run-20261129T120000Z-0badc0de"]);
 * ```
 */
export async function provr(args: string[], io: Io = processIo()): Promise<number> {
  const result = { code: 0 };
  const program = new Command("provr")
    .description("Run agents on pinned data and record the evidence; show and verify runs.")
    .option("--runs <dir>", "the runs root")
    .option("--store <uri>", "the store: file (default), sqlite:///path.db or postgresql://user@host:port/db")
    .enablePositionalOptions();

  const withStore = storeScope(program);

  addRunCommand(program, { io, result });
  addServeCommands(program, { io, result });

  program.command("show")
    .description("Print the events of a run.")
    .argument("<run>", "a run ID, latest, the start of a run ID, or a run folder's path")
    .option("--json", "print JSON")
    .action((run: string, opts: { json?: boolean }) =>
      withStore(async (store) => await showRun(await findRun(run, { store }), io, opts))
    );

  addVerifyCommand(program, {
    io,
    result,
    help: {
      command: "Check a run: the same code as prove verify.",
      run: "a run ID, latest, the start of a run ID, or a run folder's path",
      bundle: "the pinned URI of the bundle",
      requireBundle: "fail a run that has no committed bundle",
    },
  });

  program.addCommand(catalogCommand(io));

  return await runProgram(program, args, { io, result });
}

/** `provr run FILE`. */
function addRunCommand(program: Command, cli: { io: Io; result: { code: number } }): void {
  const { io, result } = cli;
  program.command("run")
    .description(
      "Run a run file: record, seal and commit its evidence; print the run ID. With --from RUN --at N, fork RUN: " +
        "its steps before N served from its evidence, step N on run live with the change.",
    )
    .argument("[file]", "the run file (YAML)")
    .option("--config <file>", "the catalog config (default: PROVCAT_CONFIG, else ./provcat.yaml)")
    .option("--tenant <name>", "use this tenant's part of the catalog config")
    .option(
      "--policy <file>",
      "the telemetry policy (default: PROVRUN_TELEMETRY_POLICY, else approve nothing)",
    )
    .option(
      "--sign-key <file>",
      "sign the seal with this private key (prove keygen), instead of run.sign_key",
    )
    .option("--from <run>", "fork this recorded run (with --at), instead of running a run file")
    .option("--at <n>", "the fork's first live step, from 1: the steps before it are served")
    .option("--model <route>", "the fork's model from step N on")
    .option("--prompt <file>", "the fork's prompt, from this file")
    .option("--set <key=value...>", "set a key of the fork's run file (agent.settings.temperature=0.2)")
    .option("--json", "print the outcome as JSON")
    .action(async (path: string | undefined, opts: RunCommandOptions & Partial<ForkCommandOptions>) => {
      const forks = opts.from !== undefined;
      const forkOnly = opts.at !== undefined || opts.model !== undefined || opts.prompt !== undefined ||
        opts.set !== undefined;
      if (forks && path !== undefined) {
        throw new UsageError("give a run file, or --from RUN --at N, not both");
      }
      if (!forks && forkOnly) {
        throw new UsageError("--at, --model, --prompt and --set fork a run: add --from RUN");
      }
      if (forks) return await forkCommand(program, opts as ForkCommandOptions, { io, result });
      if (path === undefined) throw new UsageError("give a run file, or --from RUN --at N to fork a run");
      result.code = await runCommand(path, opts, { globals: program.opts<Globals>(), io });
    });
}

/** The options of `provr run`. */
type RunCommandOptions = { json?: boolean; policy?: string; signKey?: string } & CatalogChoice;

/** Runs a run file and prints its outcome; a failed run is an exit code, not an exception. */
async function runCommand(
  path: string,
  opts: RunCommandOptions,
  cli: { globals: Globals; io: Io },
): Promise<number> {
  const { globals: g, io } = cli;
  const file = await RunFile.load(path);
  const policy = await TelemetryPolicy.fromEnvironment(opts.policy ? { file: opts.policy } : {});
  await using catalog = await runCatalog(file, opts);
  const store = g.store ?? file.data.run.store;
  const opened = store === undefined ? undefined : await openStore(store, g.runs ? { runs: g.runs } : {});
  using cancel = cancelOnSignals();
  const progress = io.terminal ? runProgress(io) : null;
  try {
    const { runFile } = await import("../lib/provrun/runner/mod.ts");
    const outcome = await runFile(file, {
      ...(catalog ? { catalog } : {}),
      ...(opened ? { store: opened } : {}),
      ...(g.runs ? { runs: g.runs } : {}),
      policy,
      ...(opts.signKey ? { signKey: opts.signKey } : {}),
      signal: cancel.signal,
      onStart: ({ runId, folder }) => io.err(`provr: run ${runId} in ${folder}`),
      ...(progress ? { onEvent: progress.event, onText: progress.text } : {}),
    });
    progress?.done();
    await printOutcome(outcome, { io, json: opts.json ?? false });
    if (outcome.status === "completed") return 0;
    // A run that a signal cancelled exits 128 + the signal's number, as shells expect.
    const signalled = cancel.signalled();
    const cancelled = signalled !== null && outcome.error?.name === "CancelledError";
    return cancelled ? (signalled === "SIGINT" ? 130 : 143) : 1;
  } finally {
    progress?.done();
    await opened?.close();
  }
}

/** The run ID and why the run failed; or the outcome as JSON. The copy in MLflow's line comes after the result's. */
async function printOutcome(outcome: RunOutcome, options: { io: Io; json: boolean }): Promise<void> {
  const { io } = options;
  if (!options.json) {
    io.out(outcome.runId);
    if (outcome.status === "failed") {
      io.err(`provr: run ${outcome.runId} failed: ${whyFailed(outcome)}`);
    }
  }
  const copy = outcome.mlflowCopy ? await outcome.mlflowCopy : null;
  if (options.json) io.out(jsonText({ ...outcome, mlflowCopy: copy }));
  else if (copy?.status === "copied") {
    io.err(
      `provr: copied to MLflow at ${copy.result.place}, level ${copy.result.level}, trace ${copy.result.traceId}`,
    );
  } else if (copy) io.err(`provr: ${copy.problem}`);
}

/**
 * `prove`: reads, checks and shows the evidence of runs.
 *
 * ```sh
 * prove [--runs DIR] [--store URI] runs [--json]
 * prove [--runs DIR] [--store URI] show RUN [--json]
 * prove [--runs DIR] [--store URI] trace TRACE_ID [--json]
 * prove [--runs DIR] [--store URI] diff A B [--limit N] [--json]
 * prove [--runs DIR] [--store URI] payload RUN SHA256
 * prove [--runs DIR] [--store URI] verify RUN [--require-bundle] [--bundle URI] [--trust KEYFILE…] [--log-key VKEY… [--witness VKEY…] [--quorum N]] [--config FILE] [--tenant NAME] [--json]
 * prove [--runs DIR] [--store URI] cost RUN | --experiment URI [--json]
 * prove keygen FILE [--json]
 * prove [--runs DIR] [--store URI] telemetry RUN [--json]
 * prove policy FILE [--config deno.json] [--json]
 * prove [--store URI] runs --reading URI | --experiment URI | --agent NAME [--version SHA] [--json]
 * prove [--store URI] experiments | experiment show URI | agents | agent show NAME | access RUN [--json]
 * prove [--runs DIR] [--store URI] assess RUN|EXPERIMENT NAME VALUE [--rationale TEXT] [--source WHO] [--event SEQ | --span ID | --experiment]
 * prove [--store URI] export RUN --to URI [--to-runs DIR] [--json]
 * prove [--runs DIR] [--store URI] ui [--port N] [--policy FILE]
 * prove [--store URI] mlflow RUN [--policy FILE] [--json]
 * prove [--runs DIR] [--store URI] serve [--port N]
 * prove [--runs DIR] [--store URI] log key | proof RUN [--write] | consistency OLD NEW | audit [--repair] | cosign URL… | wait RUN
 * prove witness --key FILE --state DIR --log VKEY… [--name NAME] [--port N]
 * ```
 * @module
 */
import "./_import_env.ts"; // first: checks the variables the libraries below read as they load
import { Command } from "commander";
import { enterUserFolder, type Io, processIo } from "./_io.ts";
import { runProgram } from "./_main.ts";
import { storeScope } from "./_commands.ts";
import type { ProveContext } from "./prove/_context.ts";
import { addRuns } from "./prove/runs.ts";
import { addQuestions } from "./prove/questions.ts";
import { addAssess } from "./prove/assess.ts";
import { addExport } from "./prove/export.ts";
import { addShow } from "./prove/show.ts";
import { addPayload } from "./prove/payload.ts";
import { addVerify } from "./prove/verify.ts";
import { addTelemetry } from "./prove/telemetry.ts";
import { addPolicy } from "./prove/policy.ts";
import { addUi } from "./prove/ui.ts";
import { addKeygen } from "./prove/keygen.ts";
import { addMlflow } from "./prove/mlflow.ts";
import { addServe } from "./prove/serve.ts";
import { addCost } from "./prove/cost.ts";
import { addTrace } from "./prove/trace.ts";
import { addDiff } from "./prove/diff.ts";
import { addLog } from "./prove/log.ts";
import { addWitness } from "./prove/witness.ts";

/** The commands of `prove`, in the order of its help; each file of `cli/prove/` adds one or a few. */
const COMMANDS: ((context: ProveContext) => void)[] = [
  addRuns,
  addQuestions,
  addAssess,
  addExport,
  addShow,
  addTrace,
  addDiff,
  addPayload,
  addVerify,
  addCost,
  addTelemetry,
  addPolicy,
  addUi,
  addKeygen,
  addMlflow,
  addServe,
  addLog,
  addWitness,
];

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
    .option("--store <uri>", "the store: file (default), sqlite:///path.db or postgresql://user@host:port/db")
    .enablePositionalOptions()
    .showHelpAfterError(false);

  const context: ProveContext = { program, io, result, withStore: storeScope(program) };
  for (const add of COMMANDS) add(context);

  return await runProgram(program, args, { io, result });
}

if (import.meta.main) {
  const problem = enterUserFolder();
  if (problem) {
    processIo().err(`prove: ${problem}`);
    Deno.exitCode = 1;
  } else Deno.exitCode = await prove(Deno.args);
}

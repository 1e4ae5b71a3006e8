/**
 * `provtrace`: the trace database built from sealed runs (provtrace-spec.txt). Argument parsing and printing
 * only; each command is a library function of `lib/provtrace/`.
 *
 * ```sh
 * provtrace build --store URI --db PATH [--runs DIR] [--run ID] [--allow-unverified] [--config FILE] [--json]
 * provtrace check --db PATH [--runs DIR] [--json]
 * provtrace runs --db PATH [--json]
 * provtrace export --db PATH --kind steps|sft [--per call|run] [--experiment URI] [--agent NAME]
 *   [--status S] [--assessment NAME>=VALUE] [--allow-unverified]
 * provtrace query --db PATH SQL [--json]
 * ```
 * @module
 */
import { Command } from "commander";
import {
  buildTrace,
  checkTrace,
  exportTrace,
  openTraceDb,
  parseAssessmentFilter,
  queryTrace,
  traceRuns,
} from "../lib/provtrace/mod.ts";
import { openCatalog } from "./_catalog.ts";
import { enterUserFolder, type Io, processIo } from "./_io.ts";
import { printColumns } from "./_listing.ts";
import { runProgram, UsageError } from "./_main.ts";
import { jsonText } from "./_json.ts";

/**
 * Runs `provtrace` with the given arguments.
 *
 * @param args The arguments, without the program's name.
 * @param io Where to write; the process's standard output and error by default.
 * @returns The exit code: 0 when the command worked, 1 when a run was refused or changed (or a user error),
 * 2 for a wrong command line.
 * @example
 * ```ts
 * import { provtrace } from "./provtrace.ts";
 * const code = await provtrace(["runs", "--db", "trace.db"]);
 * ```
 */
export async function provtrace(args: string[], io: Io = processIo()): Promise<number> {
  const result = { code: 0 };
  const program = new Command("provtrace")
    .description(
      "Build and read the trace database: a row per model call, message and tool call of sealed runs.",
    )
    .showHelpAfterError(false);
  const json = (value: unknown) => io.out(jsonText(value));

  program.command("build")
    .description(
      "Add each sealed run of a store that the database lacks, after it verifies (or one run, again).",
    )
    .requiredOption(
      "--store <uri>",
      "the store to read: file, sqlite:///path.db or postgresql://user@host:port/db (opened read-only)",
    )
    .requiredOption("--db <path>", "the trace database (made in WAL mode when missing)")
    .option(
      "--runs <dir>",
      "the runs root (default: PROVRUN_RUNS, $XDG_DATA_HOME/provrun/runs, ~/.local/share/provrun/runs)",
    )
    .option("--run <id>", "build only this run again, replacing its rows")
    .option("--allow-unverified", "add a run that does not verify, marked unverified")
    .option("--config <file>", "the catalog config that reads committed bundles and experiments")
    .option("--tenant <name>", "use this tenant's part of the catalog config")
    .option("--json", "print JSON")
    .action(async (opts: {
      store: string;
      db: string;
      runs?: string;
      run?: string;
      allowUnverified?: boolean;
      config?: string;
      tenant?: string;
      json?: boolean;
    }) => {
      const built = await buildTrace({
        store: opts.store,
        db: opts.db,
        ...(opts.runs === undefined ? {} : { runs: opts.runs }),
        ...(opts.run === undefined ? {} : { runId: opts.run }),
        allowUnverified: opts.allowUnverified === true,
        catalog: () => openCatalog(opts),
        ...(io.terminal
          ? { onProgress: (done, total, id) => io.progress(`provtrace: ${done}/${total} ${id}`) }
          : {}),
      });
      if (io.terminal) io.progress("");
      if (built.refused.length) result.code = 1;
      if (opts.json) return json(built);
      for (const r of built.added) {
        io.out(
          `added ${r.run_id} (${r.rows} rows)${r.verified ? "" : `, UNVERIFIED: ${r.problems.join("; ")}`}`,
        );
      }
      for (const r of built.refused) {
        io.err(`provtrace: refused ${r.run_id}: it does not verify: ${r.problems.join("; ")}`);
      }
      io.out(
        `${opts.db}: ${built.added.length} added, ${built.present.length} already there, ${built.open.length} not sealed, ${built.refused.length} refused`,
      );
    });

  program.command("check")
    .description("Compare each run of the database with the evidence it was built from.")
    .requiredOption("--db <path>", "the trace database")
    .option("--runs <dir>", "the runs root of a file store, instead of the one each run records")
    .option("--json", "print JSON")
    .action(async (opts: { db: string; runs?: string; json?: boolean }) => {
      const checked = await checkTrace(opts.db, opts.runs === undefined ? {} : { runs: opts.runs });
      if (!checked.ok) result.code = 1;
      if (opts.json) return json(checked);
      printColumns(checked.runs.map((r) => [r.run_id, r.state, r.problem ?? ""]), io);
      io.out(
        checked.ok
          ? `${opts.db}: ${checked.runs.length} runs, each as its source holds it`
          : `${opts.db}: ${
            checked.runs.filter((r) => r.state !== "same").length
          } of ${checked.runs.length} runs differ from their source`,
      );
    });

  program.command("runs")
    .description("List the runs of the database, with the build that added each.")
    .requiredOption("--db <path>", "the trace database")
    .option("--json", "print JSON")
    .action((opts: { db: string; json?: boolean }) => {
      using trace = openTraceDb(opts.db);
      const runs = traceRuns(trace.db);
      if (opts.json) return json(runs);
      printColumns([
        ["RUN", "STATUS", "AGENT", "CALLS", "TOOLS", "COST", "VERIFIED", "BUILD", "LAST HASH"],
        ...runs.map((r) => [
          r.run_id,
          r.status,
          r.agent ?? "-",
          String(r.model_calls),
          String(r.tool_calls),
          r.cost ?? "-",
          r.verified ? "yes" : "NO",
          r.build_version,
          r.last_hash.slice(0, 12),
        ]),
      ], io);
    });

  program.command("export")
    .description(
      "Write steps (state, action, result) or chat fine-tuning lines as JSON lines, with provenance.",
    )
    .requiredOption("--db <path>", "the trace database")
    .requiredOption("--kind <kind>", "steps or sft")
    .option("--per <unit>", "sft: a line per model call (call) or per run's final conversation (run)", "call")
    .option("--experiment <uri>", "only runs of this experiment")
    .option("--agent <name>", "only runs of this agent class")
    .option("--status <status>", "only runs of this status: completed, failed, incomplete")
    .option(
      "--assessment <filter>",
      "only steps whose run or step has an assessment NAME>=VALUE (>, <=, <, =)",
    )
    .option("--allow-unverified", "also runs added unverified")
    .action((opts: {
      db: string;
      kind: string;
      per: string;
      experiment?: string;
      agent?: string;
      status?: string;
      assessment?: string;
      allowUnverified?: boolean;
    }) => {
      // A wrong choice is a wrong command line (exit 2), told before the database is opened.
      if (opts.kind !== "steps" && opts.kind !== "sft") {
        throw new UsageError(`--kind ${opts.kind} is not an export: use steps or sft`);
      }
      if (opts.per !== "call" && opts.per !== "run") {
        throw new UsageError(`--per ${opts.per} is not call or run`);
      }
      if (opts.status !== undefined && !["completed", "failed", "incomplete"].includes(opts.status)) {
        throw new UsageError(`--status ${opts.status} is not a status: use completed, failed or incomplete`);
      }
      if (opts.assessment !== undefined) {
        try {
          parseAssessmentFilter(opts.assessment);
        } catch (error) {
          throw new UsageError((error as Error).message);
        }
      }
      const lines = exportTrace(opts.db, {
        kind: opts.kind as "steps",
        per: opts.per as "call",
        ...(opts.experiment === undefined ? {} : { experiment: opts.experiment }),
        ...(opts.agent === undefined ? {} : { agent: opts.agent }),
        ...(opts.status === undefined ? {} : { status: opts.status }),
        ...(opts.assessment === undefined ? {} : { assessment: opts.assessment }),
        allowUnverified: opts.allowUnverified === true,
      });
      for (const line of lines) io.out(JSON.stringify(line));
    });

  program.command("query")
    .description("Ask the database a question in SQL, on a read-only connection; print the rows.")
    .requiredOption("--db <path>", "the trace database")
    .argument("<sql>", "one SQL statement, such as a SELECT")
    .option("--json", "print JSON")
    .action((sql: string, opts: { db: string; json?: boolean }) => {
      const answer = queryTrace(opts.db, sql);
      // The rows are keyed by the query's own column names: printed as the database gives them.
      if (opts.json) return io.out(JSON.stringify(answer.rows, null, 2));
      const cell = (
        v: unknown,
      ) => (v === null || v === undefined ? "-" : typeof v === "object" ? JSON.stringify(v) : String(v));
      printColumns([answer.columns, ...answer.rows.map((r) => answer.columns.map((c) => cell(r[c])))], io);
    });

  return await runProgram(program, args, { io, result });
}

if (import.meta.main) {
  const problem = enterUserFolder();
  if (problem) {
    processIo().err(`provtrace: ${problem}`);
    Deno.exitCode = 1;
  } else {
    try {
      Deno.exitCode = await provtrace(Deno.args);
    } catch (error) {
      // `provtrace export … | head` closes the pipe early: the reader has what it wanted.
      if (!(error instanceof Deno.errors.BrokenPipe)) throw error;
    }
  }
}

/**
 * `provtrace`: the trace database built from sealed runs (provtrace-spec.txt). Argument parsing and printing
 * only; each command is a library function of `lib/provtrace/`.
 *
 * ```sh
 * provtrace build --store URI --db PATH [--runs DIR] [--run ID] [--allow-unverified] [--config FILE] [--json]
 * provtrace check --db PATH [--store URI…] [--runs DIR] [--config FILE] [--json]
 * provtrace runs --db PATH [--json]
 * provtrace export --db PATH --format steps|sft|openai|sharegpt|hf|atif [--per call|run] [--tokens] [--out FILE]
 *   [--experiment URI] [--agent NAME] [--status S] [--assessment NAME>=VALUE] [--allow-unverified]
 *   [--store URI…] [--runs DIR] [--config FILE] [--policy FILE --destination NAME]
 * provtrace lineage --db PATH RUN|EXPORT [--json]
 * provtrace lineage --db PATH --check [EXPORT] [--store URI…] [--runs DIR] [--json]
 * provtrace query --db PATH SQL [--param VALUE]... [--timeout SECONDS] [--json]
 * ```
 * @module
 */
import "./_query_role.ts"; // first: a compiled provtrace started as a query's process answers there and ends
import { Command, Option } from "commander";
import {
  buildTrace,
  checkLineage,
  checkTrace,
  queryTrace,
  TRACE_EXPORT_FORMATS,
  TRACE_QUERY_TIMEOUT,
  type TraceExportFormat,
  traceLineage,
  writeTraceExport,
} from "../lib/provtrace/mod.ts";
import { defaultRowsKeyPath, openTraceDb, traceRuns } from "../lib/provtrace/db/mod.ts";
import { parseAssessmentFilter } from "../lib/provtrace/export/mod.ts";
import { openCatalog } from "./_catalog.ts";
import { enterUserFolder, type Io, processIo } from "./_io.ts";
import { printColumns } from "./_listing.ts";
import { runProgram, UsageError } from "./_main.ts";
import { jsonText } from "./_json.ts";
import type { TelemetryPolicy } from "../lib/provevi/telemetry/policy.ts";

/**
 * Runs `provtrace` with the given arguments.
 *
 * @param args The arguments, without the program's name.
 * @param io Where to write; the process's standard output and error by default.
 * @returns The exit code: 0 when the command worked, 1 when a run was refused or changed, or the database's
 * own structure was (or a user error), 2 for a wrong command line.
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
  const context = { program, io, result };
  addBuild(context);
  addCheck(context);
  addRuns(context);
  addExport(context);
  addLineage(context);
  addQuery(context);
  return await runProgram(program, args, { io, result });
}

/** What each command is added with: the program, where it writes, and its exit code. */
interface Context {
  program: Command;
  io: Io;
  result: { code: number };
}

/** `provtrace build`. */
function addBuild({ program, io, result }: Context): void {
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
        // The catalog's file and tenant, not a catalog: they can be sent to the workers of a large build.
        catalogConfig: {
          ...(opts.config ? { configPath: opts.config } : {}),
          ...(opts.tenant ? { tenant: opts.tenant } : {}),
        },
        ...rowsKeyFile(),
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
}

/** The options of `provtrace check`. */
interface CheckOptions {
  db: string;
  runs?: string;
  store: string[];
  config?: string;
  tenant?: string;
  deep?: boolean;
  json?: boolean;
}

/** The user's rows key (docs/provtrace.md, "What check proves"), where a home folder gives it a place. */
function rowsKeyFile(): { keyFile?: string } {
  const path = defaultRowsKeyPath();
  return path === null ? {} : { keyFile: path };
}

/** Commander's way to take an option more than once. */
function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** Where check, export and lineage read runs from: as the build was given them, never what trace.db names. */
function runsOption(): Option {
  return new Option(
    "--runs <dir>",
    "the runs root to read runs from (default: PROVRUN_RUNS, …), as the build was given",
  );
}

/** The stores check, export and lineage read runs from (repeatable). */
function storeOption(): Option {
  return new Option(
    "--store <uri>",
    "a store to read runs from, as the build was given (repeat it; default: file)",
  )
    .argParser(collect).default([]);
}

/** `provtrace check`. */
function addCheck({ program, io, result }: Context): void {
  const json = (value: unknown) => io.out(jsonText(value));
  program.command("check")
    .description(
      "Compare each run of the database with the evidence it was built from: its store's last hash, its verification, and every row.",
    )
    .requiredOption("--db <path>", "the trace database")
    .addOption(runsOption())
    .addOption(storeOption())
    .option("--config <file>", "the catalog config that reads committed bundles and experiments")
    .option("--tenant <name>", "use this tenant's part of the catalog config")
    .option(
      "--deep",
      "build every run again from its evidence and compare row by row, even where its rows' MAC holds",
    )
    .option("--json", "print JSON")
    .action(async (opts: CheckOptions) => {
      const checked = await checkTrace(opts.db, {
        ...(opts.runs === undefined ? {} : { runs: opts.runs }),
        stores: opts.store,
        catalog: () => openCatalog(opts),
        ...(opts.deep ? { deep: true } : rowsKeyFile()),
        ...(io.terminal
          ? { onProgress: (done, total, id) => io.progress(`provtrace: ${done}/${total} ${id}`) }
          : {}),
      });
      if (io.terminal) io.progress("");
      if (!checked.ok) result.code = 1;
      if (opts.json) return json(checked);
      for (const problem of checked.problems) io.out(`provtrace: ${problem}`);
      printColumns(checked.runs.map((r) => [r.run_id, r.state, r.problem ?? ""]), io);
      const differ = checked.runs.filter((r) => r.state !== "same").length;
      io.out(
        checked.ok
          ? `${opts.db}: ${checked.runs.length} runs, each as its source holds it`
          : `${opts.db}: ${differ} of ${checked.runs.length} runs differ from their source${
            checked.problems.length ? `, and the file has ${checked.problems.length} problems of its own` : ""
          }`,
      );
    });
}

/** `provtrace runs`. */
function addRuns({ program, io }: Context): void {
  const json = (value: unknown) => io.out(jsonText(value));
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
}

/** The options of `provtrace export`. */
interface ExportOptions {
  db: string;
  format?: string;
  kind?: string;
  per: string;
  tokens?: boolean;
  out?: string;
  experiment?: string;
  agent?: string;
  status?: string;
  assessment?: string;
  allowUnverified?: boolean;
  runs?: string;
  store: string[];
  config?: string;
  tenant?: string;
  policy?: string;
  destination?: string;
}

/** `provtrace export`. */
function addExport({ program, io, result }: Context): void {
  program.command("export")
    .description(
      "Check each run, then write JSON lines for a training job (steps, sft, openai, sharegpt, hf, atif), each with its provenance, and the export's manifest.",
    )
    .requiredOption("--db <path>", "the trace database")
    .option("--format <format>", `${TRACE_EXPORT_FORMATS.join(", ")}`)
    .option("--kind <format>", "the same as --format (its older name)")
    .option(
      "--per <unit>",
      "sft, openai, sharegpt, hf: a line per model call (call) or per run (run)",
      "call",
    )
    .option(
      "--tokens",
      "steps: each turn's token IDs, log-probabilities and loss mask; check the prefix property",
    )
    .option(
      "--out <file>",
      "write the lines to this file, with FILE.manifest.json (and FILE.provenance.jsonl)",
    )
    .option("--experiment <uri>", "only runs of this experiment")
    .option("--agent <name>", "only runs of this agent class")
    .option("--status <status>", "only runs of this status: completed, failed, incomplete")
    .option(
      "--assessment <filter>",
      "only steps whose run or step has an assessment NAME>=VALUE (>, <=, <, =)",
    )
    .option("--allow-unverified", "also runs added unverified")
    .addOption(runsOption())
    .addOption(storeOption())
    .option("--config <file>", "the catalog config that reads committed bundles and experiments")
    .option("--tenant <name>", "use this tenant's part of the catalog config")
    .option("--policy <file>", "the telemetry policy that lets the lines out (with --destination)")
    .option("--destination <name>", "the policy's destination that the export is; it must receive bodies")
    .action(async (opts: ExportOptions) => {
      const format = exportFormat(opts);
      const exported = await writeTraceExport(opts.db, {
        kind: format,
        per: opts.per as "call",
        ...(opts.tokens ? { tokens: true } : {}),
        ...(opts.experiment === undefined ? {} : { experiment: opts.experiment }),
        ...(opts.agent === undefined ? {} : { agent: opts.agent }),
        ...(opts.status === undefined ? {} : { status: opts.status }),
        ...(opts.assessment === undefined ? {} : { assessment: opts.assessment }),
        allowUnverified: opts.allowUnverified === true,
        ...(opts.runs === undefined ? {} : { runs: opts.runs }),
        stores: opts.store,
        catalog: () => openCatalog(opts),
        ...rowsKeyFile(),
        ...(opts.policy === undefined ? {} : { policy: await loadPolicy(opts.policy) }),
        ...(opts.destination === undefined ? {} : { destination: opts.destination }),
        ...(opts.out === undefined
          ? { write: (text: string) => io.out(text.replace(/\n$/, "")) }
          : { out: opts.out }),
      });
      for (const r of exported.exported.refused) io.err(`provtrace: refused ${r.run_id}: ${r.problem}`);
      for (const b of exported.exported.breaks) io.err(`provtrace: prefix broken: ${b.problem}`);
      if (opts.out !== undefined) {
        const m = exported.manifest;
        io.err(
          `provtrace: ${m.lines} ${m.format} lines to ${opts.out} (export ${
            m.export_id.slice(0, 12)
          }…, ${m.runs.length} run${m.runs.length === 1 ? "" : "s"}; manifest ${exported.paths.manifest}${
            exported.paths.provenance ? `, provenance ${exported.paths.provenance}` : ""
          })`,
        );
      }
      if (exported.exported.refused.length) result.code = 1;
    });
}

/** The export's format, its options checked: a wrong choice is a wrong command line (exit 2). */
function exportFormat(opts: ExportOptions): TraceExportFormat {
  const format = opts.format ?? opts.kind;
  if (format === undefined) throw new UsageError(`give --format: ${TRACE_EXPORT_FORMATS.join(", ")}`);
  if (opts.format !== undefined && opts.kind !== undefined && opts.format !== opts.kind) {
    throw new UsageError("--kind is --format's older name: give one of them");
  }
  if (!(TRACE_EXPORT_FORMATS as readonly string[]).includes(format)) {
    throw new UsageError(`--format ${format} is not an export: use ${TRACE_EXPORT_FORMATS.join(", ")}`);
  }
  if (opts.per !== "call" && opts.per !== "run") throw new UsageError(`--per ${opts.per} is not call or run`);
  if (opts.tokens && format !== "steps") {
    throw new UsageError(`--tokens goes with --format steps (the exact tokens of each turn), not ${format}`);
  }
  if ((opts.policy === undefined) !== (opts.destination === undefined)) {
    throw new UsageError(
      "--policy and --destination go together: the policy, and its destination that the export is",
    );
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
  return format as TraceExportFormat;
}

/** `provtrace lineage`. */
function addLineage({ program, io, result }: Context): void {
  const json = (value: unknown) => io.out(jsonText(value));
  program.command("lineage")
    .description(
      "List every export and line a run fed, or the runs an export holds; with --check, name the exports that a run removed from its store, or changed, taints.",
    )
    .requiredOption("--db <path>", "the trace database")
    .argument("[target]", "a run ID, or an export's ID (12 or more hex digits) or file")
    .option("--check", "check the exports (all, or the one named) against the runs they hold")
    .addOption(runsOption())
    .addOption(storeOption())
    .option("--json", "print JSON")
    .action(
      async (
        target: string | undefined,
        opts: { db: string; check?: boolean; runs?: string; store: string[]; json?: boolean },
      ) => {
        if (opts.check) {
          const checked = await checkLineage(opts.db, {
            ...(target === undefined ? {} : { export: target }),
            ...(opts.runs === undefined ? {} : { runs: opts.runs }),
            stores: opts.store,
          });
          if (!checked.ok) result.code = 1;
          if (opts.json) return json(checked);
          for (const e of checked.exports) {
            const name = `${e.export_id.slice(0, 12)}  ${e.format}  ${e.path ?? "-"}`;
            if (!e.tainted.length) io.out(`${name}  clean`);
            for (const t of e.tainted) io.out(`${name}  TAINTED by ${t.run_id} (${t.state}): ${t.problem}`);
          }
          const tainted = checked.exports.filter((e) => e.tainted.length).length;
          io.out(`${opts.db}: ${checked.exports.length} exports, ${tainted} tainted`);
          return;
        }
        if (target === undefined) throw new UsageError("give a run ID or an export, or --check");
        const lineage = traceLineage(opts.db, target);
        if (opts.json) return json(lineage);
        if (lineage.of === "run") {
          printColumns([
            ["EXPORT", "FORMAT", "CREATED", "LINES", "FILE"],
            ...lineage.exports.map((e) => [
              e.export_id.slice(0, 12),
              e.format,
              e.created_at,
              e.fed.join(","),
              e.path ?? "-",
            ]),
          ], io);
          return;
        }
        printColumns([
          ["RUN", "VERIFIED", "EVENTS", "LINES", "LAST HASH"],
          ...lineage.runs.map((r) => [
            r.run_id,
            r.verified ? "yes" : "NO",
            String(r.events),
            String(r.lines),
            r.last_hash.slice(0, 12),
          ]),
        ], io);
      },
    );
}

/** `provtrace query`. */
function addQuery({ program, io }: Context): void {
  program.command("query")
    .description(
      "Ask the database a question in SQL: one statement that reads, on a read-only connection, within a time limit; print the rows.",
    )
    .requiredOption("--db <path>", "the trace database")
    .argument("<sql>", "one SQL statement, such as a SELECT, with ? for each --param")
    .option(
      "--param <value>",
      "the value of the next ? of the statement, as text (repeat it, in order)",
      (value: string, list: string[]) => [...list, value],
      [] as string[],
    )
    .option(
      "--timeout <seconds>",
      "stop the question after this long (0: no limit)",
      String(TRACE_QUERY_TIMEOUT / 1000),
    )
    .option("--json", "print JSON")
    .action(async (sql: string, opts: { db: string; param: string[]; timeout: string; json?: boolean }) => {
      const seconds = Number(opts.timeout);
      if (opts.timeout.trim() === "" || !Number.isFinite(seconds) || seconds < 0) {
        throw new UsageError(`--timeout ${opts.timeout} is not a number of seconds (0: no limit)`);
      }
      const answer = await queryTrace(opts.db, sql, { params: opts.param, timeout: seconds * 1000 });
      // The rows are keyed by the query's own column names: printed as the database gives them.
      if (opts.json) return io.out(JSON.stringify(answer.rows, null, 2));
      // A blob shows as SQL writes one, x'…'.
      const cell = (v: unknown) =>
        v === null || v === undefined
          ? "-"
          : v instanceof Uint8Array
          ? `x'${Array.from(v, (b) => b.toString(16).padStart(2, "0")).join("")}'`
          : typeof v === "object"
          ? JSON.stringify(v)
          : String(v);
      printColumns([answer.columns, ...answer.rows.map((r) => answer.columns.map((c) => cell(r[c])))], io);
    });
}

/**
 * `provtrace export --policy FILE`: the policy, imported only here: it brings semver, which no other command
 * needs (#25).
 */
async function loadPolicy(file: string): Promise<TelemetryPolicy> {
  const { TelemetryPolicy } = await import("../lib/provevi/telemetry/policy.ts");
  return await TelemetryPolicy.load(file);
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

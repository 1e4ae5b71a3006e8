/**
 * The provr commands that serve a recorded run's evidence: `provr replay RUN`, `provr resume RUN`, and the fork
 * of `provr run --from RUN --at N`. Each prints the new run's ID, then what it served and how it compares.
 * @module
 */
import type { Command } from "commander";
import type { EvidenceStore, RunRecord } from "../lib/provevi/mod.ts";
import { findRun, openStore } from "../lib/provevi/runs/mod.ts";
import { TelemetryPolicy } from "../lib/provevi/telemetry/mod.ts";
import { placeOf } from "../lib/provevi/diff/mod.ts";
import { RunFile } from "../lib/provrun/run/run_file.ts";
// The replay machinery is imported when one of these commands runs: `provr run FILE`, the common path, never
// loads it (#25).
import type {
  ComparedOutcome,
  ResumeOutcome,
  ServedOutcome,
  ServeOptions,
} from "../lib/provrun/replay/mod.ts";
import { argumentFile } from "./_argument_file.ts";
import type { CatalogChoice } from "./_catalog.ts";
import type { Globals } from "./_commands.ts";
import type { Io } from "./_io.ts";
import { jsonText } from "./_json.ts";
import { UsageError } from "./_main.ts";
import { cancelOnSignals, runCatalog } from "./_run_support.ts";
import { count } from "./_listing.ts";
import { whyFailed } from "./_why_failed.ts";

/** What the commands are given. */
interface Cli {
  io: Io;
  result: { code: number };
}

/** The options of `provr run` that fork. */
export interface ForkCommandOptions extends CatalogChoice {
  from: string;
  at?: string;
  model?: string;
  prompt?: string;
  set?: string[];
  policy?: string;
  signKey?: string;
  json?: boolean;
}

/**
 * Adds `replay` and `resume` to provr.
 *
 * @param program The provr program.
 * @param cli Where to print and where the exit code goes.
 */
export function addServeCommands(program: Command, cli: Cli): void {
  program.command("replay")
    .description(
      "Run a recorded run again with every model answer and tool result served from its evidence (no network, " +
        "no key, no tool); print the new run's ID, then identical or the first divergence (exit 1).",
    )
    .argument("<run>", "a run ID, latest, the start of a run ID, or a run folder's path")
    .option("--file <file>", "the run file to run (default: the one the run read, where it was)")
    .option("--config <file>", "the catalog config that stages the inputs")
    .option("--tenant <name>", "use this tenant's part of the catalog config")
    .option("--json", "print the outcome as JSON")
    .action((run: string, opts: { file?: string; json?: boolean } & CatalogChoice) =>
      serve(program, run, { ...opts, io: cli.io }, async (source, options) => {
        const { replayRun } = await import("../lib/provrun/replay/mod.ts");
        const outcome = await replayRun(source, { ...options, ...(opts.file ? { file: opts.file } : {}) });
        printCompared(outcome, { ...cli, json: opts.json ?? false, verb: "replay" });
      })
    );
  program.command("resume")
    .description(
      "Go on with a run cut by a crash: serve what it recorded, run the rest; print the new run's ID and the " +
        "check of the two as one history.",
    )
    .argument("<run>", "the cut run: a run ID, the start of one, or a run folder's path")
    .option("--config <file>", "the catalog config that stages the inputs")
    .option("--tenant <name>", "use this tenant's part of the catalog config")
    .option(
      "--policy <file>",
      "the telemetry policy (default: PROVRUN_TELEMETRY_POLICY, else approve nothing)",
    )
    .option("--json", "print the outcome as JSON")
    .action((run: string, opts: { json?: boolean; policy?: string } & CatalogChoice) =>
      serve(program, run, { ...opts, io: cli.io }, async (source, options) => {
        const { resumeRun } = await import("../lib/provrun/replay/mod.ts");
        const outcome = await resumeRun(source, await withPolicy(options, opts.policy));
        printResumed(outcome, { ...cli, json: opts.json ?? false });
      })
    );
}

/**
 * `provr run --from RUN --at N`: a fork.
 *
 * @param program The provr program.
 * @param opts The command's options.
 * @param cli Where to print and where the exit code goes.
 */
export async function forkCommand(program: Command, opts: ForkCommandOptions, cli: Cli): Promise<void> {
  if (opts.at === undefined) throw new UsageError("--from RUN needs --at N: the first step that runs live");
  const at = Number(opts.at);
  if (!Number.isSafeInteger(at) || at < 1) throw new UsageError(`--at ${opts.at}: give a step from 1`);
  const set: Record<string, string> = {};
  for (const pair of opts.set ?? []) {
    const eq = pair.indexOf("=");
    if (eq < 1) {
      throw new UsageError(`--set ${pair}: write key=value, such as agent.settings.temperature=0.2`);
    }
    set[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  const prompt = opts.prompt === undefined ? undefined : await argumentFile(opts.prompt, "the prompt");
  await serve(program, opts.from, { ...opts, io: cli.io }, async (source, options) => {
    const { forkRun } = await import("../lib/provrun/replay/mod.ts");
    const outcome = await forkRun(source, {
      ...await withPolicy(options, opts.policy),
      at,
      ...(opts.model ? { model: opts.model } : {}),
      ...(prompt !== undefined ? { prompt } : {}),
      ...(Object.keys(set).length ? { set } : {}),
      ...(opts.signKey ? { signKey: opts.signKey } : {}),
    });
    printCompared(outcome, { ...cli, json: opts.json ?? false, verb: "fork" });
  });
}

/** Opens the store and the catalog, finds the source run, and runs `work` with them, cancelled on signals. */
async function serve(
  program: Command,
  ref: string,
  opts: CatalogChoice & { json?: boolean; io: Io },
  work: (source: RunRecord, options: ServeOptions) => Promise<void>,
): Promise<void> {
  const g = program.opts<Globals>();
  const store: EvidenceStore = await openStore(g.store ?? "file", g.runs ? { runs: g.runs } : {});
  try {
    const source = await findRun(ref, { store });
    await using catalog = await catalogFor(source, opts);
    using cancel = cancelOnSignals();
    await work(source, {
      store,
      ...(catalog ? { catalog } : {}),
      signal: cancel.signal,
      ...(opts.json
        ? {}
        : { onStart: ({ runId, folder }) => opts.io.err(`provr: run ${runId} in ${folder}`) }),
    });
  } finally {
    await store.close();
  }
}

/** The catalog the source's run file needs, as `provr run` opens it. */
async function catalogFor(source: RunRecord, opts: CatalogChoice) {
  const text = await source.eventsText().catch(() => null);
  const first = text ? JSON.parse(text.slice(0, text.indexOf("\n"))) : null;
  const sha = first?.payload;
  if (typeof sha !== "string") return undefined;
  const file = await source.payload(sha).then((b) => RunFile.parse(new TextDecoder().decode(b))).catch(() =>
    null
  );
  return file ? await runCatalog(file, opts) : undefined;
}

async function withPolicy(options: ServeOptions, file: string | undefined): Promise<ServeOptions> {
  return { ...options, policy: await TelemetryPolicy.fromEnvironment(file ? { file } : {}) };
}

/** What every `--json` of these commands prints: the new run, its source, how it ended, what was served. */
function outcomeJson(outcome: ServedOutcome) {
  const run = outcome.run;
  return {
    run_id: run.runId,
    source: outcome.source,
    status: run.status,
    error: run.error ?? null,
    served: outcome.served,
  };
}

function printCompared(
  outcome: ComparedOutcome,
  out: Cli & { json: boolean; verb: "replay" | "fork" },
): void {
  const { io, result, run } = { ...out, run: outcome.run };
  const ok = out.verb === "replay"
    ? outcome.identical && run.status === "completed"
    : run.status === "completed";
  result.code = ok ? 0 : 1;
  if (out.json) {
    io.out(jsonText({
      ...outcomeJson(outcome),
      identical: outcome.identical,
      divergence: outcome.divergence,
      differences: outcome.diff.differences.length + outcome.diff.more,
    }));
    return;
  }
  io.out(run.runId);
  const s = outcome.served;
  const served =
    `${count(s.model_calls, "model call")} and ${count(s.tool_calls, "tool call")} served from ` +
    outcome.source + (s.tools_ran ? `, ${count(s.tools_ran, "tool call")} ran` : ", no tool ran");
  if (out.verb === "replay" && outcome.identical) {
    io.out(`identical: ${run.runId} replays ${outcome.source} step for step (${served})`);
    return;
  }
  const d = outcome.divergence;
  io.out(
    d
      ? `${out.verb === "replay" ? "diverged" : "forked"}: ${served}; first difference at ${placeOf(d)} (${
        d.b?.type ?? d.a?.type
      }, seq ${d.b?.seq ?? d.a?.seq}): ${d.what.replaceAll("_", " ")}`
      : `forked: ${served}; no difference from ${outcome.source}`,
  );
  if (d) io.out(`  ${d.detail}`);
  if (run.status === "failed") {
    io.err(`provr: run ${run.runId} failed: ${whyFailed(run)}`);
  }
}

function printResumed(outcome: ResumeOutcome, out: Cli & { json: boolean }): void {
  const { io, result } = out;
  const run = outcome.run;
  result.code = run.status === "completed" && outcome.check?.ok ? 0 : 1;
  if (out.json) {
    io.out(jsonText({ ...outcomeJson(outcome), check: outcome.check }));
    return;
  }
  io.out(run.runId);
  const s = outcome.served;
  io.out(
    `resumed: ${run.runId} goes on from ${outcome.source}: ${count(s.model_calls, "model call")} and ` +
      `${count(s.tool_calls, "tool call")} served, ${count(s.tools_ran, "tool call")} ran; ` +
      (outcome.check?.ok ? "the two verify as one history" : "the two do not verify as one history"),
  );
  for (const p of outcome.check?.problems ?? []) io.out(`  ${p.message}`);
  if (run.status === "failed") {
    io.err(`provr: run ${run.runId} failed: ${whyFailed(run)}`);
  }
}

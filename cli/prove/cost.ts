/**
 * `prove cost`: the tokens and cost of a run, recomputed from its evidence alone (the price table it pinned and
 * the usage of each model call), beside what the run recorded; or the runs of an experiment, each recomputed,
 * and their total.
 * @module
 */
import type { EvidenceEvent } from "../../lib/provevi/mod.ts";
import { findRun, listRuns } from "../../lib/provevi/runs/mod.ts";
import { parseCost, type RunCost, runCost } from "../../lib/provevi/cost/mod.ts";
import { formatCost } from "../../lib/provevi/cost/mod.ts";
import { readRunEvents } from "../_commands.ts";
import type { Io } from "../_io.ts";
import { jsonText } from "../_json.ts";
import { count, printColumns } from "../_listing.ts";
import { UsageError } from "../_main.ts";
import type { ProveContext } from "./_context.ts";

/** Adds the command to `prove`. */
export function addCost({ program, io, result, withStore }: ProveContext): void {
  program.command("cost")
    .description(
      "Recompute a run's tokens and cost from its evidence (its pinned price table and each model call's usage), " +
        "and check the costs it recorded; or the runs of an experiment and their total.",
    )
    .argument("[run]", "a run ID, latest, the start of a run ID, or a run folder's path")
    .option("--experiment <uri>", "every run that named the experiment (a pinned URI: that version)")
    .option("--json", "print JSON")
    .action((run: string | undefined, opts: { experiment?: string; json?: boolean }) => {
      if ((run === undefined) === (opts.experiment === undefined)) {
        throw new UsageError("give a run, or --experiment URI");
      }
      return withStore(async (store) => {
        if (run !== undefined) {
          const record = await findRun(run, { store });
          const cost = await runCost(await readRunEvents(record), (sha) => record.payload(sha));
          if (opts.json) io.out(jsonText({ run_id: record.runId, ...cost }));
          else printRunCost(record.runId, cost, io);
          if (cost.problems.length) result.code = 1;
          return;
        }
        const { runs } = await listRuns(store, { experiment: opts.experiment! });
        const costs: { run_id: string; cost: RunCost }[] = [];
        for (const r of runs) {
          const record = await findRun(r.run_id, { store });
          costs.push({
            run_id: r.run_id,
            cost: await runCost(await readRunEvents(record), (sha) => record.payload(sha)),
          });
        }
        if (costs.some((c) => c.cost.problems.length)) result.code = 1;
        printExperimentCost(opts.experiment!, costs, { io, json: opts.json ?? false });
      });
    });
}

/** The tokens of a run's calls, as one phrase. */
function tokensText(cost: RunCost): string {
  const t = cost.tokens;
  return `${t.input} in (${t.cacheRead} cache read, ${t.cacheWrite} cache write), ${t.output} out (${t.reasoning} reasoning)`;
}

/** The total of a run, as one phrase: `0.000504 USD`, with the calls the table does not list. */
export function totalText(cost: Pick<RunCost, "table" | "total" | "unpriced" | "calls">): string {
  if (cost.table === null) return "no price table pinned";
  const unpriced = cost.unpriced
    ? ` (${cost.unpriced} of ${cost.calls.length} calls not in the price table)`
    : "";
  return `${cost.total} ${cost.table.currency}${unpriced}`;
}

/**
 * The totals line of `prove show`: the model and tool calls, the tokens, the cost recomputed.
 *
 * @param events The run's events.
 * @param cost The run's cost.
 * @returns One line.
 */
export function totalsLine(events: readonly EvidenceEvent[], cost: RunCost): string {
  const tools = events.filter((e) => e.type === "tool_called").length;
  const failed = cost.calls.filter((c) => c.type !== "model_called").length;
  const calls = `${count(cost.calls.length - failed, "model call")}${failed ? ` (+${failed} failed)` : ""}`;
  return `totals: ${calls}, ${count(tools, "tool call")}; tokens ${tokensText(cost)}; cost ${
    totalText(cost)
  }`;
}

function printRunCost(runId: string, cost: RunCost, io: Io): void {
  if (cost.calls.length) {
    printColumns([
      ["SEQ", "MODEL", "PRICED AS", "INPUT", "CACHE READ", "CACHE WRITE", "OUTPUT", "REASONING", "COST"],
      ...cost.calls.map((c) => [
        String(c.seq),
        `${c.model ?? "-"}${c.type === "model_called" ? "" : " (failed)"}`,
        c.priced_as ?? "-",
        String(c.usage.input),
        String(c.usage.cacheRead),
        String(c.usage.cacheWrite),
        String(c.usage.output),
        String(c.usage.reasoning),
        c.cost ?? "-",
      ]),
    ], io);
  }
  const table = cost.table
    ? `; price table ${cost.table.sha256.slice(0, 12)} (${cost.table.source ?? "?"})`
    : "";
  io.out(
    `${runId}: ${count(cost.calls.length, "model call")}, tokens ${tokensText(cost)}, cost ${
      totalText(cost)
    }${table}`,
  );
  const amount = cost.recorded?.amount;
  if (cost.problems.length) {
    for (const p of cost.problems) io.out(`  problem: ${p.message}`);
  } else if (typeof amount === "string") {
    io.out(
      `${runId}: the recorded cost ${amount} and each call's recorded cost agree with the recomputation`,
    );
  }
}

function printExperimentCost(
  experiment: string,
  costs: { run_id: string; cost: RunCost }[],
  out: { io: Io; json: boolean },
): void {
  const total = costs.reduce((sum, c) => sum + (parseCost(c.cost.total) ?? 0n), 0n);
  const unpriced = costs.reduce(
    (n, c) => n + (c.cost.table === null ? c.cost.calls.length : c.cost.unpriced),
    0,
  );
  if (out.json) {
    out.io.out(jsonText({ experiment, total: formatCost(total), unpriced_calls: unpriced, runs: costs }));
    return;
  }
  if (costs.length === 0) return out.io.err(`no runs named ${experiment}`);
  printColumns([
    ["RUN", "CALLS", "INPUT", "OUTPUT", "COST"],
    ...costs.map(({ run_id, cost }) => [
      run_id,
      String(cost.calls.length),
      String(cost.tokens.input),
      String(cost.tokens.output),
      cost.table === null ? "-" : cost.total,
    ]),
  ], out.io);
  const note = unpriced ? ` (${unpriced} calls not priced)` : "";
  out.io.out(`${experiment}: ${costs.length} runs, cost ${formatCost(total)}${note}`);
  for (const { run_id, cost } of costs) {
    for (const p of cost.problems) out.io.out(`  ${run_id}: problem: ${p.message}`);
  }
}

/**
 * `prove runs`: the runs of a store as a table (run ID, status, start, duration, agent, model, tokens,
 * cost, experiment), newest first (`--oldest-first`: the seed's order), filtered by status, start, agent class or
 * experiment; or the runs that read a URI.
 * @module
 */
import type { EvidenceStore, RunListStatus, RunRow } from "../../lib/provevi/mod.ts";
import { listRuns, RUN_LIST_STATUSES } from "../../lib/provevi/runs/mod.ts";
import { questionsOf } from "../../lib/provevi/store/mod.ts";
import { parseCost } from "../../lib/provevi/cost/mod.ts";
import { formatCost } from "../../lib/provevi/cost/mod.ts";
import type { Io } from "../_io.ts";
import { printColumns, printRuns } from "../_listing.ts";
import { UsageError } from "../_main.ts";
import type { ProveContext } from "./_context.ts";
import { jsonText } from "../_json.ts";

/** How many runs `prove runs` shows when `--limit` is not given. */
export const DEFAULT_LIMIT = 50;

interface RunsOptions {
  reading?: string;
  experiment?: string;
  agent?: string;
  version?: string;
  status?: string;
  since?: string;
  limit?: string;
  offset?: string;
  oldestFirst?: boolean;
  json?: boolean;
}

/** Adds the command to `prove`. */
export function addRuns({ program, io, withStore }: ProveContext): void {
  program.command("runs")
    .description(
      "List the runs in the store, newest first: ID, status, start, duration, agent, model, tokens, cost, experiment.",
    )
    .option("--status <status>", `only runs of this status: ${RUN_LIST_STATUSES.join(", ")}`)
    .option(
      "--since <time>",
      "only runs that started since a time (2026-11-30, 2026-11-30T14:00:00Z) or 30m, 2h, 7d ago",
    )
    .option("--agent <name>", "only the runs of an agent class (org/domain/env/name, or its name)")
    .option(
      "--experiment <uri>",
      "only the runs that named the experiment, by its URI or its name (q3, credit/q3); a pinned URI: that version",
    )
    .option("--limit <n>", `show at most n runs (default ${DEFAULT_LIMIT})`)
    .option("--offset <n>", "skip the first n runs of the list")
    .option("--oldest-first", "list the oldest run first (the page is then the oldest runs)")
    .option("--reading <uri>", "the runs that staged the URI as an input (or a pinned version of it); sqlite")
    .option(
      "--version <sha256>",
      "with --agent: one version of the class, by its SHA-256 or the start of it; sqlite",
    )
    .option("--json", "print JSON")
    .action((opts: RunsOptions) => withStore((store) => listAndPrint(store, opts, io)));
}

/** The flags that cannot go together, or a value that is not one, as the command line's error. */
function checkFlags(opts: RunsOptions): void {
  if (opts.reading !== undefined && (opts.agent !== undefined || opts.experiment !== undefined)) {
    throw new UsageError("give one of --reading, --experiment and --agent");
  }
  if (opts.version !== undefined && opts.agent === undefined) {
    throw new UsageError("--version needs --agent");
  }
  if (opts.version !== undefined && !/^[0-9a-f]{1,64}$/.test(opts.version)) {
    throw new UsageError(
      `--version ${
        JSON.stringify(opts.version)
      } is not an agent version: give its SHA-256 or the start of it, in lowercase hex digits`,
    );
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
  if (opts.status !== undefined && !RUN_LIST_STATUSES.includes(opts.status as RunListStatus)) {
    throw new UsageError(
      `--status ${opts.status} is not a status: give one of ${RUN_LIST_STATUSES.join(", ")}`,
    );
  }
}

/** Lists the runs the flags ask for, and prints them. */
async function listAndPrint(store: EvidenceStore, opts: RunsOptions, io: Io): Promise<void> {
  checkFlags(opts);
  const json = opts.json ?? false;
  if (opts.reading !== undefined) {
    return printRuns(await questionsOf(store, "prove runs --reading").runsReading(opts.reading), io, json);
  }
  if (opts.version !== undefined) {
    const runs = await questionsOf(store, "prove runs --agent --version").runsOfAgent(opts.agent!, {
      version: opts.version,
    });
    return printRuns(runs, io, json);
  }
  const limit = count("--limit", opts.limit) ?? DEFAULT_LIMIT;
  const offset = count("--offset", opts.offset) ?? 0;
  const list = await listRuns(store, {
    ...(opts.status !== undefined ? { status: opts.status as RunListStatus } : {}),
    ...(opts.since !== undefined ? { since: sinceTime(opts.since) } : {}),
    ...(opts.agent !== undefined ? { agent: opts.agent } : {}),
    ...(opts.experiment !== undefined ? { experiment: opts.experiment } : {}),
    limit,
    offset,
    ...(opts.oldestFirst ? { oldestFirst: true } : {}),
  });
  if (json) return io.out(jsonText(list.runs));
  printRunTable(list.runs, io);
  if (opts.experiment !== undefined) printCostTotal(list.runs, io);
  const shown = offset + list.runs.length;
  if (shown < list.total) {
    io.err(
      `(${list.runs.length} of ${list.total} runs shown; --limit ${list.total} shows all, --offset ${shown} the next)`,
    );
  }
}

function count(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text)) {
    throw new UsageError(`${flag} ${text} is not a count: give a whole number, 0 or more`);
  }
  return Number(text);
}

/**
 * The time that `--since` names: `30s`, `30m`, `2h`, `7d` or `2w` ago, or a date or time (UTC unless it says).
 * @throws UsageError for anything else.
 */
export function sinceTime(text: string, now: Date = new Date()): string {
  const ago = text.match(/^(\d+)([smhdw])$/);
  if (ago) {
    const unit = { s: 1, m: 60, h: 3600, d: 86400, w: 604800 }[ago[2] as "s" | "m" | "h" | "d" | "w"];
    return new Date(now.getTime() - Number(ago[1]) * unit * 1000).toISOString();
  }
  const utc = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?$/.test(text)
    ? (text.length === 10 ? `${text}T00:00:00Z` : `${text}Z`)
    : text;
  const time = Date.parse(utc);
  if (Number.isNaN(time) || !/^\d{4}-/.test(text)) {
    throw new UsageError(
      `--since ${text} is not a time: give a date (2026-11-30), a time (2026-11-30T14:00:00Z) or 30m, 2h, 7d`,
    );
  }
  return new Date(time).toISOString();
}

/** A duration as a person reads it: 850ms, 4.2s, 3m04s, 2h05m. */
export function durationText(ms: number | null): string {
  if (ms === null) return "-";
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.floor(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

/** The status as the table shows it: a cut run says where it was cut. */
export function statusText(row: Pick<RunRow, "status" | "last_seq">): string {
  return row.status === "cut" && row.last_seq !== null ? `cut at seq ${row.last_seq}` : row.status;
}

/** The total the runs shown recorded, for `prove runs --experiment` (`prove cost --experiment` recomputes it). */
function printCostTotal(runs: RunRow[], io: Io): void {
  const priced = runs.filter((r) => r.cost !== null);
  if (priced.length === 0) return;
  const total = priced.reduce((sum, r) => sum + (parseCost(r.cost) ?? 0n), 0n);
  io.out(
    `total cost of the ${runs.length} runs shown: ${
      formatCost(total)
    } (${priced.length} of them recorded a cost)`,
  );
}

/** Prints runs as the table of `prove runs`. */
export function printRunTable(runs: RunRow[], io: Io): void {
  if (runs.length === 0) return io.err("no runs");
  printColumns([
    ["RUN", "STATUS", "STARTED", "DURATION", "AGENT", "MODEL", "TOKENS", "COST", "EXPERIMENT"],
    ...runs.map((r) => [
      r.run_id,
      statusText(r),
      r.started_at === null ? "-" : r.started_at.slice(0, 19).replace("T", " "),
      durationText(r.duration_ms),
      r.agent === null ? "-" : r.agent.slice(r.agent.lastIndexOf("/") + 1),
      r.model ?? "-",
      r.tokens === null ? "-" : String(r.tokens),
      r.cost ?? "-",
      r.experiment ?? "-",
    ]),
  ], io);
}

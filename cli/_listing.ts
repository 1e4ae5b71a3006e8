/**
 * The listing commands of `prove` over an indexed store: runs by input, experiment or agent, experiments,
 * agents, access, assessments. Each prints aligned columns, or JSON with `--json`.
 * @module
 */
import type {
  AccessEntry,
  AgentDetail,
  AgentSummary,
  Assessment,
  Experiment,
  ExperimentDetail,
  ExperimentSummary,
  RunSummary,
} from "../lib/provevi/mod.ts";
import type { Io } from "./_io.ts";
import { jsonText } from "./_json.ts";

/**
 * Prints rows as aligned columns, one line each; the last column is not padded.
 *
 * @param rows The cells of each row.
 * @param io Where to print.
 */
export function printColumns(rows: string[][], io: Io): void {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  for (const row of rows) {
    io.out(
      row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ").trimEnd(),
    );
  }
}

const short = (hash: string | null) => (hash ? hash.slice(0, 12) : "-");

/** Prints runs: ID, status, agent class, agent version, experiment (and the input read, when given). */
export function printRuns(runs: (RunSummary & { uri?: string })[], io: Io, json: boolean): void {
  if (json) return io.out(jsonText(runs));
  printColumns(
    runs.map((r) => [
      r.run_id,
      r.status,
      r.agent ?? "-",
      short(r.agent_version),
      ...(r.uri !== undefined ? [r.uri] : [r.experiment_pin ?? r.experiment ?? "-"]),
    ]),
    io,
  );
}

/** Prints the experiments with their numbers of versions and runs. */
export function printExperiments(list: ExperimentSummary[], io: Io, json: boolean): void {
  if (json) return io.out(jsonText(list));
  printColumns([
    ["EXPERIMENT", "VERSIONS", "RUNS", "FIRST RUN"],
    ...list.map((e) => [e.experiment, String(e.versions), String(e.runs), e.first_run]),
  ], io);
}

/** The newest version of an experiment in the catalog, as `prove experiment show --config` reads it. */
export interface NewestExperiment {
  /** The experiment's URI at its newest commit. */
  pin: string;
  /** The SHA-256 of its `experiment.yaml`. */
  sha256: string;
  /** What the file holds. */
  experiment: Experiment;
}

/**
 * Prints an experiment's versions, each with its runs, its assessments (of the whole and of each version), and
 * the newest version in the catalog when it was read (`--json`: as `newest`).
 */
export function printExperiment(
  detail: Omit<ExperimentDetail, "first_run"> & { first_run: string | null; assessments?: Assessment[] },
  io: Io,
  json: boolean,
  newest?: NewestExperiment,
): void {
  if (json) return io.out(jsonText(newest === undefined ? detail : { ...detail, newest }));
  io.out(
    detail.first_run === null
      ? `${detail.experiment} (no run in the store named it)`
      : `${detail.experiment} (first run ${detail.first_run})`,
  );
  const rows: string[][] = [];
  for (const v of detail.versions) rows.push([v.pin, short(v.sha256), v.runs.join(" ")]);
  if (detail.unpinned_runs.length) rows.push(["(no pin)", "-", detail.unpinned_runs.join(" ")]);
  printColumns(rows.map((r) => ["  " + r[0]!, r[1]!, r[2]!]), io);
  if (detail.assessments?.length) {
    io.out("assessments:");
    printAssessments(detail.assessments, io);
  }
  if (newest === undefined) return;
  const used = detail.versions.some((v) => v.pin === newest.pin);
  io.out(
    `newest in the catalog: ${newest.pin} (sha256 ${short(newest.sha256)}${
      used ? "" : ", no run of the store used it"
    })`,
  );
  io.out(`  ${newest.experiment.kind}: ${newest.experiment.description}`);
}

/** Prints the agent classes with their numbers of versions and runs. */
export function printAgents(list: AgentSummary[], io: Io, json: boolean): void {
  if (json) return io.out(jsonText(list));
  printColumns([
    ["AGENT", "VERSIONS", "RUNS", "FIRST RUN"],
    ...list.map((a) => [a.agent, String(a.versions), String(a.runs), a.first_run]),
  ], io);
}

/** Prints an agent class's versions, each with its settings and runs. */
export function printAgent(detail: AgentDetail, io: Io, json: boolean): void {
  if (json) return io.out(jsonText(detail));
  io.out(`${detail.agent} (first run ${detail.first_run})`);
  printColumns(
    detail.versions.map((v) => [
      "  " + short(v.version),
      v.backend ?? "-",
      v.model ?? "-",
      `tools=${JSON.stringify(v.tools)}`,
      `limits=${JSON.stringify(v.limits)}`,
      v.runs.join(" "),
    ]),
    io,
  );
}

/** Prints a run's grants and refusals in order. */
export function printAccess(runId: string, list: AccessEntry[], io: Io, json: boolean): void {
  if (json) return io.out(jsonText({ run_id: runId, access: list }));
  if (!list.length) return io.out(`${runId}: no grants and no refusals`);
  printColumns(
    list.map((a) => [
      String(a.seq).padStart(4),
      a.time,
      a.decision,
      a.uri,
      a.mode ?? "-",
      a.reason ?? (a.expires_at ? `expires ${a.expires_at}` : ""),
    ]),
    io,
  );
}

/**
 * Prints assessments, one line each: what they judge (the run, an event, a span, or an experiment or one
 * version of it), name, value, source and rationale.
 */
export function printAssessments(list: Assessment[], io: Io): void {
  printColumns(
    list.map((a) => [
      typeof a.experiment === "string"
        ? `experiment ${a.experiment}`
        : a.seq !== null
        ? `event ${a.seq}`
        : a.span_id !== null
        ? `span ${a.span_id}`
        : "run",
      a.name,
      JSON.stringify(a.value),
      a.source ?? "-",
      a.rationale ?? "",
    ]),
    io,
  );
}

/** A duration as a person reads it: 850µs, 24.8ms, 1.52s, 3m04s. */
export function spanDuration(ms: number | null): string {
  if (ms === null) return "-";
  if (ms < 1) return `${Math.round(ms * 1000)}µs`;
  if (ms < 100) return `${ms.toFixed(1)}ms`;
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(2)}s`;
  const s = Math.floor(ms / 1000);
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
}

/** A count and its noun, plural when it is not one: "1 model call", "2 model calls". */
export function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

/**
 * `prove mlflow`: copies a sealed run into MLflow, at the place that MLFLOW_TRACKING_URI names (or the sqlite
 * store's own file) and the telemetry policy approves.
 * @module
 */
import { TelemetryPolicy } from "../../lib/provevi/telemetry/mod.ts";
import type { CopyResult } from "../../lib/provevi/mlflow/mod.ts";
import type { Io } from "../_io.ts";
import type { ProveContext } from "./_context.ts";
import { jsonText } from "../_json.ts";

/** The lines `prove mlflow` prints for a copy. */
export function copyLines(result: CopyResult): string[] {
  const lines = [
    `${result.runId}: copied to MLflow at ${result.place}, destination ${result.destination}, level ${result.level}`,
    `  experiment ${result.experimentId}, MLflow run ${result.mlflowRunId}, trace ${result.traceId} with ${result.spans} span${
      result.spans === 1 ? "" : "s"
    }`,
  ];
  for (const id of result.deleted) lines.push(`  deleted the earlier copy, MLflow run ${id}`);
  if (result.purgeProblem) lines.push(`  ${result.purgeProblem}`);
  return lines;
}

/** Adds the command to `prove`. */
export function addMlflow({ program, io, withStore }: ProveContext): void {
  program.command("mlflow")
    .description(
      "Copy a sealed run into MLflow, at the place that MLFLOW_TRACKING_URI names (or the sqlite store's own file), if the telemetry policy approves it.",
    )
    .argument("<run>", "a run ID in the store")
    .option("--policy <file>", "the telemetry policy (default: the file PROVRUN_TELEMETRY_POLICY names)")
    .option("--json", "print JSON")
    .action((run: string, opts: { policy?: string; json?: boolean }) =>
      withStore(async (store) => {
        const policy = await TelemetryPolicy.fromEnvironment(opts.policy ? { file: opts.policy } : {});
        // The MLflow client and its OTLP encoder are imported by `prove mlflow` only.
        const { copyRun } = await import("../../lib/provevi/mlflow/mod.ts");
        const result = await copyRun(store, run, policy, { onProgress: progressOn(io) });
        if (io.terminal) io.progress("");
        if (opts.json) io.out(jsonText(result));
        else for (const line of copyLines(result)) io.out(line);
      })
    );
}

function progressOn(io: Io): (stage: string) => void {
  return (stage) => {
    if (io.terminal) io.progress(`prove mlflow: ${stage}…`);
  };
}

/**
 * What replay, fork and resume share: the options of a run that serves another run's evidence, the run itself
 * (`runFile` with a {@linkcode ReplayPart}), and the checks before it that refuse in one line (a run file or a
 * tools folder no longer where it was).
 * @module
 */
import { isAbsolute, resolve } from "node:path";
import type { Catalog } from "../../provcat/mod.ts";
import type { EvidenceStore, FeedItem } from "../../provevi/mod.ts";
import { diffRuns, type RunDiff } from "../../provevi/diff/diff_runs.ts";
import type { RunRecord } from "../../provevi/evidence/record.ts";
import type { Divergence } from "../../provevi/diff/divergence.ts";
import { TelemetryPolicy } from "../../provevi/telemetry/policy.ts";
import type { RunFile } from "../run/run_file.ts";
import { runFile, type RunOutcome } from "../runner/run.ts";
import type { ReplayPart } from "./replay_part.ts";
import { RunNotReplayable } from "./replay_errors.ts";

/** Options of a run that serves another run's evidence. */
export interface ServeOptions {
  /** The store that holds the source run; the new run is written there too. */
  store: EvidenceStore;
  /** The catalog that stages the inputs (and checks the source's bundle and experiment). */
  catalog?: Catalog;
  /**
   * The telemetry policy of a fork or a resume (as `runFile` takes it). A replay approves nothing, whatever is
   * given, so that it sends nothing anywhere.
   */
  policy?: TelemetryPolicy;
  /** Reads variables (the live model's key in a fork or a resume). */
  env?: (name: string) => string | undefined;
  /** Cancels the run: it ends with `run_failed`, sealed. */
  signal?: AbortSignal;
  /** Called once the new run has its ID and folder. */
  onStart?: (run: { runId: string; folder: string }) => void;
  /** Called with each event as it is written. */
  onEvent?: (type: string, seq: number, event: { data: Record<string, unknown>; time: string }) => void;
  /** Called with each piece of the model's text. */
  onText?: (piece: string) => void;
  /** Called with each item of the run's live feed. */
  onFeed?: (item: FeedItem) => void;
  /** The private key file that signs the new run's seal. */
  signKey?: string;
  /** The time the run starts, for its ID. */
  now?: Date;
}

/** What a replay, a fork or a resume gives. */
export interface ServedOutcome {
  /** The new run. */
  run: RunOutcome;
  /** The source run's ID. */
  source: string;
  /** How many model calls and tool calls were served from the source, and how many tool calls ran. */
  served: { model_calls: number; tool_calls: number; tools_ran: number };
}

/** What a replay or a fork gives: also its difference from the source. */
export interface ComparedOutcome extends ServedOutcome {
  /** True when the new run's requests and results match the source's step for step, and all else compared. */
  identical: boolean;
  /** The first divergence from the source, or null. */
  divergence: Divergence | null;
  /** The whole difference from the source. */
  diff: RunDiff;
}

/**
 * Runs a run file with a part that serves a source run.
 *
 * @param file The run file.
 * @param options The options, the part, and whether the run is a replay (which approves no telemetry).
 * @returns The new run's outcome.
 */
export async function runServed(
  file: RunFile,
  options: ServeOptions & { part: ReplayPart; replay: boolean },
): Promise<RunOutcome> {
  await checkToolsFolder(file);
  return await runFile(file, {
    store: options.store,
    ...(options.catalog ? { catalog: options.catalog } : {}),
    ...(options.replay
      ? { policy: TelemetryPolicy.denyAll() }
      : options.policy
      ? { policy: options.policy }
      : {}),
    ...(options.env ? { env: options.env } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onStart ? { onStart: options.onStart } : {}),
    ...(options.onEvent ? { onEvent: options.onEvent } : {}),
    ...(options.onText ? { onText: options.onText } : {}),
    ...(options.onFeed ? { onFeed: options.onFeed } : {}),
    ...(options.signKey ? { signKey: options.signKey } : {}),
    ...(options.now ? { now: options.now } : {}),
    parts: [options.part],
  });
}

/**
 * Runs a run file with a part that serves a source run, then compares the new run with the source step by step:
 * what a replay and a fork give.
 *
 * @param file The run file.
 * @param options The options, the part, whether the run is a replay, and the source run as its store read it.
 * @returns The new run, what was served, and its difference from the source.
 */
export async function runCompared(
  file: RunFile,
  options: ServeOptions & { part: ReplayPart; replay: boolean; source: RunRecord },
): Promise<ComparedOutcome> {
  const { part, source, ...serve } = options;
  const run = await runServed(file, { ...serve, part });
  const diff = await diffRuns(source, await options.store.readRun(run.runId));
  return {
    run,
    source: source.runId,
    served: part.counts,
    identical: diff.identical,
    divergence: diff.first,
    diff,
  };
}

/** A run file's tools folder must be where it was: a replay hashes its modules, a fork and a resume load them. */
async function checkToolsFolder(file: RunFile): Promise<void> {
  const folder = file.data.agent.tools_folder;
  if (!folder || file.data.agent.backend !== "agent") return;
  const path = isAbsolute(folder) ? folder : resolve(file.folder, folder);
  const info = await Deno.stat(path).catch(() => null);
  if (!info?.isDirectory) {
    throw new RunNotReplayable(
      `the tools folder ${path} (agent.tools_folder of ${
        file.path ?? "the run file"
      }) is no longer where it was`,
    );
  }
}

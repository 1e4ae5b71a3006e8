/**
 * `diffRuns`: the first divergence of two recorded runs and every difference between them, aligned step by step
 * (the setup, each model call with the tool calls it asked for, the end): settings, inputs, tools, prompts,
 * requests, model answers, tool calls, arguments and results, outputs, tokens and how each run ended. It is a
 * reading of evidence, not a check of it (`prove verify` checks the chain and the payloads): the start the two runs
 * share is found line by line without parsing it, the rest is compared by hashes and facts, and only the payloads
 * of the first divergences (8 by default) are read, to say where in them the two runs differ.
 * @module
 */
import { parseJson } from "../evidence/json_depth.ts";
import type { RunRecord } from "../evidence/record.ts";
import { compareEnd, compareSetup, compareSteps, type Sides } from "./_diff_phases.ts";
import { type DiffWhat, type Divergence, Divergences } from "./divergence.ts";
import {
  eventsTextOf,
  linesOf,
  type RecordStatus,
  type RunSteps,
  sharedStart,
  stepsFrom,
} from "./run_steps.ts";

/** One run, as the diff sums it up. */
export interface DiffSide {
  run_id: string;
  /** `completed`, `failed`, or `cut` (no end recorded). */
  status: RecordStatus;
  /** The error that failed the run (`name: message`), or null. */
  error: string | null;
  /** The model calls. */
  steps: number;
  /** The events. */
  events: number;
  /** The tokens of its model calls, summed. */
  tokens: { input: number; output: number };
}

/** The difference of two runs. */
export interface RunDiff {
  a: DiffSide;
  b: DiffSide;
  /** True when nothing compared differs. */
  identical: boolean;
  /** The first divergence, in the order of the runs, or null. */
  first: Divergence | null;
  /** Every divergence, in order, up to the limit. */
  differences: Divergence[];
  /** How many divergences were found past the limit. */
  more: number;
  /** How many divergences of each kind. */
  counts: Partial<Record<DiffWhat, number>>;
}

/** Options of {@linkcode diffRuns}. */
export interface DiffOptions {
  /** How many divergences to list (200 by default); the rest are counted. */
  limit?: number;
  /** How many of the first divergences read their payloads to say where they differ (8 by default). */
  refine?: number;
}

/**
 * Compares two recorded runs.
 *
 * @param a The first run, as a store reads it back.
 * @param b The second run.
 * @param options How many divergences to list.
 * @returns The first divergence, every divergence and a summary of each run.
 * @throws EvidenceReadError when a run has no events or a whole line of its events is not JSON.
 * @example
 * ```ts
 * import { diffRuns, FileStore } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * await using store = new FileStore({ runs: "fixtures/runs" });
 * const run = await store.readRun("run-20261129T120000Z-0badc0de");
 * const diff = await diffRuns(run, run);
 * assert.equal(diff.identical, true);
 * assert.deepEqual(diff.differences, []);
 * ```
 */
export async function diffRuns(a: RunRecord, b: RunRecord, options: DiffOptions = {}): Promise<RunDiff> {
  const [ta, tb] = await Promise.all([eventsTextOf(a), eventsTextOf(b)]);
  const [la, lb] = [linesOf(ta), linesOf(tb)];
  // The start the two runs share says the same in both: it is compared line by line, and not parsed.
  const shared = sharedStart(la.lines, lb.lines);
  const sa = stepsFrom(la.lines, { runId: a.runId, cutLine: la.cutLine, shared });
  const sb = stepsFrom(lb.lines, { runId: b.runId, cutLine: lb.cutLine, shared });
  return await diffSteps(sa, sb, { ...options, records: { a, b } });
}

/**
 * Compares two runs already read in steps.
 *
 * @param a The first run's steps.
 * @param b The second's.
 * @param options How many divergences to list, and the records that give their payloads.
 * @returns As {@linkcode diffRuns}.
 */
export async function diffSteps(
  a: RunSteps,
  b: RunSteps,
  options: DiffOptions & { records: { a: RunRecord; b: RunRecord } },
): Promise<RunDiff> {
  const out = new Divergences(options.limit ?? 200, options.refine ?? 8);
  const read = async (side: "a" | "b", sha256: string): Promise<unknown> => {
    let text: string;
    try {
      text = new TextDecoder().decode(await options.records[side].payload(sha256));
    } catch (error) {
      return `(payload ${sha256.slice(0, 12)}… cannot be read: ${(error as Error).message})`;
    }
    // A payload is the run's to write: one nested past what a reader walks, or too heavy parsed, is compared
    // as its text (each comparison walks a value with a call a level, and 100,000 levels ran out of stack).
    try {
      return parseJson(text, { weighed: true });
    } catch {
      return text;
    }
  };
  const sides: Sides = { a, b, read, out };
  await compareSetup(sides);
  await compareSteps(sides);
  const [sa, sb] = [sideOf(a), sideOf(b)];
  compareEnd(sides, {
    a: [sa.tokens.input, sa.tokens.output],
    b: [sb.tokens.input, sb.tokens.output],
  });
  return {
    a: sa,
    b: sb,
    identical: out.none,
    first: out.list[0] ?? null,
    differences: out.list,
    more: out.more,
    counts: out.counts,
  };
}

function sideOf(r: RunSteps): DiffSide {
  let input = r.shared.tokens.input;
  let output = r.shared.tokens.output;
  for (const step of r.steps) {
    const d = step.call.data;
    input += typeof d.input_tokens === "number" ? d.input_tokens : 0;
    output += typeof d.output_tokens === "number" ? d.output_tokens : 0;
  }
  const last = r.events.at(-1);
  return {
    run_id: r.runId,
    status: r.status,
    error: r.status === "failed" && last ? `${last.data.error}: ${last.data.message}` : null,
    steps: r.shared.steps + r.steps.length,
    events: r.lineCount,
    tokens: { input, output },
  };
}

/**
 * One side of a comparison: a run's verdict, outcome, settings, inputs, answers, calls, tokens and cost, from the
 * first page of its run page's data.
 * @module
 */
import type { RunView } from "./run_view.ts";

/** One side of a comparison. */
export type CompareSide =
  & Pick<RunView, "run_id" | "status" | "level" | "note" | "verdict" | "settings" | "inputs" | "outputs">
  & {
    /** Each model call's answer, in order, on the first page of the run's events, each cut as the page cuts it. */
    answers: { seq: number; text: string }[];
    /** The token counts of the run's model calls, summed, when the level shows them. */
    tokens: { input: number; output: number } | null;
    /** The run's length in microseconds. */
    duration_us: number;
    /** The run's names, calls, errors and cost, as its page shows them. */
    facts: RunView["facts"];
    failure: RunView["failure"];
    model_calls: number;
    tool_calls: number;
    errors: number;
    cost: RunView["summary"]["cost"];
  };

/**
 * One side from the first page of a run.
 *
 * @param view The run page's data (its first page).
 * @returns The side.
 */
export function sideOf(view: RunView): CompareSide {
  return {
    run_id: view.run_id,
    status: view.status,
    level: view.level,
    note: view.note,
    verdict: view.verdict,
    settings: view.settings,
    inputs: view.inputs,
    outputs: view.outputs,
    answers: view.events.flatMap((e) => (e.answer !== undefined ? [{ seq: e.seq, text: e.answer }] : [])),
    tokens: view.summary.tokens,
    duration_us: view.spans[0]?.end_us ?? 0,
    facts: view.facts,
    failure: view.failure,
    model_calls: view.summary.model_calls,
    tool_calls: view.summary.tool_calls,
    errors: view.summary.errors,
    cost: view.summary.cost,
  };
}

/**
 * A run's events as steps, the unit in which two runs are compared and a recorded run is served again: the
 * setup (everything before the first model call), one step per model call (the call, then the tool calls it
 * asked for), and the end (the history, the outputs, the run's end). The events are read as recorded, line by
 * line, with the chain checked; the payloads are not read here.
 * @module
 */
import { EvidenceReadError } from "../evidence/errors.ts";
import type { EvidenceEvent } from "../evidence/event.ts";
import { sha256Hex } from "../evidence/hash.ts";
import type { RunRecord } from "../evidence/record.ts";

/** One model call and the tool calls it asked for. */
export interface ModelStep {
  /** The step's number, from 1: the nth model call of the run. */
  readonly n: number;
  /** The call: `model_called`, or the `step_failed` of a call that failed. */
  readonly call: EvidenceEvent;
  /** The `tool_called` events of the calls this step's answer asked for, in the order they were recorded. */
  readonly tools: EvidenceEvent[];
  /** Any other event between this call and the next (a note, a blocked attempt, a span). */
  readonly others: EvidenceEvent[];
}

/** How a run's record ends. */
export type RecordStatus = "completed" | "failed" | "cut";

/** A run's events, in steps. */
export interface RunSteps {
  /** The run's ID. */
  readonly runId: string;
  /** Every event that could be read, in order. */
  readonly events: EvidenceEvent[];
  /** The events before the first model call: run_created, the inputs, the sandbox, the prompt. */
  readonly setup: EvidenceEvent[];
  /** The model calls, each with its tool calls. */
  readonly steps: ModelStep[];
  /** The events after the last step: the history, the sandbox's end, the inputs' re-check, outputs, the end. */
  readonly end: EvidenceEvent[];
  /** `completed` or `failed` as the last event says, or `cut` when the run has not ended. */
  readonly status: RecordStatus;
  /** The first line whose `prev` is not the hash of the line before it (from 1), or null when the chain holds. */
  readonly chainBreak: number | null;
  /** True when the last line was cut part way (no newline): it is left out. */
  readonly cutLine: boolean;
}

/** The event types that end a run's record, after its last model step. */
const END_TYPES = new Set([
  "trace_imported",
  "sandbox_completed",
  "input_verified",
  "output_artifact_created",
  "run_completed",
  "run_failed",
]);

/**
 * True for the event of a model call: `model_called`, or the `step_failed` of a model call.
 *
 * @param event An event.
 * @returns Whether it records a model call.
 * @example
 * ```ts
 * import { isModelCall } from "./run_steps.ts";
 * isModelCall({ type: "step_failed", data: { step: "model_called" } }); // true
 * ```
 */
export function isModelCall(event: Pick<EvidenceEvent, "type" | "data">): boolean {
  return event.type === "model_called" ||
    (event.type === "step_failed" && event.data.step === "model_called");
}

/**
 * The IDs of the tool calls that a model call's answer asked for, from its `data.tool_calls`.
 *
 * @param event A model call's event.
 * @returns The call IDs, in order.
 */
export function askedCallIds(event: Pick<EvidenceEvent, "data">): string[] {
  const calls = event.data.tool_calls;
  if (!Array.isArray(calls)) return [];
  return calls.flatMap((c) =>
    typeof c === "object" && c !== null && !Array.isArray(c) && typeof c.id === "string" ? [c.id] : []
  );
}

/**
 * Reads the events of a run's record: each whole line parsed, its chain checked; a last line cut part way (a
 * run killed while it wrote) is left out.
 *
 * @param text The text of `events.jsonl`.
 * @param runId The run, for the error's message.
 * @returns The events, the first break of the chain (a line, from 1) and whether the last line was cut.
 * @throws EvidenceReadError when a whole line is not JSON.
 */
export function readRecordLines(
  text: string,
  runId: string,
): { events: EvidenceEvent[]; chainBreak: number | null; cutLine: boolean } {
  const lines = text.split("\n");
  const cutLine = lines.at(-1) !== "";
  lines.pop(); // the empty text after the last newline, or the line cut part way
  const events: EvidenceEvent[] = new Array(lines.length);
  let chainBreak: number | null = null;
  let before: string | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    let event: EvidenceEvent;
    try {
      event = JSON.parse(line);
    } catch (error) {
      throw new EvidenceReadError(
        `run "${runId}": events.jsonl line ${
          i + 1
        } is not JSON; run prove verify ${runId} to see what is wrong`,
        { cause: error },
      );
    }
    if (chainBreak === null && (event?.prev ?? null) !== before) chainBreak = i + 1;
    before = sha256Hex(line);
    events[i] = event;
  }
  return { events, chainBreak, cutLine };
}

/**
 * Reads a run's events and groups them in steps.
 *
 * @param record The run, as a store reads it back.
 * @returns The run's steps.
 * @throws EvidenceReadError when the run has no events or a whole line is not JSON.
 * @example
 * ```ts
 * import { FileStore } from "../store/file_store.ts";
 * import { readRunSteps } from "./run_steps.ts";
 * const store = new FileStore({ runs: "fixtures/runs" });
 * const run = await readRunSteps(await store.readRun("run-20261129T120000Z-0badc0de"));
 * run.steps.length; // 1
 * ```
 */
export async function readRunSteps(record: RunRecord): Promise<RunSteps> {
  const text = await record.eventsText().catch((error) => {
    throw new EvidenceReadError(`cannot read the events of run "${record.runId}": ${error.message}`, {
      cause: error,
    });
  });
  if (text === null || text === "") {
    throw new EvidenceReadError(`run "${record.runId}" has no events (evidence/events.jsonl)`);
  }
  const read = readRecordLines(text, record.runId);
  return { runId: record.runId, ...read, ...stepsOf(read.events) };
}

/**
 * Groups a run's events in steps. A tool call belongs to the step whose answer asked for it (by call ID), so a
 * streamed run's output tool, recorded before its model call, is in its step; a tool call that no answer
 * names belongs to the step before it.
 *
 * @param events The run's events, in order.
 * @returns The setup, the steps, the end and the status.
 */
export function stepsOf(
  events: readonly EvidenceEvent[],
): Pick<RunSteps, "setup" | "steps" | "end" | "status"> {
  const steps: ModelStep[] = [];
  const stepOfCall = new Map<string, ModelStep>();
  for (const e of events) {
    if (!isModelCall(e)) continue;
    const step: ModelStep = { n: steps.length + 1, call: e, tools: [], others: [] };
    steps.push(step);
    for (const id of askedCallIds(e)) if (!stepOfCall.has(id)) stepOfCall.set(id, step);
  }
  const setup: EvidenceEvent[] = [];
  const end: EvidenceEvent[] = [];
  let current: ModelStep | null = null;
  let ended = false;
  for (const e of events) {
    if (isModelCall(e)) {
      current = steps[current === null ? 0 : current.n]!;
      continue;
    }
    if (END_TYPES.has(e.type)) ended = true;
    if (e.type === "tool_called") {
      const owner = stepOfCall.get(String(e.data.call_id)) ?? current ?? steps[0];
      if (owner) {
        owner.tools.push(e);
        continue;
      }
    }
    if (ended) end.push(e);
    else if (current) current.others.push(e);
    else setup.push(e);
  }
  const last = events.at(-1)?.type;
  const status = last === "run_completed" ? "completed" : last === "run_failed" ? "failed" : "cut";
  return { setup, steps, end, status };
}

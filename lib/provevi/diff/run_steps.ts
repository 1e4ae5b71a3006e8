/**
 * A run's events as steps, the unit in which two runs are compared and a recorded run is served again: the
 * setup (everything before the first model call), one step per model call (the call, then the tool calls it
 * asked for), and the end (the history, the outputs, the run's end). The events are read as recorded, line by
 * line; the chain and the payloads are `prove verify`'s to check. Two runs that share a long start are read in
 * full only from the step where they first differ ({@linkcode sharedStart}).
 * @module
 */
import { EvidenceReadError } from "../evidence/errors.ts";
import type { EvidenceEvent } from "../evidence/event.ts";
import type { RunRecord } from "../evidence/record.ts";
import { jsonLineWeight, parseJson, TooDeepJson } from "../evidence/json_depth.ts";
import { EVENTS_READ_WEIGHT } from "../evidence/read_events.ts";

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

/** The model steps two runs share after their setups, read only as far as telling where their steps are. */
export interface SharedStart {
  /** The first line of the steps shared: the first model call's. */
  readonly from: number;
  /** The line after them: the model call whose step is read (0: none is shared). */
  readonly lines: number;
  /** The model steps in those lines. */
  readonly steps: number;
  /** The tokens of those steps' model calls. */
  readonly tokens: { input: number; output: number };
}

/** A run's events, in steps. */
export interface RunSteps {
  /** The run's ID. */
  readonly runId: string;
  /** The events read (all of them, or those after the start shared with the run compared). */
  readonly events: EvidenceEvent[];
  /** The number of whole lines of the run's events. */
  readonly lineCount: number;
  /** The events before the first model call: run_created, the inputs, the sandbox, the prompt. */
  readonly setup: EvidenceEvent[];
  /** The model calls, each with its tool calls. */
  readonly steps: ModelStep[];
  /** The events after the last step: the history, the sandbox's end, the inputs' re-check, outputs, the end. */
  readonly end: EvidenceEvent[];
  /** `completed` or `failed` as the last event says, or `cut` when the run has not ended. */
  readonly status: RecordStatus;
  /** True when the last line was cut part way (no newline): it is left out. */
  readonly cutLine: boolean;
  /** The start shared with the run compared, which is not among the events read; none when read whole. */
  readonly shared: SharedStart;
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

/** The whole lines of a run's events text, and whether its last line was cut part way (left out). */
export function linesOf(text: string): { lines: string[]; cutLine: boolean } {
  const lines = text.split("\n");
  const cutLine = lines.at(-1) !== "";
  lines.pop(); // the empty text after the last newline, or the line cut part way
  return { lines, cutLine };
}

/** What the lines a run's steps parse may weigh still ({@linkcode jsonLineWeight}), of the most they may. */
export interface LinesWeight {
  most: number;
  left: number;
}

/**
 * Parses lines as events, weighing each before it is parsed as the verifier weighs them: the events are kept, and
 * a line of many small values (`{"a":[{},{},…]}`) takes the heap at some 30 times its text.
 *
 * @param lines The lines.
 * @param options The run (for the error), the first line to parse, and the weight left (taken from; by default
 *   {@linkcode EVENTS_READ_WEIGHT}).
 * @returns The events of the lines from `from` on.
 * @throws EvidenceReadError when a line is not JSON, or past the weight.
 */
export function parseLines(
  lines: readonly string[],
  options: { runId: string; from?: number; weight?: LinesWeight },
): EvidenceEvent[] {
  const from = options.from ?? 0;
  const weight = options.weight ?? { most: EVENTS_READ_WEIGHT, left: EVENTS_READ_WEIGHT };
  const events: EvidenceEvent[] = new Array(lines.length - from);
  for (let i = from; i < lines.length; i++) {
    weight.left -= jsonLineWeight(lines[i]!);
    if (weight.left < 0) {
      throw new EvidenceReadError(
        `run "${options.runId}": events.jsonl would take more than ${weight.most} bytes of memory read, by line ${
          i + 1
        }; run prove verify ${options.runId} to see what is wrong`,
      );
    }
    try {
      // no deeper than the comparisons walk (a call a level): 100,000 levels ran out of stack
      events[i - from] = parseJson(lines[i]!) as EvidenceEvent;
    } catch (error) {
      const what = error instanceof TooDeepJson ? error.message.replace(/^it /, "") : "is not JSON";
      throw new EvidenceReadError(
        `run "${options.runId}": events.jsonl line ${
          i + 1
        } ${what}; run prove verify ${options.runId} to see what is wrong`,
        { cause: error },
      );
    }
  }
  return events;
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
  const { lines, cutLine } = linesOf(await eventsTextOf(record));
  return stepsFrom(lines, { runId: record.runId, cutLine, shared: NOTHING_SHARED });
}

const NOTHING_SHARED: SharedStart = { from: 0, lines: 0, steps: 0, tokens: { input: 0, output: 0 } };

/**
 * A run's events text, for reading it in steps.
 *
 * @param record The run.
 * @returns The text of its `events.jsonl`.
 * @throws EvidenceReadError when it cannot be read or is empty.
 */
export async function eventsTextOf(record: RunRecord): Promise<string> {
  const text = await record.eventsText().catch((error) => {
    throw new EvidenceReadError(`cannot read the events of run "${record.runId}": ${error.message}`, {
      cause: error,
    });
  });
  if (text === null || text === "") {
    throw new EvidenceReadError(`run "${record.runId}" has no events (evidence/events.jsonl)`);
  }
  return text;
}

/**
 * A run's lines in steps, the lines of a start it shares with another run left unread.
 *
 * @param lines The run's whole lines.
 * @param options The run, whether its last line was cut, the start shared, and the most its lines parsed may
 *   weigh ({@linkcode EVENTS_READ_WEIGHT} by default).
 * @returns The steps.
 */
export function stepsFrom(
  lines: readonly string[],
  options: { runId: string; cutLine: boolean; shared: SharedStart; weight?: number },
): RunSteps {
  const { runId, cutLine, shared } = options;
  const most = options.weight ?? EVENTS_READ_WEIGHT;
  const weight = { most, left: most }; // the two parts of a run's lines, together
  const events = shared.lines === 0 ? parseLines(lines, { runId, weight }) : [
    ...parseLines(lines.slice(0, shared.from), { runId, weight }),
    ...parseLines(lines, { runId, from: shared.lines, weight }),
  ];
  return { runId, events, lineCount: lines.length, cutLine, shared, ...stepsOf(events, shared.steps) };
}

/**
 * The model steps two runs share: after their setups (read whole, since they name each run's folder and
 * process), the lines that say the same in both (all but the fields of each run itself: its ID, the times, the
 * spans, `seq`, `prev`, `refs`), back to the model call before the first line that differs. Only the ends of the
 * shared lines are looked at, to count their steps and tokens; none of them is parsed.
 *
 * @param a One run's lines.
 * @param b The other's.
 * @returns The shared steps.
 * @example
 * ```ts
 * import { sharedStart } from "./run_steps.ts";
 * sharedStart([], []).lines; // 0
 * ```
 */
export function sharedStart(a: readonly string[], b: readonly string[]): SharedStart {
  const from = a.findIndex(isModelLine);
  if (from < 0 || b.findIndex(isModelLine) !== from) return NOTHING_SHARED;
  let p = from;
  while (p < a.length && p < b.length && sameContent(a[p]!, b[p]!)) p++;
  // Back to the model call before the first line that differs: the step from there on is read whole.
  let start = p;
  while (start > from && !isModelLine(a[start - 1]!)) start--;
  start -= 1;
  if (start <= from) return NOTHING_SHARED;
  let steps = 0;
  const tokens = { input: 0, output: 0 };
  for (let i = from; i < start; i++) {
    const line = a[i]!;
    if (!isModelLine(line)) continue;
    steps += 1;
    tokens.input += numberAt(line, '"input_tokens":');
    tokens.output += numberAt(line, '"output_tokens":');
  }
  return { from, lines: start, steps, tokens };
}

/** True for the canonical line of a model call: `model_called`, or the `step_failed` of one. */
function isModelLine(line: string): boolean {
  return line.endsWith(',"type":"model_called"}') ||
    (line.endsWith(',"type":"step_failed"}') && line.includes('"step":"model_called"'));
}

function numberAt(line: string, key: string): number {
  const at = line.indexOf(key);
  if (at < 0) return 0;
  const n = parseInt(line.slice(at + key.length, at + key.length + 20), 10);
  return Number.isSafeInteger(n) ? n : 0;
}

/**
 * True when two canonical lines say the same but for the fields of their runs (`parent_span_id`, `prev`,
 * `refs`, `run_id`, `seq`, `span_id`, `started_at`, `time`, `trace_id`): compared in place, part by part.
 */
function sameContent(x: string, y: string): boolean {
  const a = partsOf(x);
  const b = partsOf(y);
  return a !== null && b !== null && a.parent === b.parent && a.prev - a.payload === b.prev - b.payload &&
    x.length - a.type === y.length - b.type && x.slice(a.type) === y.slice(b.type) &&
    x.slice(a.payload, a.prev) === y.slice(b.payload, b.prev) &&
    x.slice(0, a.parent) === y.slice(0, b.parent);
}

/**
 * Where the fields after `data` begin in a canonical line (its keys in their sorted order); null when they are
 * not where they would be. The last `parent_span_id` key is the line's own: `data` comes before it.
 */
function partsOf(line: string): { parent: number; payload: number; prev: number; type: number } | null {
  const parent = line.lastIndexOf(',"parent_span_id":');
  const payload = line.indexOf(',"payload":', parent);
  const prev = line.indexOf(',"prev":', payload);
  const type = line.lastIndexOf(',"type":');
  return parent > 0 && parent < payload && payload < prev && prev < type
    ? { parent, payload, prev, type }
    : null;
}

/**
 * Groups a run's events in steps. A tool call belongs to the step whose answer asked for it (by call ID), so a
 * streamed run's output tool, recorded before its model call, is in its step; a tool call that no answer
 * names belongs to the step before it.
 *
 * @param events The run's events, in order.
 * @param before How many model steps came before these events (a start shared with another run, not read).
 * @returns The setup, the steps, the end and the status.
 */
export function stepsOf(
  events: readonly EvidenceEvent[],
  before = 0,
): Pick<RunSteps, "setup" | "steps" | "end" | "status"> {
  const steps: ModelStep[] = [];
  const stepOfCall = new Map<string, ModelStep>();
  for (const e of events) {
    if (!isModelCall(e)) continue;
    const step: ModelStep = { n: before + steps.length + 1, call: e, tools: [], others: [] };
    steps.push(step);
    for (const id of askedCallIds(e)) if (!stepOfCall.has(id)) stepOfCall.set(id, step);
  }
  const setup: EvidenceEvent[] = [];
  const end: EvidenceEvent[] = [];
  let current: ModelStep | null = null;
  let ended = false;
  for (const e of events) {
    if (isModelCall(e)) {
      current = steps[current === null ? 0 : current.n - before]!;
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

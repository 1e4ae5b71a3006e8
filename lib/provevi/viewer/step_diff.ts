/**
 * Two runs' recorded steps side by side: each run's model and tool calls in order (whatever recorded them, as
 * the run page reads them), paired by their place, each pair compared by what the evidence fixes (the kind of
 * step, the model or tool, its status, and the SHA-256 of its request, reply, arguments and result), with the
 * first pair that differs marked as the divergence. It reads only hashes and names, so it compares runs at any
 * level; the answers it adds are cut and only at `bodies`. `prove diff` (a fuller diff of recorded runs) can
 * take its place behind the compare page.
 * @module
 */
import type { EvidenceEvent } from "../evidence/event.ts";
import type { EventItem } from "../live/live.ts";
import type { Level } from "../telemetry/attributes.ts";
import { callsOf, type ViewCall } from "./run_calls.ts";

/** One step of a run, as compared. */
export interface DiffStep {
  seq: number;
  kind: ViewCall["kind"];
  name: string | null;
  status: ViewCall["status"];
  /** The SHA-256 of the request (a model call) or the arguments (a tool call). */
  input: string | null;
  /** The SHA-256 of the reply (a model call) or the result (a tool call). */
  output: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
}

/** Two steps at one place: what differs between them. */
export interface StepPair {
  /** The place, from 1. */
  step: number;
  a: DiffStep | null;
  b: DiffStep | null;
  /** What differs: `missing` (one run has no such step), `kind`, `name`, `status`, `input`, `output`. */
  differs: string[];
}

/** The two runs' steps, paired. */
export interface StepDiff {
  pairs: StepPair[];
  /** The place of the first pair that differs (the divergence), or null when the steps are the same. */
  first: number | null;
  /** How many pairs differ. */
  differing: number;
  /** Pairs past the page's bound, not listed. */
  more: number;
}

/** The most pairs listed. */
const MAX_PAIRS = 500;

/** A run's steps, from its events at the viewer's level. */
export function stepsOf(
  events: readonly EvidenceEvent[],
  shown: readonly (EventItem | null)[],
  level: Level | null,
): DiffStep[] {
  const bySeq = new Map(events.map((e) => [e.seq, e]));
  return callsOf(events, shown, level).calls.map((c) => {
    const e = bySeq.get(c.seq)!;
    const reply = e.data.response_payload ?? e.data.result_payload;
    return {
      seq: c.seq,
      kind: c.kind,
      name: c.name,
      status: c.status,
      input: e.payload,
      output: typeof reply === "string" ? reply : null,
      input_tokens: c.input_tokens,
      output_tokens: c.output_tokens,
    };
  });
}

function compare(a: DiffStep | null, b: DiffStep | null): string[] {
  if (a === null || b === null) return ["missing"];
  const differs: string[] = [];
  for (const key of ["kind", "name", "status", "input", "output"] as const) {
    if (a[key] !== b[key]) differs.push(key);
  }
  return differs;
}

/**
 * Pairs two runs' steps by their place and marks the first divergence.
 *
 * @param a The first run's steps.
 * @param b The second run's steps.
 * @returns The pairs (at most 500), the first divergence, and how many differ.
 * @example
 * ```ts
 * import { diffSteps } from "./step_diff.ts";
 * const step = { seq: 8, kind: "model" as const, name: "m", status: "ok" as const, input: "a", output: "b",
 *   input_tokens: 1, output_tokens: 1 };
 * diffSteps([step], [{ ...step, output: "c" }]).first; // 1
 * ```
 */
export function diffSteps(a: readonly DiffStep[], b: readonly DiffStep[]): StepDiff {
  const n = Math.max(a.length, b.length);
  const pairs: StepPair[] = [];
  let first: number | null = null;
  let differing = 0;
  for (let i = 0; i < n; i++) {
    const pair = {
      step: i + 1,
      a: a[i] ?? null,
      b: b[i] ?? null,
      differs: compare(a[i] ?? null, b[i] ?? null),
    };
    if (pair.differs.length) {
      differing++;
      first ??= pair.step;
    }
    if (pairs.length < MAX_PAIRS) pairs.push(pair);
  }
  return { pairs, first, differing, more: Math.max(0, n - MAX_PAIRS) };
}

/**
 * A divergence: one place where two runs differ, aligned step by step (the setup, the nth model call and the
 * tool calls it asked for, the end), with what differed and where; and the collector that keeps them in order.
 * @module
 */
import type { EvidenceEvent } from "../evidence/event.ts";

/** What differed at a divergence. */
export type DiffWhat =
  | "settings"
  | "inputs"
  | "prompt"
  | "tools"
  | "request"
  | "model_answer"
  | "tool_call"
  | "arguments"
  | "tool_result"
  | "output"
  | "steps"
  | "tokens"
  | "verdict";

/** Where in the runs a divergence is: the setup, a model step, or the end. */
export type DiffPhase = "setup" | "step" | "end";

/** An event of one side, named by its `seq` and type. */
export interface EventRef {
  readonly seq: number;
  readonly type: string;
}

/** One place where two runs differ. */
export interface Divergence {
  /** The setup (before the first model call), a model step, or the end. */
  readonly phase: DiffPhase;
  /** The model step, from 1 (the nth model call); 0 in the setup, null at the end. */
  readonly step: number | null;
  /** What differed. */
  readonly what: DiffWhat;
  /** The event of run A there, or null when A has none. */
  readonly a: EventRef | null;
  /** The event of run B there, or null when B has none. */
  readonly b: EventRef | null;
  /** Where in the two values they first differ (`params.prompt[1].content[0].text`), when that was looked at. */
  readonly path: string | null;
  /** One line for a person. */
  readonly detail: string;
}

/** The event's reference, or null. */
export function refOf(event: EvidenceEvent | null | undefined): EventRef | null {
  return event ? { seq: event.seq, type: event.type } : null;
}

/**
 * Where a divergence is, for a person: `step 2`, `the setup`, `the end`.
 *
 * @param d A divergence.
 * @returns The words.
 */
export function placeOf(d: Pick<Divergence, "phase" | "step">): string {
  return d.phase === "setup" ? "the setup" : d.phase === "end" ? "the end" : `step ${d.step}`;
}

/** The divergences found, in order, the first ones kept in full and the rest counted. */
export class Divergences {
  readonly list: Divergence[] = [];
  readonly counts: Partial<Record<DiffWhat, number>> = {};
  more = 0;

  /**
   * @param limit How many to keep; the rest are counted in `more`.
   * @param refine How many may read their payloads (8 by default).
   */
  constructor(readonly limit: number, refine = 8) {
    this.#refine = refine;
  }

  /** How many more divergences may have their payloads read, to say where in them the runs differ. */
  #refine: number;

  /** True when nothing differs so far. */
  get none(): boolean {
    return this.list.length === 0 && this.more === 0;
  }

  /**
   * True when the next divergence found may read its payloads (the first ones found, up to the budget): past
   * them a difference is told by its hashes alone, so a long run that differs from a step on costs no more.
   */
  takeRefine(): boolean {
    if (this.#refine <= 0) return false;
    this.#refine -= 1;
    return true;
  }

  /** Keeps one. */
  add(d: Divergence): void {
    this.counts[d.what] = (this.counts[d.what] ?? 0) + 1;
    if (this.list.length < this.limit) this.list.push(d);
    else this.more += 1;
  }
}

/**
 * The run context: the run's ID, where it runs, who runs it and how strictly its evidence is kept. Code inside
 * a step or a tool finds the current run through async context.
 * @module
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { TracerProvider } from "@opentelemetry/api";
import type { EvidenceMode, EvidenceRecorder } from "./recorder.ts";
import type { SpanRows } from "../../provevi/receiver/mod.ts";

/** The facts of one run that every part takes. */
export interface RunContext {
  readonly runId: string;
  readonly org: string;
  readonly domain: string;
  readonly env: string;
  readonly actor: string;
  readonly mode: EvidenceMode;
  /** The run folder, with `input/`, `output/` and `scratch/`. */
  readonly folder: string;
  /** The recorder of the run's evidence. */
  readonly recorder: EvidenceRecorder;
  /** Aborted when the run is cancelled or passes a limit. */
  readonly signal: AbortSignal;
  /**
   * The run's own tracer provider, for a library that the telemetry policy approves: its spans become
   * `span_recorded` events. Never registered globally.
   */
  readonly tracerProvider?: TracerProvider;
  /** The store's span rows, for a span receiver of the run (agent programs). */
  readonly spanRows?: SpanRows;
}

const current = new AsyncLocalStorage<RunContext>();

/**
 * A new run ID: `run-<UTC yyyymmddThhmmssZ>-<8 hex>`.
 *
 * @param now The time of the run's start.
 * @example
 * ```ts
 * import { newRunId } from "./run_context.ts";
 * newRunId(new Date(Date.UTC(2026, 10, 29, 12))); // "run-20261129T120000Z-…"
 * ```
 */
export function newRunId(now: Date = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
  const hex = Array.from(crypto.getRandomValues(new Uint8Array(4)), (b) => b.toString(16).padStart(2, "0"))
    .join("");
  return `run-${stamp}-${hex}`;
}

/**
 * The run that the calling code is part of, found through async context; null outside a run.
 *
 * @example
 * ```ts
 * import { currentRun } from "./run_context.ts";
 * const run = currentRun();
 * if (run) await run.recorder.record({ type: "note_added", component: "agent", data: { text: "hi" } });
 * ```
 */
export function currentRun(): RunContext | null {
  return current.getStore() ?? null;
}

/** Runs `fn` with `ctx` as the current run. */
export function withRun<T>(ctx: RunContext, fn: () => T): T {
  return current.run(ctx, fn);
}

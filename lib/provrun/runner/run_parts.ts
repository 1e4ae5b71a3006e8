/**
 * The parts of one run as the core calls them: each hook of {@linkcode RunPart}, over every part that has it, in
 * the parts' order (the hooks that tear down in the reverse order).
 * @module
 */
import type { Tracer, TracerProvider } from "@opentelemetry/api";
import type { LanguageModelV4 } from "@ai-sdk/provider";
import type { EvidenceEvent, Json, SigningKey } from "../../provevi/mod.ts";
import type { AgentSpec } from "../run/run_file.ts";
import type {
  BackendSetup,
  PartRun,
  PartUsage,
  RunPart,
  SealedRun,
  ToolReturn,
  ToolWrap,
} from "../run/run_part.ts";

/** The parts of a run. */
export class RunParts {
  readonly #parts: readonly RunPart[];

  /** @param parts The parts, in the order their hooks are called. */
  constructor(parts: readonly RunPart[]) {
    this.#parts = parts;
  }

  /** The run's tracing: the first part's that has it. */
  get tracing(): { readonly tracer: Tracer; readonly provider: TracerProvider } | undefined {
    return this.#parts.find((p) => p.tracing)?.tracing;
  }

  /** The key that signs the seal: the first part's that has one. */
  get signingKey(): SigningKey | undefined {
    return this.#parts.find((p) => p.signingKey)?.signingKey;
  }

  /** The price of a model call's data: the first part's that has one. */
  get price(): ((data: { [key: string]: Json }) => string | null) | undefined {
    return this.#parts.find((p) => p.price)?.price;
  }

  /** The facts of every part, for the run's last event. */
  endFacts(): { [key: string]: Json } {
    const facts: { [key: string]: Json } = {};
    for (const p of this.#parts) {
      try {
        Object.assign(facts, p.endFacts?.() ?? {});
      } catch { /* a part's facts are not worth the run's last event */ }
    }
    return facts;
  }

  /** Calls `beforeStart` of each part. */
  async beforeStart(run: PartRun): Promise<void> {
    for (const p of this.#parts) await p.beforeStart?.(run);
  }

  /** The facts of every part, for `run_created`. */
  facts(): { [key: string]: Json } {
    return Object.assign({}, ...this.#parts.map((p) => p.facts?.() ?? {}));
  }

  /** Calls `afterCreated` of each part. */
  async afterCreated(run: PartRun): Promise<void> {
    for (const p of this.#parts) await p.afterCreated?.(run);
  }

  /** Gives an event to each part. */
  onEvent(event: EvidenceEvent): void {
    for (const p of this.#parts) p.onEvent?.(event);
  }

  /** Gives a piece of the model's text to each part. */
  onText(piece: string): void {
    for (const p of this.#parts) p.onText?.(piece);
  }

  /** Gives a whole reply to each part. */
  onReply(reply: Json): void {
    for (const p of this.#parts) p.onReply?.(reply);
  }

  /** Gives a call's tokens to each part. */
  onUsage(usage: PartUsage): void {
    for (const p of this.#parts) p.onUsage?.(usage);
  }

  /** What the backend starts with, as each part in turn changes it. */
  async prepareBackend(setup: BackendSetup, run: PartRun): Promise<BackendSetup> {
    for (const p of this.#parts) if (p.prepareBackend) setup = await p.prepareBackend(setup, run);
    return setup;
  }

  /** The model the first part serves, or null. */
  async modelFor(agent: AgentSpec, run: PartRun): Promise<LanguageModelV4 | null> {
    for (const p of this.#parts) {
      const model = await p.modelFor?.(agent, run);
      if (model) return model;
    }
    return null;
  }

  /** The parts' tool hooks as one, the first part outermost; undefined when no part has one. */
  wrapTool(): ToolWrap | undefined {
    const wraps = this.#parts.filter((p) => p.wrapTool).map((p) => p.wrapTool!.bind(p));
    if (!wraps.length) return undefined;
    return (call, run) =>
      wraps.reduceRight<() => Promise<ToolReturn>>((next, wrap) => () => wrap(call, next), run)();
  }

  /** Calls `beforeLastEvent` of each part. */
  async beforeLastEvent(run: PartRun): Promise<void> {
    for (const p of this.#parts) await p.beforeLastEvent?.(run);
  }

  /** Calls `beforeSeal` of each part, the last part first. */
  async beforeSeal(run: PartRun): Promise<void> {
    for (const p of [...this.#parts].reverse()) await p.beforeSeal?.(run);
  }

  /**
   * Calls `afterSeal` of each part, every one even when one throws.
   * @returns The first error, or null.
   */
  async afterSeal(sealed: SealedRun): Promise<unknown> {
    let failure: unknown = null;
    for (const p of this.#parts) {
      try {
        await p.afterSeal?.(sealed);
      } catch (error) {
        failure ??= error;
      }
    }
    return failure;
  }

  /** Calls `close` of each part, the last part first; a part that fails to close does not stop the others. */
  async close(): Promise<void> {
    for (const p of [...this.#parts].reverse()) {
      try {
        await p.close?.();
      } catch { /* a part that cannot close has nothing more to give the run */ }
    }
  }
}

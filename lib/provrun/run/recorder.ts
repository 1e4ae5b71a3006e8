/**
 * The evidence recorder: appends each event through the store's writer, stores payloads by hash and opens an
 * OpenTelemetry span for each step. In strict mode an event that cannot be written stops the run; in lenient
 * mode the loss is counted in the manifest and the run goes on.
 * @module
 */
import { AsyncLocalStorage } from "node:async_hooks";
import {
  type Attributes,
  type Span,
  type SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
} from "@opentelemetry/api";
import { ROOT_CONTEXT } from "@opentelemetry/api";
import { BasicTracerProvider } from "@opentelemetry/sdk-trace-base";
import {
  type ChainedEvent,
  EventChain,
  type EventInit,
  formatMicros,
  nowUtc,
  utf8,
} from "../../provevi/evidence/mod.ts";
import type { EvidenceEvent, Json, LostEvent, Manifest, RunWriter, SigningKey } from "../../provevi/mod.ts";
import { EvidenceError } from "../../provevi/evidence/mod.ts";
import { keptEvidenceProblem } from "../../provevi/store/mod.ts";

/** What a step gives its event. */
export interface StepRecord {
  refs?: string[];
  data?: { [key: string]: Json };
  payload?: string | null;
  confidence?: EventInit["confidence"];
}

/** A step started by {@linkcode EvidenceRecorder.startStep}, ended by `end` or `fail`. */
export interface OpenStep {
  readonly span: Span;
  readonly startedAt: string;
  /** Writes the step's event and ends its span. */
  end(type: string, record?: StepRecord): Promise<EvidenceEvent | null>;
  /** Writes `step_failed` for the step and ends its span with the error. */
  fail(step: string, error: unknown, record?: StepRecord): Promise<EvidenceEvent | null>;
  /** Runs `fn` with this step as the parent of the steps it starts. */
  within<T>(fn: () => T): T;
}

/** Options of a step. */
export interface StepOptions {
  /** The class that writes the event. */
  component: string;
  /** The span's name, such as `chat gpt-4o` or `execute_tool read_file`; the event type by default. */
  spanName?: string;
  /** Span attributes (names, usage; content only through `setSpanContent`). */
  attributes?: Attributes;
  /** The span's kind: `CLIENT` for a call to another process (a model over HTTP); `INTERNAL` by default. */
  kind?: SpanKind;
  /**
   * Opens the span at its first use (`span`, `within`, the step's end) rather than now, with now as its start
   * and the same parent: for a step whose start is on a latency path (the gateway's time to first token), where
   * opening a span costs more than the rest of the path's own work.
   */
  spanLater?: boolean;
}

/** How the recorder takes a write that fails: strict fails the run, lenient counts the event as lost. */
export type EvidenceMode = "strict" | "lenient";

/**
 * Records one run's evidence.
 *
 * @example
 * ```ts
 * import { EvidenceRecorder, FileStore } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * await using store = new FileStore({ runs: await Deno.makeTempDir() });
 * const recorder = new EvidenceRecorder(await store.openRun("run-20261201T120000Z-0a0b0c0d"), {
 *   actor: "ada",
 *   mode: "strict",
 * });
 * await recorder.step("note_added", { component: "agent" }, () => Promise.resolve({ data: { text: "hi" } }));
 * const manifest = await recorder.seal();
 * assert.equal(manifest.run_id, "run-20261201T120000Z-0a0b0c0d");
 * ```
 */
export class EvidenceRecorder {
  readonly #writer: RunWriter;
  #chain: EventChain;
  readonly #actor: string;
  readonly #mode: EvidenceMode;
  readonly #tracer: Tracer;
  readonly #lost: LostEvent[] = [];
  readonly #parent = new AsyncLocalStorage<Span>();
  #tail: Promise<unknown> = Promise.resolve();
  #broken: EvidenceError | null = null;
  #root: Span | null = null;
  #sealed = false;
  /** Called with each event written, for progress and live feeds. */
  onEvent: ((event: EvidenceEvent) => void) | null = null;
  /** Called with a warning of lenient mode. */
  onWarning: ((message: string) => void) | null = null;

  /**
   * @param writer The store's writer of the run.
   * @param options `actor` and `mode` of the run; `tracer` from the run's own tracer provider (none: spans
   * are made but go nowhere).
   */
  constructor(writer: RunWriter, options: { actor: string; mode: EvidenceMode; tracer?: Tracer }) {
    this.#writer = writer;
    this.#chain = new EventChain(writer.runId);
    this.#actor = options.actor;
    this.#mode = options.mode;
    // Never the global provider: without a provider of the run's own, spans would have no IDs to record.
    this.#tracer = options.tracer ?? new BasicTracerProvider().getTracer("provrun");
  }

  /** The run's ID. */
  get runId(): string {
    return this.#writer.runId;
  }

  /** The run folder. */
  get folder(): string {
    return this.#writer.folder;
  }

  /** The events lenient mode could not write. */
  get lost(): readonly LostEvent[] {
    return this.#lost;
  }

  /** The number of events written. */
  get count(): number {
    return this.#chain.seq;
  }

  /** Opens the run's root span (`invoke_agent <name>`); each top-level step is its child. */
  startRoot(name: string, attributes: Attributes = {}): Span {
    this.#root = this.#tracer.startSpan(
      name,
      { attributes: { ...attributes, "provrun.run_id": this.runId } },
      ROOT_CONTEXT,
    );
    return this.#root;
  }

  /** Ends the root span; a run that failed gets its error's name as status and `error.type`. */
  endRoot(error?: unknown): void {
    if (!this.#root) return;
    if (error) {
      this.#root.setStatus({ code: SpanStatusCode.ERROR, message: errorName(error) });
      this.#root.setAttribute("error.type", errorName(error));
    }
    this.#root.end();
  }

  /** The IDs an event of a step takes: its span, and its parent's span. */
  #ids(span: Span | null): Pick<EventInit, "trace_id" | "span_id" | "parent_span_id"> {
    const own = span ?? this.#root;
    if (!own) return {};
    const parent = span ? (this.#parent.getStore() ?? this.#root) : null;
    const ctx = own.spanContext();
    return {
      trace_id: ctx.traceId,
      span_id: ctx.spanId,
      parent_span_id: parent && parent !== own ? parent.spanContext().spanId : null,
    };
  }

  /**
   * Writes one event at the end of the queue, so that events of concurrent steps keep one order.
   * @returns The event, or null when lenient mode lost it.
   * @throws EvidenceError in strict mode when the event cannot be written.
   */
  record(init: Omit<EventInit, "actor">, span: Span | null = null): Promise<EvidenceEvent | null> {
    const ids = this.#ids(span);
    const write = (): Promise<EvidenceEvent | null> => this.#writeOne(init, ids);
    const result = this.#tail.then(write, write);
    this.#tail = result.catch(() => {});
    return result;
  }

  /**
   * Writes several events at the end of the queue, in order: what the span receiver does with the spans of one
   * request. Each event is chained and hashed once, as by {@linkcode record}; when the store's writer takes a
   * batch (`appendMany`), the lines go in one write, and when that write fails the chain stays where it was.
   * @returns The events, or nulls when lenient mode lost them.
   * @throws EvidenceError in strict mode when the events cannot be written.
   */
  recordMany(inits: readonly Omit<EventInit, "actor">[]): Promise<(EvidenceEvent | null)[]> {
    const ids = this.#ids(null);
    const write = async (): Promise<(EvidenceEvent | null)[]> => {
      if (this.#broken) throw this.#broken;
      const appendMany = this.#writer.appendMany?.bind(this.#writer);
      if (!appendMany) {
        const out: (EvidenceEvent | null)[] = [];
        for (const init of inits) out.push(await this.#writeOne(init, ids));
        return out;
      }
      // An event whose line cannot be made (data no evidence line can hold) is the caller's error: it is
      // thrown before anything is written, and the run's evidence goes on.
      const draft = new EventChain(this.runId, { seq: this.#chain.seq, prev: this.#chain.lastHash });
      const written: ChainedEvent[] = [];
      for (const init of inits) {
        const next = draft.next({ ...ids, ...init, actor: this.#actor });
        draft.accept(next);
        written.push(next);
      }
      try {
        await appendMany(written.map((w) => w.line), written.map((w) => w.event));
      } catch (error) {
        return inits.map((init) => this.#lose(init.type, error));
      }
      this.#chain = draft;
      for (const w of written) this.onEvent?.(w.event);
      return written.map((w) => w.event);
    };
    const result = this.#tail.then(write, write);
    this.#tail = result.catch(() => {});
    return result;
  }

  async #writeOne(
    init: Omit<EventInit, "actor">,
    ids: Pick<EventInit, "trace_id" | "span_id" | "parent_span_id">,
  ): Promise<EvidenceEvent | null> {
    if (this.#broken) throw this.#broken;
    // a line that cannot be made is the caller's error, thrown before anything is written (see recordMany)
    const next = this.#chain.next({ ...ids, ...init, actor: this.#actor });
    try {
      await this.#writer.append(next.line, next.event);
      this.#chain.accept(next);
      this.onEvent?.(next.event);
      return next.event;
    } catch (error) {
      return this.#lose(init.type, error);
    }
  }

  #lose(type: string, error: unknown): null {
    const message = error instanceof Error ? error.message : String(error);
    if (this.#mode === "strict") {
      this.#broken = error instanceof EvidenceError
        ? error
        : new EvidenceError(`the evidence of run "${this.runId}" cannot be written: ${message}`, {
          cause: error,
        });
      throw this.#broken;
    }
    this.#lost.push({ type, time: nowUtc(), error: message });
    this.onWarning?.(`lost a ${type} event: ${message}`);
    return null;
  }

  /**
   * Stores a payload under its SHA-256: bytes as they are, a text as UTF-8, anything else as JSON.
   * @returns The SHA-256, or null when lenient mode lost it.
   */
  async payload(content: Uint8Array | string | unknown): Promise<string | null> {
    const bytes = content instanceof Uint8Array
      ? content
      : utf8(typeof content === "string" ? content : JSON.stringify(content) ?? "null");
    if (this.#broken) throw this.#broken;
    try {
      return await this.#writer.putPayload(bytes);
    } catch (error) {
      return this.#lose("payload", error);
    }
  }

  /**
   * Starts writing the payloads stored so far to disk, waited for by nothing (the store's writer may not: then
   * nothing), so that the seal has less to write: a run's writer with `prove serve` calls it after each take of
   * the bodies the daemon received.
   */
  flushPayloads(): void {
    if (!this.#sealed) this.#writer.flushPayloads?.();
  }

  /**
   * Starts a step: opens its span as a child of the current step (or of the root span).
   * @param options The component, the span's name and attributes.
   */
  startStep(options: StepOptions & { spanName: string }): OpenStep {
    const parent = this.#parent.getStore() ?? this.#root;
    const later = options.spanLater === true;
    // A span opened later starts at this moment, on the clock of `nowUtc` and of the span's own times.
    const at = later ? performance.now() : null;
    const open = (): Span =>
      this.#tracer.startSpan(options.spanName, {
        attributes: { ...options.attributes, "provrun.run_id": this.runId },
        ...(options.kind === undefined ? {} : { kind: options.kind }),
        ...(at === null ? {} : { startTime: at }),
      }, parent ? trace.setSpan(ROOT_CONTEXT, parent) : ROOT_CONTEXT);
    let opened: Span | null = at === null ? open() : null;
    const span = (): Span => opened ??= open();
    let started = at === null ? nowUtc() : null; // a later span's start is written out when it is needed
    const startedAt = () => started ??= formatMicros(Math.round((performance.timeOrigin + at!) * 1000));
    // A span given its start is given its end too, else the SDK ends it on the wall clock, to the millisecond.
    const now = () => at === null ? undefined : performance.now();
    const ids = () => {
      const c = span().spanContext();
      return {
        trace_id: c.traceId,
        span_id: c.spanId,
        parent_span_id: parent ? parent.spanContext().spanId : null,
      };
    };
    return {
      get span() {
        return span();
      },
      get startedAt() {
        return startedAt();
      },
      end: async (type, record = {}) => {
        try {
          return await this.record({
            ...record,
            ...ids(),
            type,
            component: options.component,
            started_at: startedAt(),
          });
        } finally {
          span().end(now());
        }
      },
      fail: async (step, error, record = {}) => {
        span().recordException(error instanceof Error ? error : String(error), now());
        span().setStatus({ code: SpanStatusCode.ERROR, message: errorName(error) });
        span().setAttribute("error.type", errorName(error));
        try {
          return await this.record({
            refs: record.refs ?? [],
            payload: record.payload ?? null,
            ...ids(),
            type: "step_failed",
            component: options.component,
            started_at: startedAt(),
            data: { ...record.data, step, error: errorName(error), message: errorMessage(error) },
          });
        } finally {
          span().end(now());
        }
      },
      within: (fn) => this.#parent.run(span(), fn),
    };
  }

  /**
   * Runs one step: opens a span, runs `fn` inside it, and writes the event of `type` with what `fn` returns;
   * when `fn` throws, writes `step_failed` and throws again.
   *
   * @param type The event type written on success.
   * @param options The component, span name and attributes.
   * @param fn The step's work; returns the event's refs, data and payload.
   * @returns The event written (null when lenient mode lost it).
   */
  async step(
    type: string,
    options: StepOptions,
    fn: (step: OpenStep) => Promise<StepRecord>,
  ): Promise<EvidenceEvent | null> {
    const open = this.startStep({ ...options, spanName: options.spanName ?? type });
    let record: StepRecord;
    try {
      record = await open.within(() => fn(open));
    } catch (error) {
      if (error instanceof EvidenceError && error === this.#broken) throw error;
      await open.fail(type, error);
      throw error;
    }
    return await open.end(type, record);
  }

  /**
   * Runs `fn` outside any step, so that the steps it starts are children of the root span. Tool calls use it:
   * the AI SDK may run a tool from inside a model call's stream, and a tool call is not part of that call.
   */
  atTop<T>(fn: () => T): T {
    return this.#parent.exit(fn);
  }

  /** Waits until every queued event is written. */
  async flush(): Promise<void> {
    await this.#tail;
  }

  /** True when strict mode stopped the evidence. */
  get broken(): EvidenceError | null {
    return this.#broken;
  }

  /** True once `seal` was called: a span receiver takes nothing more for the run. */
  get sealed(): boolean {
    return this.#sealed;
  }

  /**
   * Seals the run through the writer, with the lost events, signed with the key when one is given; then checks
   * that the store kept the folder's evidence.
   * @throws EvidenceError, in both modes, when the seal fails or the folder lacks `events.jsonl` or
   * `manifest.json` after it: no check could verify the run.
   */
  async seal(signingKey?: SigningKey): Promise<Manifest> {
    this.#sealed = true;
    await this.flush();
    const manifest = await this.#writer.seal({ lost: [...this.#lost], signingKey });
    const lost = await keptEvidenceProblem(this.#writer.folder, manifest);
    if (lost !== null) {
      throw new EvidenceError(
        `run "${this.runId}" was sealed, but its store did not keep its evidence: ${lost}; no check can verify the run`,
      );
    }
    return manifest;
  }
}

/** The name of an error's class, such as `CancelledError`. */
export function errorName(error: unknown): string {
  return error instanceof Error ? (error.name || error.constructor.name) : typeof error;
}

/** An error's message, one line. */
export function errorMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split("\n")[0]!.slice(0, 2000);
}

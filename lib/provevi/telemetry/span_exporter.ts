/**
 * The store's span exporter: an OpenTelemetry `SpanExporter` that hands a run's spans to its store in process,
 * where they are kept beside the evidence in `<run folder>/spans.jsonl`. Spans are an index and a timeline over
 * the evidence, not the record: the file is outside `evidence/`, so no check, manifest or bundle covers it, and
 * each line links to the events by `trace_id` and `span_id` (every event holds the IDs of its step).
 * @module
 */
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
import { formatMicros, type Json } from "../evidence/event.ts";
import type { SpanSink, StoredSpan } from "../evidence/spans_file.ts";

/**
 * An OpenTelemetry time (`[seconds, nanoseconds]`) as RFC 3339 UTC with six fraction digits, as events write it.
 *
 * @example
 * ```ts
 * import { spanTime } from "./span_exporter.ts";
 * spanTime([1795996800, 123456789]); // "2026-11-30T00:00:00.123456Z"
 * ```
 */
export function spanTime(time: readonly [number, number]): string {
  return formatMicros(time[0] * 1_000_000 + Math.floor(time[1] / 1000));
}

function jsonAttributes(attributes: Readonly<Record<string, unknown>> | undefined): { [key: string]: Json } {
  const out: { [key: string]: Json } = {};
  for (const [key, value] of Object.entries(attributes ?? {})) {
    if (value !== undefined) {
      Object.defineProperty(out, key, {
        value: value as Json,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
  return out;
}

/**
 * A span as a store keeps it.
 *
 * @param span A finished span.
 * @returns Its line of `spans.jsonl`.
 * @example
 * ```ts
 * import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
 * import { storedSpan } from "./span_exporter.ts";
 * const memory = new InMemorySpanExporter();
 * const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });
 * provider.getTracer("provrun").startSpan("chat x").end();
 * storedSpan(memory.getFinishedSpans()[0]!).name; // "chat x"
 * ```
 */
export function storedSpan(span: ReadableSpan): StoredSpan {
  const ctx = span.spanContext();
  return {
    trace_id: ctx.traceId,
    span_id: ctx.spanId,
    parent_span_id: span.parentSpanContext?.spanId ?? null,
    name: span.name,
    kind: span.kind,
    scope: { name: span.instrumentationScope.name, version: span.instrumentationScope.version ?? null },
    start_time: spanTime(span.startTime),
    end_time: spanTime(span.endTime),
    status: { code: span.status.code, message: span.status.message ?? null },
    attributes: jsonAttributes(span.attributes),
    events: span.events.map((e) => ({
      name: e.name,
      time: spanTime(e.time),
      attributes: jsonAttributes(e.attributes),
    })),
    links: span.links.map((l) => ({ trace_id: l.context.traceId, span_id: l.context.spanId })),
  };
}

/** The result codes of `SpanExporter.export` (`ExportResultCode` of `@opentelemetry/core`). */
const SUCCESS = 0;
const FAILED = 1;

/**
 * An OpenTelemetry span exporter into a store: spans reach the store in process, with no network and no
 * receiver. Put it on the run's own tracer provider, behind a `SimpleSpanProcessor`.
 *
 * @example
 * ```ts
 * import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
 * import { FileStore } from "../store/file_store.ts";
 * import { StoreSpanExporter } from "./span_exporter.ts";
 * const store = new FileStore({ runs: "/tmp/runs" });
 * const writer = await store.openRun("run-x");
 * const provider = new BasicTracerProvider({
 *   spanProcessors: [new SimpleSpanProcessor(new StoreSpanExporter(store, "run-x"))],
 * });
 * provider.getTracer("provrun").startSpan("invoke_agent q").end();
 * await provider.forceFlush(); // run-x/spans.jsonl holds the span
 * ```
 */
export class StoreSpanExporter implements SpanExporter {
  readonly #sink: SpanSink;
  readonly #runId: string;
  readonly #pending = new Set<Promise<void>>();
  #stopped = false;
  /** The last error of a write, for the caller to report; exporting never throws. */
  lastError: unknown = null;

  /**
   * @param sink The store (anything with `addSpans`).
   * @param runId The run whose spans these are.
   */
  constructor(sink: SpanSink, runId: string) {
    this.#sink = sink;
    this.#runId = runId;
  }

  /** Hands spans to the store; calls back with success or failure once written. */
  export(spans: ReadableSpan[], resultCallback: (result: { code: number; error?: Error }) => void): void {
    if (this.#stopped) {
      resultCallback({ code: FAILED, error: new Error("the store's span exporter is shut down") });
      return;
    }
    const write = this.#sink.addSpans(this.#runId, spans.map(storedSpan)).then(
      () => resultCallback({ code: SUCCESS }),
      (error) => {
        this.lastError = error;
        resultCallback({ code: FAILED, error: error instanceof Error ? error : new Error(String(error)) });
      },
    ).finally(() => this.#pending.delete(write));
    this.#pending.add(write);
  }

  /** Waits for every write. */
  async forceFlush(): Promise<void> {
    await Promise.all([...this.#pending]);
  }

  /** Waits for every write, then takes no more spans. */
  async shutdown(): Promise<void> {
    await this.forceFlush();
    this.#stopped = true;
  }
}

/**
 * Content on a step's span: the messages of a model call, a tool call's arguments and result, in the GenAI
 * conventions' shapes (`gen_ai.input.messages`, …). They go on a span only when the run's telemetry asked for
 * them, because a destination receives `bodies`; then the span cut sends them to that destination, and the
 * store's index of spans leaves them out (the evidence holds each whole, as a payload). A run with no such
 * destination never builds them.
 * @module
 */
import type { Span } from "@opentelemetry/api";

const WANTED = new WeakSet<object>();

/**
 * Marks a span as one whose content a destination receives: the run's telemetry calls it as each of provrun's
 * spans starts, when a destination at `bodies` gets provrun's spans.
 *
 * @param span The span, as it starts.
 * @example
 * ```ts
 * import { BasicTracerProvider } from "@opentelemetry/sdk-trace-base";
 * import { spanContentWanted, wantSpanContent } from "./_span_content.ts";
 * const span = new BasicTracerProvider().getTracer("t").startSpan("chat x");
 * wantSpanContent(span);
 * spanContentWanted(span); // true
 * ```
 */
export function wantSpanContent(span: object): void {
  WANTED.add(span);
}

/**
 * True when a destination receives this span's content.
 *
 * @param span The span.
 */
export function spanContentWanted(span: object): boolean {
  return WANTED.has(span);
}

/**
 * Sets a span's content attributes, made only when a destination receives them.
 *
 * @param span The step's span.
 * @param make Makes the attributes (JSON text each, within the content cap).
 * @example
 * ```ts
 * import { BasicTracerProvider } from "@opentelemetry/sdk-trace-base";
 * import { setSpanContent } from "./_span_content.ts";
 * const span = new BasicTracerProvider().getTracer("t").startSpan("execute_tool x");
 * setSpanContent(span, () => ({ "gen_ai.tool.call.arguments": "{}" })); // nothing: no destination wants it
 * ```
 */
export function setSpanContent(span: Span, make: () => Record<string, string>): void {
  if (!WANTED.has(span)) return;
  for (const [key, value] of Object.entries(make())) span.setAttribute(key, value);
}

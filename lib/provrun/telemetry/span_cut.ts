/**
 * A span cut to what a destination receives: provrun's senders pass each span through {@linkcode cutSpan}
 * before an exporter sees it (provevi-reference.txt, "What a destination receives" and `plain_span_name`).
 * @module
 */
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import type { Attributes, AttributeValue, SpanContext } from "@opentelemetry/api";
import { attributesFor, plainAttribute, plainName, plainSpanName } from "../../provevi/telemetry/mod.ts";
import type { Level } from "../../provevi/mod.ts";
import { type DeclaredNames, declaredSpanName, declaredValue, KNOWN_ERROR_NAMES } from "./declared_names.ts";

/**
 * The attributes a destination at `level` receives: below `bodies`, those that `attributesFor` keeps and that
 * `plainAttribute` finds plain (so a model name with more than one `/` stays); at `bodies`, all of them.
 *
 * @param attributes The span's attributes.
 * @param level The destination's level.
 * @param declared What the run declared: below `bodies`, a tool name, a model, a tool call's ID or an error
 * name that the model or a tool chose goes as its label and a short hash unless the run declared it.
 * @returns The attributes to send.
 * @example
 * ```ts
 * import { cutAttributes } from "./span_cut.ts";
 * cutAttributes({ "gen_ai.request.model": "gpt-4o", "gen_ai.usage.input_tokens": 3, "x": "hi" }, "names");
 * // { "gen_ai.request.model": "gpt-4o" }
 * ```
 */
export function cutAttributes(
  attributes: Readonly<Record<string, unknown>>,
  level: Level,
  declared?: DeclaredNames,
): Attributes {
  if (level === "bodies") return { ...attributes } as Attributes;
  const out: Attributes = {};
  for (const [key, given] of Object.entries(attributesFor(attributes, level))) {
    const value = declared ? declaredValue(key, given, declared) : given;
    // the agent's class has a / between each of its four names: plain when it is the run's own
    const agent = key === "gen_ai.agent.id" && typeof value === "string" && declared?.agents?.has(value);
    if (agent ? plainName(value as string, { declared: [value as string] }) : plainAttribute(key, value)) {
      Object.defineProperty(out, key, {
        value: value as AttributeValue,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
  return out;
}

/**
 * The name a destination at `level` receives: the span's own below `bodies` only when `plainSpanName` passes
 * it, else its `gen_ai.operation.name` when that is plain, else `span`.
 *
 * @example
 * ```ts
 * import { cutName } from "./span_cut.ts";
 * cutName("read /etc/passwd", {}, "names"); // "span"
 * cutName("chat gpt-4o", {}, "names"); // "chat gpt-4o"
 * ```
 */
export function cutName(
  name: string,
  attributes: Attributes,
  level: Level,
  declared?: DeclaredNames,
): string {
  if (level !== "bodies" && declared) name = declaredSpanName(name, declared);
  if (level === "bodies" || plainSpanName(name)) return name;
  const operation = attributes["gen_ai.operation.name"];
  return typeof operation === "string" && plainName(operation) ? operation : "span";
}

/** A span context without its trace state, which a library may fill with any text (`vendor=` + a prompt). */
function withoutState(ctx: SpanContext): SpanContext {
  const { traceState: _, ...rest } = ctx;
  return rest;
}

/**
 * A copy of a finished span as a destination at `level` receives it: the name and the attributes cut, the span
 * events, the link attributes, the trace state of the span and its links, and a status message that is not a
 * name left out below `bodies`. IDs, times, kind, scope and resource stay.
 *
 * @param span The finished span.
 * @param level The destination's level.
 * @param declared What the run declared (see {@linkcode cutAttributes}).
 * @returns A span to hand to an exporter.
 * @example
 * ```ts
 * import { cutSpan } from "./span_cut.ts";
 * // processor.onEnd = (span) => exporter.export([cutSpan(span, "usage")], () => {});
 * ```
 */
export function cutSpan(span: ReadableSpan, level: Level, declared?: DeclaredNames): ReadableSpan {
  const bodies = level === "bodies";
  const message = span.status.message;
  const cut: ReadableSpan = {
    name: cutName(span.name, span.attributes, level, declared),
    kind: span.kind,
    spanContext: bodies ? () => span.spanContext() : () => withoutState(span.spanContext()),
    parentSpanContext: bodies || !span.parentSpanContext
      ? span.parentSpanContext
      : withoutState(span.parentSpanContext),
    startTime: span.startTime,
    endTime: span.endTime,
    status: bodies || message === undefined ||
        (plainName(message) && (!declared || KNOWN_ERROR_NAMES.includes(message)))
      ? span.status
      : { code: span.status.code },
    attributes: cutAttributes(span.attributes, level, declared),
    links: bodies ? span.links : span.links.map((l) => ({ context: withoutState(l.context) })),
    events: bodies ? span.events : [],
    duration: span.duration,
    ended: span.ended,
    resource: span.resource,
    instrumentationScope: span.instrumentationScope,
    droppedAttributesCount: span.droppedAttributesCount,
    droppedEventsCount: bodies ? span.droppedEventsCount : 0,
    droppedLinksCount: span.droppedLinksCount,
  };
  return cut;
}

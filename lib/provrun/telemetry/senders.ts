/**
 * The places a run sends its spans to, each with its own exporter: the OTLP traces target (OTLP/HTTP or
 * OTLP/gRPC, as the variables say) and each Logfire destination of the policy when `LOGFIRE_TOKEN` is set. A
 * span reaches a sender cut to the destination's level, then passed through the caller's redaction hook, which
 * may drop or replace attributes of what leaves and never touches what the run records.
 * @module
 */
import type { AttributeValue } from "@opentelemetry/api";
import {
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
  type SpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { type ExportResult, ExportResultCode } from "@opentelemetry/core";
import type { Destination, DestinationKind, Environ, Level } from "../../provevi/telemetry/mod.ts";
import type { OtlpExporterOptions } from "./otlp_exporter.ts";
import { LOGFIRE_TOKEN, type NamedDestination, recordableUrl } from "./telemetry_env.ts";

/**
 * A span on its way to a destination, as the redaction hook sees it: already cut to the destination's level.
 *
 * @example
 * ```ts
 * import type { OutgoingSpan } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const span: OutgoingSpan = {
 *   name: "invoke_agent q",
 *   destination: "logfire",
 *   kind: "logfire",
 *   receives: "usage",
 *   attributes: Object.freeze({ "gen_ai.usage.input_tokens": 14 }),
 * };
 * assert.ok(Object.isFrozen(span.attributes));
 * ```
 */
export interface OutgoingSpan {
  /** The span's name, as the destination would receive it. */
  readonly name: string;
  /** The policy's name of the destination. */
  readonly destination: string;
  /** The destination's kind (`otlp` or `logfire`). */
  readonly kind: DestinationKind;
  /** The destination's level. */
  readonly receives: Level;
  /** The attributes that would leave (a frozen copy: changing it changes nothing). */
  readonly attributes: Readonly<Record<string, AttributeValue>>;
}

/**
 * The redaction hook: called with each span that leaves for a destination, after the policy's cut. It returns
 * the attributes to send instead (a key left out is dropped, a value given replaces the one there; a key the
 * span did not have is refused), or `undefined` to send them as they are. A hook that throws or returns
 * anything else stops that span (it is not sent) and the run writes a `telemetry_problem`; the run goes on. It
 * never sees or changes the evidence: the events, payloads and stored spans are the same with or without it.
 *
 * @example
 * ```ts
 * import type { SpanRedactor } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const redact: SpanRedactor = (span) => {
 *   const { "gen_ai.conversation.id": _, ...rest } = span.attributes;
 *   return rest;
 * };
 * const out = redact({
 *   name: "chat gpt-4o-mini",
 *   destination: "collector",
 *   kind: "otlp",
 *   receives: "names",
 *   attributes: { "gen_ai.conversation.id": "s-1", "gen_ai.operation.name": "chat" },
 * });
 * assert.deepEqual(out, { "gen_ai.operation.name": "chat" });
 * ```
 */
export type SpanRedactor = (
  span: OutgoingSpan,
) => Readonly<Record<string, AttributeValue>> | undefined;

/** A destination that spans are sent to, with its URL and protocol. */
export interface Sender {
  /** The policy's destination. */
  destination: Destination;
  /** Where the exporter sends. */
  url: string;
  /** `http/protobuf`, `http/json` or `grpc`. */
  protocol: "http/protobuf" | "http/json" | "grpc";
}

/**
 * The destinations a run sends to: the OTLP traces target when the policy matches it, and each Logfire
 * destination that `namedDestinations` found (the policy's, with `LOGFIRE_TOKEN` set).
 *
 * @param named The destinations the variables name.
 * @returns One sender each.
 * @example
 * ```ts
 * import { runSenders } from "./senders.ts";
 * runSenders([]); // []
 * ```
 */
export function runSenders(named: readonly NamedDestination[]): Sender[] {
  const out: Sender[] = [];
  for (const d of named) {
    if (!d.traces || d.destination === null) continue;
    if (d.kind !== "otlp" && d.kind !== "logfire") continue;
    const protocol = d.protocol === "grpc" || d.protocol === "http/json" ? d.protocol : "http/protobuf";
    out.push({ destination: d.destination, url: d.url, protocol });
  }
  return out;
}

/** How long one export may take before it counts as refused. */
const EXPORT_TIMEOUT_MS = 5_000;

/**
 * The batch processor of one sender: its exporter, which tells `onFailure` why an export did not go through.
 *
 * @param sender The destination, URL and protocol.
 * @param options The run's variables (headers, time limit, the Logfire token) and where failures go.
 * @returns A span processor that exports what it is given, as it is.
 */
export function senderProcessor(
  sender: Sender,
  options: { environ: Environ; onFailure: (why: string) => void },
): SpanProcessor {
  const { destination, url, protocol } = sender;
  const logfire = destination.kind === "logfire";
  const inner = lazyExporter({
    url,
    protocol,
    environ: options.environ,
    timeoutMillis: EXPORT_TIMEOUT_MS,
    // Logfire's token goes only to Logfire; the OTLP header variables are the collector's, never Logfire's.
    ...(logfire ? { headers: { Authorization: options.environ[LOGFIRE_TOKEN]?.trim() ?? "" } } : {}),
  });
  const where = `the ${logfire ? "Logfire" : "OTLP"} destination ${destination.name} (${recordableUrl(url)})`;
  return new BatchSpanProcessor(
    watchedExporter(inner, (why) => options.onFailure(`${where} refused spans: ${why}`)),
  );
}

/**
 * The OTLP exporter, whose packages (the OTLP transformer, protobufjs, the HTTP export delegate) are imported
 * only by a run that has a sender: most runs have none, and every provr start would pay for them.
 */
function lazyExporter(options: OtlpExporterOptions): SpanExporter {
  const loaded = import("./otlp_exporter.ts").then((m) => m.otlpExporter(options));
  loaded.catch(() => {/* the first export reports it */});
  return {
    export(spans, done) {
      loaded.then(
        (inner) => inner.export(spans, done),
        (error: Error) => done({ code: ExportResultCode.FAILED, error }),
      );
    },
    shutdown: () => loaded.then((inner) => inner.shutdown()),
    forceFlush: () => loaded.then((inner) => inner.forceFlush?.()),
  };
}

/**
 * An exporter that tells `onFailure` why an export did not go through (an HTTP or gRPC status, a refused
 * connection, a time out), and otherwise passes everything to `inner`.
 */
function watchedExporter(inner: SpanExporter, onFailure: (why: string) => void): SpanExporter {
  return {
    export(spans, done) {
      inner.export(spans, (result: ExportResult) => {
        if (result.code !== ExportResultCode.SUCCESS) onFailure(result.error?.message ?? "the export failed");
        done(result);
      });
    },
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  };
}

function isAttributeValue(value: unknown): value is AttributeValue {
  const scalar = (v: unknown) =>
    v === null || v === undefined || typeof v === "string" || typeof v === "boolean" ||
    (typeof v === "number");
  return Array.isArray(value) ? value.every(scalar) : value !== null && value !== undefined && scalar(value);
}

/** Sets a key as an own property, so that a key such as `__proto__` is an attribute, never a prototype. */
function put(out: Record<string, AttributeValue>, key: string, value: AttributeValue): void {
  Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
}

/** A deep frozen copy of attributes, so that a hook cannot change the span the store or another sender sees. */
function frozenCopy(attributes: ReadableSpan["attributes"]): Readonly<Record<string, AttributeValue>> {
  const out: Record<string, AttributeValue> = {};
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined) continue;
    put(out, key, (Array.isArray(value) ? Object.freeze([...value]) : value) as AttributeValue);
  }
  return Object.freeze(out);
}

/** The built-in error classes a problem may name; any other thrown value is "an error" (its name is the hook's text). */
const ERROR_NAMES: readonly [string, new () => Error][] = [
  ["TypeError", TypeError],
  ["RangeError", RangeError],
  ["ReferenceError", ReferenceError],
  ["SyntaxError", SyntaxError],
  ["Error", Error],
];

function thrownName(error: unknown): string {
  try {
    return ERROR_NAMES.find(([, type]) => error instanceof type)?.[0] ?? "a value that is not an Error";
  } catch {
    return "a value that is not an Error";
  }
}

/** What the hook returned, checked: the attributes to send, or why they cannot be. */
function returnedAttributes(
  out: unknown,
  attributes: Readonly<Record<string, AttributeValue>>,
): Record<string, AttributeValue> | string {
  if (typeof out !== "object" || out === null || Array.isArray(out)) {
    return "the redaction hook returned neither attributes nor undefined";
  }
  if (typeof (out as { then?: unknown }).then === "function") {
    return "the redaction hook returned a promise; it must return at once";
  }
  const replaced: Record<string, AttributeValue> = {};
  for (const [key, value] of Object.entries(out)) {
    if (!Object.hasOwn(attributes, key)) return "the redaction hook added an attribute";
    if (!isAttributeValue(value)) return "the redaction hook gave a value that is not an attribute";
    put(replaced, key, Array.isArray(value) ? [...value] as AttributeValue : value);
  }
  return replaced;
}

/**
 * A cut span passed through the redaction hook: the span to send, or an error naming what went wrong (the span
 * is then not sent). The error never quotes the hook's message, its error's name or a value, which may hold the
 * span's content; and nothing the hook does (a throw, a proxy whose traps throw, a getter) escapes from here.
 *
 * @param span The span, already cut to the destination's level.
 * @param options The hook and the destination.
 * @returns `{ span }` to send, or `{ error }`.
 */
export function redacted(
  span: ReadableSpan,
  options: { hook: SpanRedactor; destination: Destination },
): { span: ReadableSpan } | { error: string } {
  const { hook, destination } = options;
  const attributes = frozenCopy(span.attributes);
  let out: unknown;
  try {
    out = hook({
      name: span.name,
      destination: destination.name,
      kind: destination.kind,
      receives: destination.receives,
      attributes,
    });
  } catch (error) {
    return { error: `the redaction hook threw (${thrownName(error)})` };
  }
  if (out === undefined) return { span };
  let checked: Record<string, AttributeValue> | string;
  try {
    checked = returnedAttributes(out, attributes);
  } catch (error) {
    return { error: `reading what the redaction hook returned threw (${thrownName(error)})` };
  }
  if (typeof checked === "string") return { error: checked };
  return { span: { ...span, spanContext: () => span.spanContext(), attributes: checked } };
}

/**
 * The rows of the spans an agent program sent to a run's receiver: each span of each `spans_received` batch
 * (its payload is the request's body, decoded with provevi's OTLP decoders) is a row of `trace_spans` with its
 * own status and error; a GenAI tool span (`execute_tool`, Claude Code's `claude_code.tool`, Codex's tool
 * dispatch) is also a row of `trace_tool_calls`, with its arguments and result as the span carries them; a GenAI
 * model span (`chat`, Claude Code's `claude_code.llm_request`) is also a row of `trace_model_calls`. So "the calls
 * of tool X with arguments Y" has one answer for provrun's own tool calls and a program's.
 * @module
 */
import type { EvidenceEvent, Json } from "../../provevi/mod.ts";
import { ProveviError } from "../../provevi/evidence/mod.ts";
// Not the receiver's mod.ts: its OTLP receiver loads protobufjs, which provtrace does not need (#25).
import { batchSpans } from "../../provevi/receiver/received_batch.ts";
import type { OtlpValue, ReceivedSpan } from "../../provevi/receiver/otlp_wire.ts";
import { formatMicros } from "../../provevi/evidence/mod.ts";
import type { TraceRow } from "./trace_row.ts";
import { json } from "./_values.ts";

/** The rows a run's received spans make. */
export interface ReceivedRows {
  spans: TraceRow[];
  modelCalls: TraceRow[];
  toolCalls: TraceRow[];
}

/** What {@linkcode receivedRows} reads. */
export interface ReceivedSource {
  /** The run's ID. */
  runId: string;
  /** The run's events, in order. */
  events: readonly EvidenceEvent[];
  /** The hash of the line of an event, by its seq. */
  lineHash(seq: number): string | null;
  /** Reads a payload by its SHA-256, its hash checked. */
  payload(sha256: string): Promise<Uint8Array>;
  /** Span IDs and tool call IDs taken by the run's own rows: a received one that repeats them is kept apart. */
  taken: { spans: Set<string>; calls: Set<string> };
}

/** OTLP's status codes as the trace tables write them. */
const STATUS = ["UNSET", "OK", "ERROR"];
const MODEL_OPERATIONS = new Set(["chat", "text_completion", "generate_content"]);

/**
 * The rows of a run's received spans, in the order of their batches.
 *
 * @param source The run's events, its payloads, and the IDs its own rows took.
 * @returns The spans, model calls and tool calls.
 * @throws ProveviError when a batch's payload cannot be read or decoded.
 */
export async function receivedRows(source: ReceivedSource): Promise<ReceivedRows> {
  const out: ReceivedRows = { spans: [], modelCalls: [], toolCalls: [] };
  for (const e of source.events) {
    if (e.type !== "spans_received" || e.payload === null) continue;
    let spans: ReceivedSpan[];
    try {
      spans = batchSpans(e, await source.payload(e.payload));
    } catch (error) {
      throw new ProveviError(
        `run ${source.runId}: the spans of event ${e.seq} cannot be read: ${(error as Error).message}`,
        { cause: error },
      );
    }
    for (const span of spans) {
      // an exporter that sends a span again (a retry) sends the same span: the first is kept
      if (source.taken.spans.has(span.spanId)) continue;
      source.taken.spans.add(span.spanId);
      spanRows(span, { event: e, source, out });
    }
  }
  return out;
}

/** The rows of one received span. */
function spanRows(
  span: ReceivedSpan,
  { event, source, out }: { event: EvidenceEvent; source: ReceivedSource; out: ReceivedRows },
): void {
  const a = jsonAttributes(span.attributes);
  const kind = kindOf(span, a);
  const error = errorOf(span, a);
  const attributes: Record<string, Json> = { ...a, "mlflow.spanType": kind };
  if (kind === "TOOL") {
    const call = toolCall(span, { a, event, source, error });
    attributes["mlflow.spanInputs"] = call.arguments === null ? null : JSON.parse(call.arguments as string);
    attributes["mlflow.spanOutputs"] = call.result === null ? null : JSON.parse(call.result as string);
    out.toolCalls.push(call);
  } else if (kind === "CHAT_MODEL") out.modelCalls.push(modelCall(span, { a, event, source, error }));
  const start = nanoTime(span.startTimeUnixNano);
  const end = nanoTime(span.endTimeUnixNano);
  out.spans.push({
    run_id: source.runId,
    span_id: span.spanId,
    trace_id: span.traceId,
    parent_span_id: span.parentSpanId,
    seq: event.seq,
    line_hash: source.lineHash(event.seq),
    event_type: event.type,
    kind,
    name: span.name,
    start_time: start?.text ?? null,
    end_time: end?.text ?? null,
    duration_ms: start && end ? Number(end.nanos - start.nanos) / 1e6 : null,
    timed: start && end ? 1 : 0,
    status: STATUS[span.status.code] ?? "UNSET",
    error: error === null ? null : `${error.type}: ${error.message}`.replace(/: $/, ""),
    origin: "receiver",
    scope: span.scope.name,
    attributes: json(attributes),
  });
}

/** The span's kind, as MLflow names span types: from the GenAI operation, else from the program's own names. */
function kindOf(span: ReceivedSpan, a: Record<string, Json>): string {
  const op = str(a["gen_ai.operation.name"]);
  if (op === "execute_tool" || span.name.startsWith("execute_tool")) return "TOOL";
  if ((op !== null && MODEL_OPERATIONS.has(op)) || span.name.startsWith("chat ")) return "CHAT_MODEL";
  if (op === "invoke_agent" || op === "create_agent") return "AGENT";
  // Codex names a tool call's span after the tool, and marks its dispatch
  if (a["codex.tool.phase"] === "dispatch" && str(a.tool_name) !== null) return "TOOL";
  if (span.name === "claude_code.tool") return "TOOL";
  if (span.name === "claude_code.llm_request") return "CHAT_MODEL";
  return "UNKNOWN";
}

/** The span's error: its status when ERROR, with the type and message its exception event or attributes give. */
function errorOf(span: ReceivedSpan, a: Record<string, Json>): { type: string; message: string } | null {
  if (span.status.code !== 2) return null;
  const exception = span.events.find((e) => e.name === "exception")?.attributes ?? {};
  const type = str(exception["exception.type"]) ?? str(a["error.type"]) ?? "Error";
  const message = span.status.message || str(exception["exception.message"]) || "";
  return { type, message };
}

/** A text that holds JSON, parsed; any other value as it is. */
function parsed(value: Json | undefined): Json | undefined {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value) as Json;
  } catch {
    return value;
  }
}

/** The row of a received tool call. */
function toolCall(
  span: ReceivedSpan,
  { a, event, source, error }: {
    a: Record<string, Json>;
    event: EvidenceEvent;
    source: ReceivedSource;
    error: { type: string; message: string } | null;
  },
): TraceRow {
  const named = span.name.startsWith("execute_tool ") ? span.name.slice("execute_tool ".length) : null;
  const tool = str(a["gen_ai.tool.name"]) ?? str(a.tool_name) ?? named ?? span.name;
  let callId = str(a["gen_ai.tool.call.id"]) ?? str(a.tool_use_id) ?? str(a.call_id) ?? `span-${span.spanId}`;
  if (source.taken.calls.has(callId)) callId = `${callId}@${span.spanId}`;
  source.taken.calls.add(callId);
  const args = parsed(a["gen_ai.tool.call.arguments"] ?? a.tool_input ?? a.tool_parameters);
  const result = parsed(a["gen_ai.tool.call.result"] ?? a.tool_output);
  return {
    run_id: source.runId,
    call_id: callId,
    span_id: span.spanId,
    seq: event.seq,
    model_span_id: null,
    tool,
    arguments: args === undefined ? null : json(args),
    result: result === undefined ? null : json(result),
    error: error?.type ?? null,
    error_message: error?.message || null,
    executed_by: "program",
    deferred: 0,
    provider_run: 0,
    output_tool: 0,
  };
}

/** The row of a received model call: its usage as the GenAI names (or the program's own) give it. */
function modelCall(
  span: ReceivedSpan,
  { a, event, source, error }: {
    a: Record<string, Json>;
    event: EvidenceEvent;
    source: ReceivedSource;
    error: { type: string; message: string } | null;
  },
): TraceRow {
  const input = num(a["gen_ai.usage.input_tokens"] ?? a.input_tokens);
  const output = num(a["gen_ai.usage.output_tokens"] ?? a.output_tokens);
  const reasons = parsed(a["gen_ai.response.finish_reasons"]);
  return {
    run_id: source.runId,
    span_id: span.spanId,
    seq: event.seq,
    provider: str(a["gen_ai.provider.name"]) ?? str(a["gen_ai.system"]),
    model: str(a["gen_ai.request.model"]) ?? str(a.model),
    answered_by: str(a["gen_ai.response.model"]),
    message_format: "otel_genai",
    input_tokens: input,
    output_tokens: output,
    total_tokens: input === null && output === null ? null : (input ?? 0) + (output ?? 0),
    cache_read_input_tokens: num(a["gen_ai.usage.cache_read.input_tokens"] ?? a.cache_read_tokens),
    cache_creation_input_tokens: num(
      a["gen_ai.usage.cache_creation.input_tokens"] ?? a["gen_ai.usage.cache_write.input_tokens"] ??
        a.cache_creation_tokens,
    ),
    reasoning_tokens: num(a["gen_ai.usage.reasoning.output_tokens"]),
    finish_reason: Array.isArray(reasons) ? str(reasons[0]) : str(reasons) ?? str(a.stop_reason),
    streamed: null,
    tools: null,
    session_id: str(a["gen_ai.conversation.id"]) ?? str(a["session.id"]),
    request_sha256: null,
    response_sha256: null,
    error: error === null ? null : `${error.type}: ${error.message}`.replace(/: $/, ""),
  };
}

/** OTLP attribute values as JSON: bytes as base64. */
function jsonValue(value: OtlpValue): Json {
  if (value instanceof Uint8Array) return btoa(String.fromCharCode(...value));
  if (Array.isArray(value)) return value.map(jsonValue);
  if (value !== null && typeof value === "object") return jsonAttributes(value);
  return typeof value === "number" && !Number.isFinite(value) ? String(value) : value;
}

function jsonAttributes(values: Record<string, OtlpValue>): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const key of Object.keys(values)) {
    Object.defineProperty(out, key, {
      value: jsonValue(values[key]!),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** A time in nanoseconds since the epoch, as RFC 3339 UTC with microseconds; null for none (0). */
function nanoTime(nanos: string): { text: string; nanos: bigint } | null {
  let n: bigint;
  try {
    n = BigInt(nanos);
  } catch {
    return null;
  }
  return n <= 0n ? null : { text: formatMicros(Number(n / 1000n)), nanos: n };
}

function str(v: unknown): string | null {
  return typeof v === "string" ? v : null;
}

/** A count: a number, or a text of digits (some programs send counts as texts). */
function num(v: unknown): number | null {
  if (typeof v === "number" && Number.isFinite(v)) return v;
  if (typeof v === "string" && /^[0-9]{1,15}$/.test(v)) return Number(v);
  return null;
}

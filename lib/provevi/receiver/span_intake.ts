/**
 * One OTLP/HTTP trace request for one run: the rules of the span receiver, shared by `receiver()` (one run, in
 * the run's process) and `prove serve` (a daemon for many runs). A span belongs to the run because the request
 * reached that run's address, never because of a run ID the program wrote. Each request becomes one
 * `spans_received` event (confidence `parsed`) whose payload is its body, and each span a row of the run's span
 * index; spans for a run that is sealed or not open are refused with 409
 * and an OTLP error body; a body that is not a trace request gets 400, and a body over the size limit (as sent or
 * unpacked), a request of too many spans, or a run past its limits ({@linkcode RunBudget}) gets 413, each with a
 * `telemetry_problem` event for the run. Who may send is the caller's to check first (`run_receiver.ts`,
 * `span_daemon.ts`); what a span becomes is `span_events.ts`'s.
 * @module
 */
import protobuf from "protobufjs";
import type { EventInit } from "../evidence/chain.ts";
import { EvidenceError } from "../evidence/errors.ts";
import type { StoredSpan } from "../evidence/spans_file.ts";
import { problemData } from "../telemetry/telemetry_events.ts";
import { decodeTraceRequest, type ReceivedSpan } from "./otlp_receiver.ts";
import { decodeTraceJson, OtlpBodyError } from "./otlp_json.ts";
import {
  type BatchEncoding,
  batchEvent,
  RECEIVER_COMPONENT,
  requestRecords,
  servicesOf,
} from "./span_events.ts";
import { checkTraceRows, REPEATED_FLOOR, REPEATED_RATIO } from "./otlp_rows.ts";
import { BodyTooLarge, readSpanBody } from "./span_body.ts";
import { dropBody } from "../guard/door_body.ts";
import type { RunBudget } from "./run_budget.ts";

/**
 * The run a receiver writes to: the run's recorder in provrun has this shape. `record` appends one event to
 * the run's chain (in the order the calls are made); `payload` stores a payload by hash.
 */
export interface ReceiverRun {
  /** The run's ID. */
  readonly runId: string;
  /** True once the run is sealed: no span may arrive after. */
  readonly sealed: boolean;
  /** Appends one event to the run's chain. */
  record(init: Omit<EventInit, "actor">): Promise<unknown>;
  /** Appends several events to the run's chain, in order, at once (optional: else `record` one by one). */
  recordMany?(inits: readonly Omit<EventInit, "actor">[]): Promise<unknown>;
  /** Stores a payload; returns its SHA-256. */
  payload(content: unknown): Promise<string | null>;
  /** Stores a request's body, knowing its encoding (optional: else `payload`). */
  payloadOf?(body: Uint8Array, encoding: BatchEncoding): Promise<string | null>;
  /** Starts writing the payloads stored so far to disk, waited for by nothing (optional). */
  flushPayloads?(): void;
}

/**
 * Where span rows go: a store's `addSpans`, when it has one. Only an OTLP/JSON body's rows are written as it
 * comes: a protobuf body's are made from its payload by a reader of the run's spans (`received_rows.ts`).
 */
export interface SpanRows {
  addSpans?(runId: string, spans: readonly StoredSpan[]): Promise<void>;
}

/** The default body size limit, as sent and after gzip is undone: 16 MiB. */
export const DEFAULT_MAX_BODY = 16 * 1024 * 1024;

/** The default limit of spans in one request: 16,384 (an OTLP exporter sends 512 at a time). */
export const DEFAULT_MAX_REQUEST_SPANS = 16_384;

const STATUS_ROOT = protobuf.parse(
  `syntax = "proto3"; package rpc; message Status { int32 code = 1; string message = 2; }
   message PartialSuccess { int64 rejected_spans = 1; string error_message = 2; }
   message ExportTraceServiceResponse { PartialSuccess partial_success = 1; }`,
  { keepCase: true },
).root;
const STATUS = STATUS_ROOT.lookupType("rpc.Status");
const OK_RESPONSE = STATUS_ROOT.lookupType("rpc.ExportTraceServiceResponse");

/** gRPC status codes the OTLP error body carries. */
const CODES = {
  400: 3,
  401: 16,
  403: 7,
  404: 5,
  405: 12,
  409: 9,
  413: 8,
  415: 3,
  421: 3,
  503: 14,
} as Record<number, number>;

function isJson(contentType: string | null): boolean {
  return (contentType ?? "").split(";")[0]!.trim().toLowerCase() === "application/json";
}

/**
 * An OTLP error response: a `google.rpc.Status` in the request's encoding (protobuf unless it sent JSON), as
 * the OTLP/HTTP specification asks of a failed export.
 *
 * @param status The HTTP status.
 * @param message One line that says what is wrong and what to do.
 * @param contentType The request's content type, to answer in the same encoding.
 * @returns The response.
 */
export function otlpError(status: number, message: string, contentType: string | null): Response {
  const code = CODES[status] ?? 2;
  if (isJson(contentType)) {
    return Response.json({ code, message }, { status });
  }
  const body = STATUS.encode(STATUS.create({ code, message })).finish();
  return new Response(new Uint8Array(body), {
    status,
    headers: { "content-type": "application/x-protobuf" },
  });
}

/** An empty `ExportTraceServiceResponse`, encoded once: every export taken whole gets the same bytes. */
const OK_BODY = new Uint8Array(OK_RESPONSE.encode(OK_RESPONSE.create({})).finish());

function otlpOk(contentType: string | null): Response {
  if (isJson(contentType)) return Response.json({});
  return new Response(OK_BODY.slice(), { headers: { "content-type": "application/x-protobuf" } });
}

/**
 * A request's spans: an OTLP/JSON body's decoded (their rows are written as it comes), a protobuf body's
 * counted with their services (their rows are made from the payload when the run's spans are read).
 */
type Decoded =
  | { count: number; spans: ReceivedSpan[] }
  | { count: number; services: Set<string> };

function decode(body: Uint8Array, contentType: string | null): Decoded {
  if (isJson(contentType)) {
    const spans = decodeTraceJson(new TextDecoder("utf-8", { fatal: false }).decode(body));
    refuseRepeatedScope(spans, body.length);
    return { count: spans.length, spans };
  }
  // checked as the rows' pass reads it, without making its rows; else the general way, which says what is wrong
  const checked = checkTraceRows(body);
  if (checked !== null) return { count: checked.spans, services: checked.services };
  const spans = decodeProtobuf(body);
  refuseRepeatedScope(spans, body.length);
  return { count: spans.length, services: servicesOf(spans) };
}

/**
 * Refuses spans whose rows would repeat a long scope name or version in each row: one name of a megabyte in a
 * body of ten thousand small spans made ten gigabytes of rows, which took the receiver's process down. Every
 * other part of a row is the span's own, or short.
 */
export function refuseRepeatedScope(spans: readonly ReceivedSpan[], bytes: number): void {
  let repeated = 0;
  for (const s of spans) repeated += s.scope.name.length + s.scope.version.length;
  if (repeated > bytes * REPEATED_RATIO + REPEATED_FLOOR) {
    throw new OtlpBodyError(
      `the spans repeat their scope's name and version in each row, ${repeated} characters in all, more than ` +
        `${REPEATED_RATIO} times the body's ${bytes} bytes; send a shorter instrumentation scope name`,
    );
  }
}

function decodeProtobuf(body: Uint8Array): ReceivedSpan[] {
  let spans: ReceivedSpan[];
  try {
    spans = decodeTraceRequest(body);
  } catch (error) {
    throw new OtlpBodyError(`not an ExportTraceServiceRequest: ${(error as Error).message}`);
  }
  // The decoder writes IDs as lowercase hex, two digits a byte: their length is all there is to check.
  for (const s of spans) {
    if (s.traceId.length !== 32 || s.spanId.length !== 16) {
      throw new OtlpBodyError(
        `a span has a trace ID of ${s.traceId.length / 2} bytes or a span ID of ${
          s.spanId.length / 2
        } bytes (16 and 8 are needed)`,
      );
    }
    if (s.parentSpanId !== null && s.parentSpanId.length !== 16) {
      throw new OtlpBodyError("a span's parent span ID is not 8 bytes");
    }
  }
  return spans;
}

/** What the intake did with a request, for a caller that counts (`prove serve`, tests). */
export interface IntakeResult {
  status: number;
  spans: number;
}

/** Options of {@linkcode takeTraces}. */
export interface IntakeOptions {
  /** The body size limit in bytes, as sent and after gzip; {@linkcode DEFAULT_MAX_BODY} by default. */
  maxBytes?: number;
  /** The most spans one request may hold; {@linkcode DEFAULT_MAX_REQUEST_SPANS} by default. */
  maxSpans?: number;
  /** Called with what was done. */
  onResult?: (result: IntakeResult) => void;
}

/** The run a request reached: its recorder, where its span rows go, and what it may still send. */
export interface IntakeTarget {
  run: ReceiverRun;
  rows: SpanRows;
  /** The run's budget; none means no limit but the request's own. */
  budget?: RunBudget;
  /**
   * Whether the run still takes spans, asked once the body is decoded and before anything is counted or
   * written: null when it does, else the refusal (not written as the run's problem: its writer is gone).
   */
  admit?: () => Promise<{ status: number; message: string } | null>;
}

/** The spans of a request, or the refusal to answer with (and write as the run's problem). */
async function spansOf(
  request: Request,
  contentType: string | null,
  { target, options }: { target: IntakeTarget; options: IntakeOptions },
): Promise<
  | { decoded: Decoded; body: Uint8Array }
  | { status: number; message: string; always?: boolean; quiet?: boolean }
> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BODY;
  const maxSpans = options.maxSpans ?? DEFAULT_MAX_REQUEST_SPANS;
  let body: Uint8Array;
  let decoded: Decoded;
  try {
    body = await readSpanBody(request, maxBytes);
    decoded = decode(body, contentType);
  } catch (error) {
    if (error instanceof BodyTooLarge) return { status: 413, message: error.message };
    const message = error instanceof Error ? error.message : String(error);
    return { status: 400, message: message.split("\n")[0]!.slice(0, 500) };
  }
  const spans = decoded.count;
  if (spans > maxSpans) {
    return {
      status: 413,
      message: `the request holds ${spans} spans, over the receiver's limit of ${maxSpans} a request; ` +
        `send smaller batches (OTEL_BSP_MAX_EXPORT_BATCH_SIZE)`,
    };
  }
  const refused = await target.admit?.() ?? null;
  if (refused !== null) return { ...refused, quiet: true };
  const fresh = target.budget?.over === null;
  const over = target.budget?.take(spans, body.byteLength) ?? null;
  // the request that passes the run's limit is told, past the limit of problems too; the ones after are not
  if (over !== null) return { status: 413, message: `run ${target.run.runId}: ${over}`, always: fresh };
  return { decoded, body };
}

/**
 * Takes one `POST /v1/traces` request for one run: decodes it, writes its spans' rows, its body as a payload
 * and one `spans_received` event, and answers as OTLP/HTTP asks. The caller has matched the path and checked who sent it.
 *
 * @param request The HTTP request.
 * @param target The run, its store's span rows and its budget, or null when the address names no open run.
 * @param options The size limits.
 * @returns The response: 200, or 400, 405, 409, 413, 415, 503 with an OTLP error body.
 */
export async function takeTraces(
  request: Request,
  target: IntakeTarget | null,
  options: IntakeOptions = {},
): Promise<Response> {
  const contentType = request.headers.get("content-type");
  const answer = (status: number, message: string, spans = 0) => {
    options.onResult?.({ status, spans });
    return otlpError(status, message, contentType);
  };
  if (request.method !== "POST") {
    await dropBody(request);
    return answer(405, "send spans with POST to /v1/traces");
  }
  if (target === null || target.run.sealed) {
    await dropBody(request);
    return answer(
      409,
      target === null
        ? "no open run takes spans at this address; a run's receiver takes spans only while the run is open"
        : `run ${target.run.runId} is sealed; it takes no more spans`,
    );
  }
  const { run } = target;
  const type = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/x-protobuf" && type !== "application/json") {
    await dropBody(request);
    const message = "send application/x-protobuf or application/json";
    await refusalProblem(target, `the span receiver refused a request: ${message}`);
    return answer(415, message);
  }
  const taken = await spansOf(request, contentType, { target, options });
  if (!("decoded" in taken)) {
    if (!taken.quiet) {
      await refusalProblem(target, `the span receiver refused a body: ${taken.message}`, taken.always);
    }
    return answer(taken.status, taken.message);
  }
  try {
    await recordSpans(taken, { target, encoding: isJson(contentType) ? "json" : "protobuf" });
  } catch (error) {
    if (run.sealed) return answer(409, `run ${run.runId} is sealed; it takes no more spans`);
    if (!(error instanceof EvidenceError)) {
      // spans no evidence line can hold: nothing of them was written, and sending them again will not help
      const message = `the span receiver refused spans it cannot record: ${(error as Error).message}`
        .split("\n")[0]!.slice(0, 500);
      await refusalProblem(target, message);
      return answer(400, message);
    }
    return answer(
      503,
      `the run's evidence cannot take the spans: ${(error as Error).message}`.split("\n")[0]!,
    );
  }
  options.onResult?.({ status: 200, spans: taken.decoded.count });
  return otlpOk(contentType);
}

/**
 * Writes a request's spans: their rows in the run's span index, then the body as one payload and the batch's one
 * `spans_received` event, so that a request costs one payload and one line however many spans it holds.
 */
async function recordSpans(
  { decoded, body }: { decoded: Decoded; body: Uint8Array },
  { target: { run, rows }, encoding }: { target: IntakeTarget; encoding: BatchEncoding },
): Promise<void> {
  // The rows are an index beside the evidence, written before it, so that a request whose rows fail (503,
  // which the exporter sends again) leaves no event behind.
  let event: Omit<EventInit, "actor">;
  if ("services" in decoded) {
    event = batchEvent(decoded.services, { encoding, spans: decoded.count }); // a reader makes its rows
  } else {
    const records = requestRecords(decoded.spans, { encoding });
    await rows.addSpans?.(run.runId, records.rows);
    event = records.event;
  }
  const sha256 = run.payloadOf ? await run.payloadOf(body, encoding) : await run.payload(body);
  // lenient mode lost the body: the event says so by naming no payload, and still counts the spans
  await run.record({ ...event, payload: sha256 });
}

/**
 * Writes a refusal as the run's `telemetry_problem`, while its budget allows: past its limit of problems, one
 * last problem says that the rest are counted only.
 */
async function refusalProblem({ run, budget }: IntakeTarget, text: string, always = false): Promise<void> {
  const may = always ? "write" : budget?.problem() ?? "write";
  if (may === "skip") return;
  const line = may === "last"
    ? `${text.slice(0, 400)} (the receiver's limit of ${
      budget!.limits.maxProblems
    } problems a run is reached: ` +
      `further refusals are counted, not written)`
    : text.slice(0, 500);
  try {
    await run.record({ type: "telemetry_problem", component: RECEIVER_COMPONENT, data: problemData(line) });
  } catch { /* a sealed or broken run: the answer still says it */ }
}

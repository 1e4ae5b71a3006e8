/**
 * One model call through the gateway, recorded: its step opens when the request arrives, the request's bytes are
 * stored as they came (while the call goes on), and the call ends as `model_called` (the response stored as the
 * provider sent it, or, for a stream, the response reassembled and the raw stream), or as `step_failed` with what
 * arrived (a provider's error, garbage, a stream cut short, silence, too many bytes, a program that hung up).
 * The data has the shape of the agent backend's `model_called`: provider, model, usage, finish reason, the tool
 * calls asked for, timings; and what only the gateway knows: the API, the HTTP status, the response's ID.
 * @module
 */
import type { Json } from "../../provevi/mod.ts";
import type { EvidenceRecorder, OpenStep } from "../run/recorder.ts";
import { SpanKind } from "@opentelemetry/api";
import { type ApiName, obj, parseJson, type ProviderApi, type ResponseSummary } from "./provider_api.ts";
import {
  chatEndAttributes,
  chatRequestAttributes,
  type GatewaySpanContext,
  offeredTools,
} from "./gateway_span.ts";
import { gatewayContent } from "./gateway_content.ts";
import { setSpanContent, spanContentWanted } from "../run/_span_content.ts";

/** What a call of the gateway is recorded with. */
export interface CallRecording {
  recorder: EvidenceRecorder;
  /** The class named as the events' component. */
  component: string;
  /** The run's provider (`anthropic`, `openai`, `openai-compatible`). */
  provider: string;
  /** The run's price of a call's data, or null to leave the cost out. */
  price: ((data: { [key: string]: Json }) => string | null) | null;
  /** Told of each call that ended, recorded. */
  onCall?: (call: RecordedCall) => void;
  /** The provider, server and conversation its `chat` span names. */
  span: GatewaySpanContext;
  /** Told of the tools each request offered, with their descriptions. */
  onTools?: (tools: [string, string][]) => void;
}

/** A call as the gateway recorded it: for the run's part (the cross-check against the session file). */
export interface RecordedCall {
  seq: number | null;
  api: ApiName;
  ok: boolean;
  responseId: string | null;
  summary: ResponseSummary | null;
}

/** How a call failed, for its `step_failed`. */
export interface CallFailure {
  /** The error's name: `ProviderError`, `ProviderGarbage`, `StreamCut`, `ProviderTimeout`, `PayloadTooLarge`, … */
  name: string;
  message: string;
  /** The HTTP status the provider answered with, or null. */
  status: number | null;
  /** What arrived of the response (its bytes), or null. */
  response: Uint8Array | null;
}

/** Errors with a name, for `step_failed`. */
class CallError extends Error {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
}

/** One call, from its request to its event. */
export class GatewayCall {
  readonly #rec: CallRecording;
  readonly #api: ProviderApi;
  readonly #step: OpenStep;
  readonly #bytes: Uint8Array;
  readonly #model: string | null;
  /** Whether the request asked for a stream; read with the request, off the way to the first token. */
  #requestStream = false;
  /** The request's JSON, kept only when a destination receives the call's content. */
  #body: Json | undefined;
  /** True when the provider answered with a stream; null until it answered. */
  streamed: boolean | null = null;
  readonly #t0 = performance.now();
  firstByteMs: number | null = null;
  #done = false;
  #stored: Promise<string | null> | null = null; // the request's payload, once its storing started
  #soon: ReturnType<typeof setTimeout> | null = null;
  #response: Promise<string | null> | null = null; // the response's, when it started before the body was read

  /**
   * Opens the call's step as the request arrives, its span with what the conventions want at a span's start
   * (the operation, provider, model and server); the request itself is read and stored later
   * ({@linkcode storeRequest}), once it is on its way.
   *
   * @param rec The recorder and what the events say.
   * @param call The API, the request's bytes and the model it names.
   */
  constructor(
    rec: CallRecording,
    call: { api: ProviderApi; bytes: Uint8Array; model: string | null },
  ) {
    this.#rec = rec;
    this.#api = call.api;
    this.#model = call.model;
    this.#bytes = call.bytes;
    this.#step = rec.recorder.startStep({
      component: rec.component,
      spanName: `chat ${call.model ?? ""}`.trim(),
      // a model over HTTP: a CLIENT span, as the conventions ask
      kind: SpanKind.CLIENT,
      // opened once the request is on its way (`storeRequest`), off the way to the first token
      spanLater: true,
      attributes: chatRequestAttributes(call.api.name, {
        body: undefined,
        model: call.model,
        context: rec.span,
      }),
    });
  }

  /**
   * Reads the request and starts storing it, once: the call's span opens (with the call's start), its settings
   * go on it, its tools to `onTools`, and its bytes to the store. The gateway calls it while the provider works
   * (when the answer's headers came, or after a stream's first chunk went on), so that neither the program's first token nor the record of the answer
   * waits for it: a large request (a program sends its whole conversation each time) is parsed only then. The
   * call's event waits for it, so its payload is on disk before its event.
   */
  storeRequest(): void {
    if (this.#soon !== null) clearTimeout(this.#soon);
    this.#soon = null;
    if (this.#stored !== null) return;
    this.#stored = this.#rec.recorder.payload(this.#bytes);
    this.#stored.catch(() => {}); // awaited, with its error, by the call's end
    const body = parseJson(new TextDecoder().decode(this.#bytes));
    this.#requestStream = obj(body).stream === true;
    if (this.#rec.onTools) this.#rec.onTools(offeredTools(body));
    this.#step.span.setAttributes(
      chatRequestAttributes(this.#api.name, { body, model: this.#model, context: this.#rec.span }),
    );
    if (spanContentWanted(this.#step.span)) this.#body = body;
  }

  /**
   * Reads and stores the request on a later turn of the event loop: after a stream's first chunk, so that the
   * server writes that chunk to the program first (everything here runs on one thread). Arming the turn's timer is
   * itself a measurable part of the way to the first token, so the gateway asks for it once a read after that
   * chunk returned. The call's end does it at the latest.
   */
  storeRequestSoon(): void {
    if (this.#stored !== null || this.#soon !== null) return;
    this.#soon = setTimeout(() => this.storeRequest(), 0);
  }

  /**
   * Starts storing a response's bytes as the provider sent them, before the gateway reads what they say: a large
   * body goes to disk on a file thread while this one parses it. `ok` then takes this payload.
   */
  storeResponse(bytes: Uint8Array): void {
    if (this.#response !== null) return;
    this.#response = this.#rec.recorder.payload(bytes);
    this.#response.catch(() => {}); // awaited, with its error, by `ok`
  }

  #request(): Promise<string | null> {
    this.storeRequest();
    return this.#stored!;
  }

  /** Notes the first byte of the provider's answer. */
  firstByte(): void {
    this.firstByteMs ??= Math.round((performance.now() - this.#t0) * 1000) / 1000;
  }

  #base(): { [key: string]: Json } {
    return {
      provider: this.#rec.provider,
      model: this.#model,
      // what the request asked, when the provider never answered
      streamed: this.streamed ?? this.#requestStream,
      via: "gateway",
      api: this.#api.name,
      request_bytes: this.#bytes.byteLength,
      first_byte_ms: this.firstByteMs,
      duration_ms: Math.round((performance.now() - this.#t0) * 1000) / 1000,
    };
  }

  /**
   * Ends the call as `model_called`.
   *
   * @param answer The HTTP status, the response body as JSON, its bytes as the provider sent them (null for a
   *   stream: the reassembled body is stored), and the raw stream (null when it did not stream).
   */
  async ok(
    answer: { status: number; body: Json; bytes: Uint8Array | null; stream: Uint8Array | null },
  ): Promise<void> {
    if (this.#done) return;
    this.#done = true;
    const { recorder } = this.#rec;
    const summary = this.#api.summary(answer.body);
    const request = await this.#request();
    const response = await (this.#response ?? recorder.payload(answer.bytes ?? JSON.stringify(answer.body)));
    const stream = answer.stream ? await recorder.payload(answer.stream) : null;
    const u = summary.usage;
    const data: { [key: string]: Json } = {
      ...this.#base(),
      status: answer.status,
      response_id: summary.id,
      answered_by: summary.model ?? this.#model,
      input_tokens: u.input,
      output_tokens: u.output,
      cache_read_tokens: u.cacheRead,
      cache_write_tokens: u.cacheWrite,
      reasoning_tokens: u.reasoning,
      finish_reason: summary.finish,
      provider_finish_reason: summary.providerFinish,
      tool_calls: summary.toolCalls,
      response_payload: response,
      ...(stream ? { stream_payload: stream } : {}),
      response_bytes: answer.bytes?.byteLength ?? answer.stream?.byteLength ?? 0,
    };
    if (this.#rec.price) data.cost = this.#rec.price(data);
    this.#content(answer.body, summary.finish);
    this.#step.span.setAttributes(chatEndAttributes(summary, {
      model: this.#model,
      firstChunk: this.streamed && this.firstByteMs !== null ? this.firstByteMs / 1000 : null,
    }));
    const event = await this.#step.end("model_called", { payload: request, data });
    this.#rec.onCall?.({
      seq: event?.seq ?? null,
      api: this.#api.name,
      ok: true,
      responseId: summary.id,
      summary,
    });
  }

  /** Puts the call's content on its span, when a destination receives it. */
  #content(response: Json | null, finish: string | null): void {
    if (this.#body === undefined) return;
    const request = this.#body;
    setSpanContent(this.#step.span, () => gatewayContent(this.#api.name, { request, response, finish }));
  }

  /**
   * Ends the call as `step_failed` (step `model_called`), with what arrived: the response's bytes, and, for a
   * stream, the response reassembled so far and its usage.
   *
   * @param failure How it failed.
   * @param partial The reassembled body of a stream cut short, or null.
   */
  async failed(failure: CallFailure, partial: Json | null = null): Promise<void> {
    if (this.#done) return;
    this.#done = true;
    this.storeRequest(); // the request is read before its part of the data
    const { recorder } = this.#rec;
    const response = failure.response ? await recorder.payload(failure.response).catch(() => null) : null;
    const summary = partial === null ? null : this.#api.summary(partial);
    const data: { [key: string]: Json } = {
      ...this.#base(),
      status: failure.status,
      partial: partial !== null,
      ...(response ? { [partial === null ? "response_payload" : "stream_payload"]: response } : {}),
    };
    if (summary) {
      data.response_payload = await recorder.payload(JSON.stringify(partial)).catch(() => null);
      Object.assign(data, {
        response_id: summary.id,
        answered_by: summary.model ?? this.#model,
        input_tokens: summary.usage.input,
        output_tokens: summary.usage.output,
        cache_read_tokens: summary.usage.cacheRead,
        cache_write_tokens: summary.usage.cacheWrite,
        reasoning_tokens: summary.usage.reasoning,
      });
      if (this.#rec.price) data.cost = this.#rec.price(data);
    }
    this.#content(partial, summary?.finish ?? null);
    const event = await this.#step.fail("model_called", new CallError(failure.name, failure.message), {
      payload: await this.#request().catch(() => null),
      data,
    });
    this.#rec.onCall?.({
      seq: event?.seq ?? null,
      api: this.#api.name,
      ok: false,
      responseId: summary?.id ?? null,
      summary,
    });
  }
}

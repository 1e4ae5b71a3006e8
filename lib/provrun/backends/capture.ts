/**
 * Capture of model calls: an AI SDK language-model middleware whose `wrapGenerate` and `wrapStream` write
 * `model_called` for every request, streamed or not, with the request and the reply as payloads and the token
 * counts in `data`. A stream that fails part way records what arrived, then `step_failed`. A tool that the
 * provider ran (a tool result in the model's reply) is written as `tool_called` just after its
 * `model_called`, with confidence `parsed`, no `started_at`, and its span inside the model call's span.
 * @module
 */
import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4Middleware,
  LanguageModelV4StreamPart,
  LanguageModelV4Usage,
} from "@ai-sdk/provider";
import { wrapLanguageModel } from "ai";
import type { Json } from "../../provevi/mod.ts";
import { canonicalOrNull } from "../../provevi/evidence/mod.ts";
import { toolContent } from "../../provevi/telemetry/mod.ts";
import { setSpanContent } from "../run/_span_content.ts";
import { errorMessage, errorName, type EvidenceRecorder, type OpenStep } from "../run/recorder.ts";
import { SERVED_FROM, type ServedFrom } from "../run/run_part.ts";
import { chatContentOn, chatEnd, type ChatSpanContext, chatStart } from "./chat_span.ts";
import { TOKEN_IDS_KEY } from "./token_ids.ts";

/** The token counts of one model call. */
export interface CallUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

/** Options of the capture. */
export interface CaptureOptions extends ChatSpanContext {
  /** The class named as each event's component. */
  component: string;
  /** Called after each call with its usage, so the run can enforce its token limit. */
  onUsage?: (usage: CallUsage) => void;
  /** Called with each piece of a streamed answer as it arrives (the live feed). */
  onText?: (piece: string) => void;
  /** Called with a whole reply that did not stream, before its `model_called` (the live feed). */
  onReply?: (reply: Json) => void;
  /**
   * False when a model gateway records each call at the boundary: the capture then records nothing and only
   * gives the text, the replies and the usage to the callbacks. True by default.
   */
  record?: boolean;
  /** The cost of a call from its `model_called` data (the run's price table), written as its `cost`. */
  price?: (data: { [key: string]: Json }) => string | null;
}

/**
 * Wraps a model so that every request it answers is recorded.
 *
 * @param model The provider's model.
 * @param recorder The run's recorder.
 * @param options The component and a usage callback.
 * @returns The wrapped model, to pass to `generateText` or `streamText`.
 * @example
 * ```ts
 * import { captureModel } from "./capture.ts";
 * // const model = captureModel(openai("gpt-4o-mini"), recorder, { component: "CallBackend" });
 * ```
 */
export function captureModel(
  model: LanguageModelV4,
  recorder: EvidenceRecorder,
  options: CaptureOptions,
): LanguageModelV4 {
  const capture: Capture = { recorder, model, options };
  if (options.record === false) return wrapLanguageModel({ model, middleware: observing(options) });
  const middleware: LanguageModelV4Middleware = {
    specificationVersion: "v4",
    wrapGenerate: ({ doGenerate, params }) => generateCaptured(capture, params, doGenerate),
    wrapStream: async ({ doStream, params }) => {
      const started = performance.now();
      const { step, result, request, asked } = await openCall(capture, params, {
        streamed: true,
        call: doStream,
      });
      const reader = result.stream.getReader();
      return {
        ...result,
        stream: new StreamCapture(capture, { step, request, asked, started, reader }).stream,
      };
    },
  };
  return wrapLanguageModel({ model, middleware });
}

/** A middleware that records nothing: it gives the text, the replies and the usage to the callbacks. */
function observing(options: CaptureOptions): LanguageModelV4Middleware {
  return {
    specificationVersion: "v4",
    wrapGenerate: async ({ doGenerate }) => {
      const result = await doGenerate();
      options.onReply?.({ content: result.content, finish_reason: result.finishReason } as unknown as Json);
      options.onUsage?.(usageOf(result.usage));
      return result;
    },
    wrapStream: async ({ doStream }) => {
      const result = await doStream();
      const stream = result.stream.pipeThrough(
        new TransformStream<LanguageModelV4StreamPart, LanguageModelV4StreamPart>({
          transform(part, controller) {
            if (part.type === "text-delta") options.onText?.(part.delta);
            else if (part.type === "finish") options.onUsage?.(usageOf(part.usage));
            controller.enqueue(part);
          },
        }),
      );
      return { ...result, stream };
    },
  };
}

/** What the capture of one model holds. */
interface Capture {
  recorder: EvidenceRecorder;
  model: LanguageModelV4;
  options: CaptureOptions;
}

type DoGenerate = () => PromiseLike<Awaited<ReturnType<LanguageModelV4["doGenerate"]>>>;

/**
 * The model a call asked, as it was when the call started: a model that serves some calls from a run's evidence
 * and others live (a fork, a resume) names, call by call, the model each one asked.
 */
interface Asked {
  readonly provider: string;
  readonly modelId: string;
  /** The run and event a part served this call from (`data.served_from`), or null. */
  servedFrom: ServedFrom | null;
}

/** A call that did not stream: recorded once its whole reply is in. */
async function generateCaptured(
  capture: Capture,
  params: LanguageModelV4CallOptions,
  doGenerate: DoGenerate,
): Promise<Awaited<ReturnType<DoGenerate>>> {
  const { recorder, options } = capture;
  const { step, result, request: requestSha, asked } = await openCall(capture, params, {
    streamed: false,
    call: doGenerate,
  });
  const reply = {
    content: result.content,
    finish_reason: result.finishReason,
    usage: result.usage,
    response: { id: result.response?.id, model: result.response?.modelId, body: result.response?.body },
  } as unknown as Json;
  const replySha = await recorder.payload(reply);
  chatContentOn(step, null, reply);
  options.onReply?.(reply);
  const toolCalls = result.content.filter((c) => c.type === "tool-call").map((c) => ({
    id: c.toolCallId,
    name: c.toolName,
  }));
  await endCall(step, asked, options, {
    streamed: false,
    request: requestSha,
    reply: replySha,
    answeredBy: result.response?.modelId ?? null,
    responseId: result.response?.id ?? null,
    usage: result.usage,
    finish: result.finishReason.unified,
    firstChunk: null,
    toolCalls,
    tokens: await tokensPayload(recorder, result.providerMetadata),
  });
  await recordProviderTools(recorder, step, options, result.content);
  return result;
}

/**
 * A streamed call: the parts pass through as they arrive, and the call is recorded when the stream ends
 * (`model_called`), fails or carries an error part (`step_failed` with what arrived), or is cancelled.
 */
class StreamCapture {
  readonly stream: ReadableStream<LanguageModelV4StreamPart>;
  readonly #capture: Capture;
  readonly #step: OpenStep;
  readonly #request: string | null;
  readonly #asked: Asked;
  readonly #started: number;
  #firstChunk: number | null = null;
  #responseId: string | null = null;
  readonly #arrived: LanguageModelV4StreamPart[] = [];
  readonly #toolCalls: { id: string; name: string }[] = [];
  readonly #providerParts: LanguageModelV4Content[] = [];
  #text = "";
  /** The text of each block, by its ID: kept when an answer has more than one, so that it can be served again. */
  readonly #blocks = new Map<string, string>();
  #usage: LanguageModelV4Usage | null = null;
  #finish = "other";
  #answeredBy: string | null = null;
  #tokens: unknown = undefined;
  #done = false;
  #streamError: unknown = null;

  constructor(
    capture: Capture,
    call: {
      step: OpenStep;
      request: string | null;
      asked: Asked;
      /** `performance.now()` when the request went. */
      started: number;
      reader: ReadableStreamDefaultReader<LanguageModelV4StreamPart>;
    },
  ) {
    this.#capture = capture;
    this.#step = call.step;
    this.#request = call.request;
    this.#asked = call.asked;
    this.#started = call.started;
    const { reader } = call;
    this.stream = new ReadableStream<LanguageModelV4StreamPart>({
      pull: async (controller) => {
        let next;
        try {
          next = await reader.read();
        } catch (error) {
          await this.#failed(error);
          controller.error(error);
          return;
        }
        if (next.done) {
          await this.#ended();
          controller.close();
          return;
        }
        this.#take(next.value);
        // The call is recorded at its finish, before the finish reaches the loop: the AI SDK starts the tools
        // the answer asks for at the finish, and a run cut while a tool runs must have the request on record.
        if (next.value.type === "finish") await this.#ended();
        controller.enqueue(next.value);
      },
      cancel: async (reason) => {
        await this.#cancelled(reason);
        await reader.cancel(reason);
      },
      // No part is read ahead: the finish (and the call's record) comes only when the loop asks for it, after
      // what the loop's own wrappers record of the parts before it (an output tool's call).
    }, { highWaterMark: 0 });
  }

  #summary() {
    return {
      text: this.#text,
      ...(this.#blocks.size > 1 ? { text_blocks: Object.fromEntries(this.#blocks) } : {}),
      parts: this.#arrived,
      usage: this.#usage,
      finish_reason: this.#finish,
      response: { model: this.#answeredBy },
    };
  }

  /** Keeps what a part says: the text, the model that answered, tool calls, usage, an error. */
  #take(part: LanguageModelV4StreamPart): void {
    if (this.#firstChunk === null && part.type !== "stream-start") {
      this.#firstChunk = (performance.now() - this.#started) / 1000;
    }
    if (part.type === "text-delta") {
      this.#text += part.delta;
      this.#blocks.set(part.id, (this.#blocks.get(part.id) ?? "") + part.delta);
      this.#capture.options.onText?.(part.delta);
    } else if (part.type === "response-metadata") {
      this.#answeredBy = part.modelId ?? this.#answeredBy;
      this.#responseId = part.id ?? this.#responseId;
    } else if (part.type === "tool-call") this.#toolCalls.push({ id: part.toolCallId, name: part.toolName });
    if ((part.type === "tool-call" && part.providerExecuted) || part.type === "tool-result") {
      this.#providerParts.push(part);
    } else if (part.type === "finish") {
      this.#usage = part.usage;
      this.#finish = part.finishReason.unified;
      this.#tokens = part.providerMetadata;
    }
    if (part.type === "error") {
      this.#streamError ??= part.error ?? new Error("the provider reported an error in the stream");
      // An Error is `{}` as JSON; keep its name and message.
      this.#arrived.push({
        type: "error",
        error: { name: errorName(part.error), message: errorMessage(part.error) },
      });
    } else if (part.type !== "text-delta") this.#arrived.push(part);
  }

  /** The stream failed part way: `step_failed` with what arrived. */
  async #failed(error: unknown): Promise<void> {
    if (this.#done) return;
    this.#done = true;
    const { recorder } = this.#capture;
    const reply = await recorder.payload({ ...this.#summary(), partial: true } as unknown as Json);
    await this.#step.fail("model_called", error, {
      payload: this.#request,
      data: {
        ...callData(this.#asked, true),
        partial: true,
        response_payload: reply,
        chars: this.#text.length,
      },
    });
  }

  /** The stream ended: `model_called`, or `step_failed` when the provider reported an error inside it. */
  async #ended(): Promise<void> {
    if (this.#done) return;
    this.#done = true;
    const { recorder, options } = this.#capture;
    const model = this.#asked;
    if (this.#streamError !== null) {
      // The provider reported an error inside the stream (an `error` part) and then ended it: the call failed,
      // though nothing threw here, so it is a step_failed with what arrived.
      const reply = await recorder.payload({ ...this.#summary(), partial: true } as unknown as Json);
      const u = usageOf(this.#usage);
      await this.#step.fail("model_called", this.#streamError, {
        payload: this.#request,
        data: {
          ...callData(model, true),
          partial: true,
          response_payload: reply,
          chars: this.#text.length,
          finish_reason: this.#finish,
          input_tokens: u.input,
          output_tokens: u.output,
        },
      });
      options.onUsage?.(u);
      return;
    }
    const summary = this.#summary() as unknown as Json;
    const reply = await recorder.payload(summary);
    chatContentOn(this.#step, null, summary);
    await endCall(this.#step, model, options, {
      streamed: true,
      request: this.#request,
      reply,
      answeredBy: this.#answeredBy,
      responseId: this.#responseId,
      usage: this.#usage,
      finish: this.#finish,
      firstChunk: this.#firstChunk,
      toolCalls: this.#toolCalls,
      tokens: await tokensPayload(recorder, this.#tokens),
    });
    await recordProviderTools(recorder, this.#step, options, this.#providerParts);
  }

  /** The reader of the stream stopped early: `step_failed`, partial. */
  async #cancelled(reason: unknown): Promise<void> {
    if (this.#done) return;
    this.#done = true;
    await this.#step.fail("model_called", reason ?? new Error("the stream was cancelled"), {
      payload: this.#request,
      data: { ...callData(this.#asked, true), partial: true },
    });
  }
}

/**
 * Starts a model call's step and makes the call inside it. A call that throws is written as `step_failed`
 * with the parameters sent, and thrown again; else the request (parameters and wire body) is stored.
 */
async function openCall<R extends { request?: { body?: unknown } }>(
  capture: Capture,
  params: LanguageModelV4CallOptions,
  run: { streamed: boolean; call: () => PromiseLike<R> },
): Promise<{ step: OpenStep; result: R; request: string | null; asked: Asked }> {
  const { recorder, options } = capture;
  const { call } = run;
  const model: Asked = { provider: capture.model.provider, modelId: capture.model.modelId, servedFrom: null };
  const step = startCall(recorder, model, params, { ...options, streamed: run.streamed });
  const sent = await paramsJson(recorder, params);
  chatContentOn(step, sent, null);
  let result: R;
  try {
    result = await step.within(() => call());
  } catch (error) {
    model.servedFrom = servedFromOf(error);
    await step.fail("model_called", error, {
      payload: await recorder.payload(canonicalText({ params: sent })),
      data: callData(model, run.streamed),
    });
    throw error;
  }
  const request = await recorder.payload(
    canonicalText(await requestBody(recorder, sent, result.request?.body)),
  );
  model.servedFrom = servedFromOf(result);
  return { step, result, request, asked: model };
}

function startCall(
  recorder: EvidenceRecorder,
  model: Asked,
  params: LanguageModelV4CallOptions,
  options: CaptureOptions & { streamed: boolean },
): OpenStep {
  const { kind, attributes } = chatStart(model, params, options);
  return recorder.startStep({
    component: options.component,
    spanName: `chat ${model.modelId}`,
    attributes,
    kind,
  });
}

function callData(model: Asked, streamed: boolean): { [key: string]: Json } {
  const data: { [key: string]: Json } = { provider: model.provider, model: model.modelId, streamed };
  if (model.servedFrom) data.served_from = { ...model.servedFrom };
  return data;
}

/** Where a part served a call's answer (or its error) from, when it did. */
function servedFromOf(value: unknown): ServedFrom | null {
  const served = (value as { [SERVED_FROM]?: unknown } | null)?.[SERVED_FROM] as ServedFrom | undefined;
  return served && typeof served.run_id === "string" && Number.isSafeInteger(served.seq)
    ? { run_id: served.run_id, seq: served.seq }
    : null;
}

async function endCall(
  step: OpenStep,
  model: Asked,
  options: CaptureOptions,
  call: {
    streamed: boolean;
    request: string | null;
    reply: string | null;
    answeredBy: string | null;
    responseId: string | null;
    usage: LanguageModelV4Usage | null;
    finish: string;
    firstChunk: number | null;
    toolCalls: { id: string; name: string }[];
    /** The payload of the call's exact tokens, where the provider returned them. */
    tokens: string | null;
  },
): Promise<void> {
  const u = usageOf(call.usage);
  chatEnd(step, model, call);
  const data: { [key: string]: Json } = {
    ...callData(model, call.streamed),
    answered_by: call.answeredBy ?? model.modelId,
    input_tokens: u.input,
    output_tokens: u.output,
    cache_read_tokens: u.cacheRead,
    cache_write_tokens: u.cacheWrite,
    reasoning_tokens: call.usage?.outputTokens.reasoning ?? 0,
    finish_reason: call.finish,
    tool_calls: call.toolCalls,
    ...(call.reply ? { response_payload: call.reply } : {}),
    ...(call.tokens ? { tokens_payload: call.tokens } : {}),
  };
  if (options.price) data.cost = options.price(data);
  await step.end("model_called", { payload: call.request, data });
  options.onUsage?.(u);
}

/** Stores a call's exact tokens (`token_ids.ts`) as a payload, where its provider metadata holds them. */
async function tokensPayload(recorder: EvidenceRecorder, metadata: unknown): Promise<string | null> {
  const tokens = typeof metadata === "object" && metadata !== null
    ? (metadata as Record<string, unknown>)[TOKEN_IDS_KEY]
    : undefined;
  return tokens === undefined || tokens === null ? null : await recorder.payload(tokens as Json);
}

/** The token counts of a call's usage; zero where the provider gave none. */
function usageOf(usage: LanguageModelV4Usage | null): CallUsage {
  return {
    input: usage?.inputTokens.total ?? 0,
    output: usage?.outputTokens.total ?? 0,
    cacheRead: usage?.inputTokens.cacheRead ?? 0,
    cacheWrite: usage?.inputTokens.cacheWrite ?? 0,
  };
}

/**
 * Writes `tool_called` for each tool the provider ran in one reply: the arguments from its tool call, the
 * result from its tool result. provrun did not see it run, so it has no `started_at`, and confidence `parsed`.
 */
async function recordProviderTools(
  recorder: EvidenceRecorder,
  step: OpenStep,
  options: CaptureOptions,
  content: LanguageModelV4Content[],
): Promise<void> {
  const calls = new Map<string, { name: string; input: string }>();
  for (const c of content) {
    if (c.type === "tool-call" && c.providerExecuted) {
      calls.set(c.toolCallId, { name: c.toolName, input: c.input });
    }
  }
  for (const r of content) {
    if (r.type !== "tool-result" || r.preliminary) continue;
    const call = calls.get(r.toolCallId);
    const args = call ? await recorder.payload(JSON.stringify(tryJson(call.input))) : null;
    const result = await recorder.payload(JSON.stringify(r.result));
    const child = step.within(() =>
      recorder.startStep({
        component: options.component,
        spanName: `execute_tool ${r.toolName}`,
        attributes: {
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": r.toolName,
          "gen_ai.tool.call.id": r.toolCallId,
          "gen_ai.tool.type": "extension",
          ...(args ? { "provrun.tool.call.arguments_ref": args } : {}),
          ...(result ? { "provrun.tool.call.result_ref": result } : {}),
        },
      })
    );
    setSpanContent(child.span, () => toolContent(call ? tryJson(call.input) : null, r.result as Json));
    const ids = child.span.spanContext();
    try {
      await recorder.record({
        type: "tool_called",
        component: options.component,
        trace_id: ids.traceId,
        span_id: ids.spanId,
        parent_span_id: step.span.spanContext().spanId,
        confidence: "parsed",
        payload: args,
        data: {
          tool: r.toolName,
          call_id: r.toolCallId,
          error: r.isError ? "ProviderToolError" : null,
          result_payload: result,
          executed_by: "provider",
          sandboxed: false,
        },
      });
    } finally {
      child.span.end();
    }
  }
}

/**
 * The call's options as JSON, without the abort signal and headers (which may hold keys); file bytes are
 * stored as their own payloads and named `{"$payload": sha256}`.
 */
function paramsJson(recorder: EvidenceRecorder, params: LanguageModelV4CallOptions): Promise<Json> {
  return callParamsJson(params, (bytes) => recorder.payload(bytes));
}

/**
 * A model call's options as the capture records them (`params` of the request payload): without the abort
 * signal and headers, file bytes named `{"$payload": sha256}` by what `ref` gives for them. A replay compares a
 * request with the recorded one through it, giving each file's hash without storing it.
 *
 * @param params The call's options.
 * @param ref Stores (or only hashes) a file's bytes, and gives the name to record.
 * @returns The options as JSON.
 * @example
 * ```ts
 * import { callParamsJson } from "./capture.ts";
 * await callParamsJson({ prompt: [] }, () => Promise.resolve(null)); // { prompt: [] }
 * ```
 */
export async function callParamsJson(
  params: LanguageModelV4CallOptions,
  ref: (bytes: Uint8Array) => Promise<string | null>,
): Promise<Json> {
  const { abortSignal: _a, headers: _h, ...rest } = params as LanguageModelV4CallOptions & {
    headers?: unknown;
  };
  return await toJson(ref, rest);
}

async function toJson(ref: (bytes: Uint8Array) => Promise<string | null>, value: unknown): Promise<Json> {
  if (value instanceof Uint8Array) return { $payload: await ref(value) };
  if (value instanceof URL) return value.href;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return await Promise.all(value.map((v) => toJson(ref, v)));
  if (value && typeof value === "object") {
    const out: { [key: string]: Json } = {};
    for (const [k, v] of Object.entries(value)) {
      if (v !== undefined && typeof v !== "function") out[k] = await toJson(ref, v);
    }
    return out;
  }
  return (value ?? null) as Json;
}

/**
 * A request as its RFC 8785 text, so that two requests of the same content have one hash whatever the order in
 * which their objects' keys were made: the tools a replay offers come from the record, whose keys are sorted.
 */
function canonicalText(body: Json): string {
  return canonicalOrNull(body) ?? JSON.stringify(body);
}

/** The request payload: the options, and the body that crossed the wire when the provider gave it. */
async function requestBody(recorder: EvidenceRecorder, sent: Json, wire: unknown): Promise<Json> {
  const body: { [key: string]: Json } = { params: sent };
  if (wire !== undefined) {
    body.wire = typeof wire === "string"
      ? tryJson(wire)
      : await toJson((bytes) => recorder.payload(bytes), wire);
  }
  return body;
}

function tryJson(text: string): Json {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

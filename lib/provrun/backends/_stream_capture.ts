/**
 * The capture of a streamed model call: the parts pass through as they arrive, one at a time, and the call is
 * recorded when the stream ends (`model_called`), fails or carries an error part (`step_failed` with what
 * arrived), or is cancelled.
 * @module
 */
import type {
  LanguageModelV4Content,
  LanguageModelV4StreamPart,
  LanguageModelV4Usage,
} from "@ai-sdk/provider";
import type { Json } from "../../provevi/mod.ts";
import { errorMessage, errorName, type OpenStep } from "../run/recorder.ts";
import { chatContentOn } from "./chat_span.ts";
import { type Asked, callData, type Capture, endCall, tokensPayload, usageOf } from "./_model_call.ts";
import { recordProviderTools } from "./_provider_tools.ts";

/**
 * A streamed call: the parts pass through as they arrive, and the call is recorded when the stream ends
 * (`model_called`), fails or carries an error part (`step_failed` with what arrived), or is cancelled.
 */
export class StreamCapture {
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

/**
 * Anthropic's Messages API (`POST /v1/messages`) for the gateway: a streamed message is reassembled from its
 * events (`message_start`, `content_block_start`, `content_block_delta`, `content_block_stop`, `message_delta`,
 * `message_stop`; `error`; `ping` skipped) into the message a call without streaming returns, with the usage of
 * `message_start` updated by each `message_delta`.
 * @module
 */
import type { Json } from "../../provevi/mod.ts";
import { usageFrom } from "../../provevi/cost/mod.ts";
import {
  obj,
  parseJson,
  type ProviderApi,
  type ResponseSummary,
  str,
  type StreamAssembly,
} from "./provider_api.ts";
import type { SseEvent } from "./sse.ts";

const FINISH: Record<string, string> = {
  end_turn: "stop",
  stop_sequence: "stop",
  tool_use: "tool-calls",
  max_tokens: "length",
  model_context_window_exceeded: "length",
  refusal: "content-filter",
  pause_turn: "other",
};

type Block = { [key: string]: Json };

class AnthropicAssembly implements StreamAssembly {
  #message: { [key: string]: Json } = {};
  readonly #blocks: Block[] = [];
  readonly #partial = new Map<number, string>();
  #error: string | null = null;
  #done = false;

  take(event: SseEvent): void {
    const data = parseJson(event.data);
    const d = obj(data);
    switch (d.type ?? event.event) {
      case "message_start":
        this.#message = { ...obj(d.message) };
        break;
      case "content_block_start":
        this.#blocks[Number(d.index) || 0] = { ...obj(d.content_block) };
        break;
      case "content_block_delta":
        this.#delta(Number(d.index) || 0, obj(d.delta));
        break;
      case "content_block_stop":
        this.#stop(Number(d.index) || 0);
        break;
      case "message_delta": {
        Object.assign(this.#message, obj(d.delta));
        this.#message.usage = { ...obj(this.#message.usage), ...obj(d.usage) };
        break;
      }
      case "message_stop":
        this.#done = true;
        break;
      case "error":
        this.#error = str(obj(d.error).message) ?? event.data.slice(0, 300);
        break;
    }
  }

  #delta(index: number, delta: { [key: string]: Json }): void {
    const block = this.#blocks[index] ??= { type: "text", text: "" };
    switch (delta.type) {
      case "text_delta":
        block.text = (str(block.text) ?? "") + (str(delta.text) ?? "");
        break;
      case "input_json_delta":
        this.#partial.set(index, (this.#partial.get(index) ?? "") + (str(delta.partial_json) ?? ""));
        break;
      case "thinking_delta":
        block.thinking = (str(block.thinking) ?? "") + (str(delta.thinking) ?? "");
        break;
      case "signature_delta":
        block.signature = str(delta.signature) ?? "";
        break;
      case "citations_delta":
        block.citations = [
          ...(Array.isArray(block.citations) ? block.citations : []),
          delta.citation ?? null,
        ];
        break;
    }
  }

  #stop(index: number): void {
    const partial = this.#partial.get(index);
    const block = this.#blocks[index];
    if (partial === undefined || !block) return;
    // A tool call's input streams as pieces of JSON; one that does not parse is kept as it came.
    block.input = partial === "" ? {} : parseJson(partial) ?? partial;
    this.#partial.delete(index);
  }

  body(): Json {
    for (const index of [...this.#partial.keys()]) this.#stop(index);
    return { ...this.#message, content: this.#blocks.filter((b) => b !== undefined) };
  }

  error(): string | null {
    return this.#error;
  }

  complete(): boolean {
    return this.#done;
  }
}

/** Anthropic's Messages API. */
export const ANTHROPIC_MESSAGES: ProviderApi = {
  name: "anthropic-messages",
  family: "anthropic",
  path: "/v1/messages",
  usageShape: "anthropic",
  assemble: () => new AnthropicAssembly(),
  // its stream ends with message_stop, or an error event (as the event's name, or its data's type)
  endMarkers: ["message_stop", "error", "\\u"],
  summary(body: Json): ResponseSummary {
    const b = obj(body);
    const content = Array.isArray(b.content) ? b.content.map(obj) : [];
    const stop = str(b.stop_reason);
    return {
      id: str(b.id),
      model: str(b.model),
      usage: usageFrom("anthropic", b.usage),
      finish: stop === null ? "other" : FINISH[stop] ?? "other",
      providerFinish: stop,
      toolCalls: content.filter((c) => c.type === "tool_use" && typeof c.id === "string").map((c) => ({
        id: c.id as string,
        name: str(c.name) ?? "",
      })),
    };
  },
};

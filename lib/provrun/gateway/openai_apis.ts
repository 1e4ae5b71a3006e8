/**
 * OpenAI's Chat Completions (`POST /v1/chat/completions`) and Responses (`POST /v1/responses`) APIs for the
 * gateway. A streamed chat completion is reassembled from its chunks (`data: {…}` lines, `data: [DONE]` last):
 * the message's content, reasoning content and tool calls joined by index, the finish reason, and the usage of
 * the last chunk. A streamed response is the `response` of its `response.completed` (or `response.incomplete`,
 * `response.failed`) event, or, for a stream cut before that, the items of its `response.output_item.done`
 * events.
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

const CHAT_FINISH: Record<string, string> = {
  stop: "stop",
  tool_calls: "tool-calls",
  function_call: "tool-calls",
  length: "length",
  content_filter: "content-filter",
};

type Obj = { [key: string]: Json };

class ChatAssembly implements StreamAssembly {
  readonly #head: Obj = {};
  readonly #choices: Obj[] = [];
  #usage: Json = null;
  #error: string | null = null;
  #done = false;

  take(event: SseEvent): void {
    if (event.data.trim() === "[DONE]") {
      this.#done = true;
      return;
    }
    const chunk = obj(parseJson(event.data));
    if (chunk.error !== undefined) {
      this.#error = str(obj(chunk.error).message) ?? event.data.slice(0, 300);
      return;
    }
    for (const key of ["id", "created", "model", "system_fingerprint", "service_tier"]) {
      if (chunk[key] !== undefined && chunk[key] !== null) this.#head[key] = chunk[key]!;
    }
    if (chunk.usage !== undefined && chunk.usage !== null) this.#usage = chunk.usage;
    for (const c of Array.isArray(chunk.choices) ? chunk.choices.map(obj) : []) this.#choice(c);
  }

  #choice(c: Obj): void {
    const index = Number(c.index) || 0;
    const choice = this.#choices[index] ??= {
      index,
      message: { role: "assistant", content: null },
      finish_reason: null,
    };
    const message = obj(choice.message);
    const delta = obj(c.delta);
    if (typeof delta.role === "string") message.role = delta.role;
    for (const key of ["content", "reasoning_content", "refusal"]) {
      if (typeof delta[key] === "string") message[key] = (str(message[key]) ?? "") + delta[key];
    }
    if (Array.isArray(delta.tool_calls)) {
      const calls = (message.tool_calls ??= []) as Obj[];
      for (const t of delta.tool_calls.map(obj)) {
        const i = Number(t.index) || 0;
        const call = calls[i] ??= { id: null, type: "function", function: { name: "", arguments: "" } };
        if (typeof t.id === "string") call.id = t.id;
        const fn = obj(t.function);
        const own = obj(call.function);
        if (typeof fn.name === "string") own.name = (str(own.name) ?? "") + fn.name;
        if (typeof fn.arguments === "string") own.arguments = (str(own.arguments) ?? "") + fn.arguments;
        call.function = own;
      }
    }
    choice.message = message;
    if (typeof c.finish_reason === "string") choice.finish_reason = c.finish_reason;
  }

  body(): Json {
    return {
      ...this.#head,
      object: "chat.completion",
      choices: this.#choices.filter((c) => c !== undefined),
      usage: this.#usage,
    };
  }

  error(): string | null {
    return this.#error;
  }

  complete(): boolean {
    return this.#done;
  }
}

/** OpenAI's Chat Completions API, and servers that speak it (vLLM, Ollama, DeepSeek, …). */
export const OPENAI_CHAT: ProviderApi = {
  name: "openai-chat",
  family: "openai",
  path: "/v1/chat/completions",
  usageShape: "openai-chat",
  assemble: () => new ChatAssembly(),
  // its stream ends with data [DONE], or a chunk with an error
  endMarkers: ["[DONE]", "error", "\\u"],
  summary(body: Json): ResponseSummary {
    const b = obj(body);
    const choice = obj(Array.isArray(b.choices) ? b.choices[0] : null);
    const calls = Array.isArray(obj(choice.message).tool_calls)
      ? obj(choice.message).tool_calls as Json[]
      : [];
    const finish = str(choice.finish_reason);
    return {
      id: str(b.id),
      model: str(b.model),
      usage: usageFrom("openai-chat", b.usage),
      finish: finish === null ? "other" : CHAT_FINISH[finish] ?? "other",
      providerFinish: finish,
      toolCalls: calls.map(obj).filter((c) => typeof c.id === "string").map((c) => ({
        id: c.id as string,
        name: str(obj(c.function).name) ?? "",
      })),
    };
  },
};

/** The output items of a response that are calls of a tool the program runs. */
const CALL_ITEMS = [
  "function_call",
  "custom_tool_call",
  "local_shell_call",
  "shell_call",
  "apply_patch_call",
];

class ResponsesAssembly implements StreamAssembly {
  #response: Obj | null = null;
  readonly #items: Json[] = [];
  #error: string | null = null;
  #done = false;

  take(event: SseEvent): void {
    const d = obj(parseJson(event.data));
    const type = str(d.type) ?? event.event;
    if (type === "response.created" || type === "response.in_progress") {
      this.#response ??= { ...obj(d.response) };
    } else if (type === "response.output_item.done") {
      this.#items[Number(d.output_index) || this.#items.length] = d.item ?? null;
    } else if (
      type === "response.completed" || type === "response.incomplete" || type === "response.failed"
    ) {
      this.#response = { ...obj(d.response) };
      this.#done = true;
      if (type === "response.failed") {
        this.#error = str(obj(obj(d.response).error).message) ?? "the response failed";
      }
    } else if (type === "error") {
      this.#error = str(d.message) ?? event.data.slice(0, 300);
    }
  }

  body(): Json {
    const response = this.#response ?? {};
    if (this.#done && Array.isArray(response.output)) return response;
    return { ...response, output: this.#items.filter((i) => i !== undefined) };
  }

  error(): string | null {
    return this.#error;
  }

  complete(): boolean {
    return this.#done;
  }
}

/** OpenAI's Responses API (what Codex speaks). */
export const OPENAI_RESPONSES: ProviderApi = {
  name: "openai-responses",
  family: "openai",
  path: "/v1/responses",
  usageShape: "openai-responses",
  assemble: () => new ResponsesAssembly(),
  // its stream ends with response.completed, .incomplete or .failed, or an error event
  endMarkers: ["response.completed", "response.incomplete", "response.failed", "error", "\\u"],
  summary(body: Json): ResponseSummary {
    const b = obj(body);
    const output = Array.isArray(b.output) ? b.output.map(obj) : [];
    const calls = output.filter((i) => CALL_ITEMS.includes(String(i.type)));
    const status = str(b.status);
    const incomplete = str(obj(b.incomplete_details).reason);
    const finish = status === "completed"
      ? (calls.length ? "tool-calls" : "stop")
      : status === "incomplete"
      ? (incomplete === "content_filter" ? "content-filter" : "length")
      : status === "failed"
      ? "error"
      : "other";
    return {
      id: str(b.id),
      model: str(b.model),
      usage: usageFrom("openai-responses", b.usage),
      finish,
      providerFinish: incomplete ?? status,
      toolCalls: calls.map((c) => ({
        id: str(c.call_id) ?? str(c.id) ?? "",
        name: str(c.name) ?? str(c.type) ?? "",
      }))
        .filter((c) => c.id !== ""),
    };
  },
};

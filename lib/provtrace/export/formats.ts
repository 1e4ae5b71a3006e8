/**
 * The conversation formats that trainers read, one line per model call (its conversation and its reply) or
 * per run (its final conversation), each written from the call's chat messages:
 *
 * - `openai`: OpenAI's chat fine-tuning lines: `messages` (`system`, `user`, `assistant` with `tool_calls`,
 *   `tool`), `tools` and `parallel_tool_calls`; each assistant message has a `weight`, 1 for the reply the
 *   line is for (every reply, for a line per run) and 0 for the replies before it, so that a reply is
 *   trained once however many calls send it again. OpenAI's format has no place for provenance, so it goes
 *   in a side file of the same line count.
 * - `sharegpt`: `conversations` of `human`, `gpt`, `function_call` and `observation` turns, with `system` and
 *   `tools` beside them (LLaMA-Factory's form); calls of one reply are one `function_call` turn (a list when
 *   there are several), their results one `observation` turn.
 * - `hf`: `messages` and `tools` as `transformers`' `apply_chat_template` takes them: tool call arguments as
 *   objects, thinking as `reasoning_content`.
 *
 * Thinking has no place in `openai` and `sharegpt` and is left out; a file is named by its SHA-256 in text.
 * @module
 */
import type { Json } from "../../provevi/mod.ts";
import type { Call } from "./_calls.ts";
import { argumentsObject, type ChatMessage, chatMessages, fileText, openaiCall } from "./_messages.ts";

/** The export formats, and what each line is. */
export const TRACE_EXPORT_FORMATS = ["steps", "sft", "openai", "sharegpt", "hf", "atif"] as const;

/** One of {@linkcode TRACE_EXPORT_FORMATS}. */
export type TraceExportFormat = typeof TRACE_EXPORT_FORMATS[number];

/**
 * Where each format keeps a line's provenance: in the line (`provenance`, a field the format tolerates), in
 * the trajectory's `extra.provenance` (ATIF, whose objects allow no other field), or in a side file of the
 * same line count (`openai`, whose validator takes no other field).
 */
export const PROVENANCE_PLACE: Readonly<Record<TraceExportFormat, "line" | "extra" | "side file">> = {
  steps: "line",
  sft: "line",
  openai: "side file",
  sharegpt: "line",
  hf: "line",
  atif: "extra",
};

/** The text of a message: its texts, and its files named in text. */
function textOf(m: ChatMessage): string {
  return [...m.texts, ...m.files.map(fileText)].join("");
}

/**
 * An `openai` line's body.
 *
 * @param call The call (for a line per run, the run's last call).
 * @param perRun Whether the line is the run's whole conversation (every reply weighted 1).
 */
export function openaiLine(call: Call, perRun: boolean): { [key: string]: Json } {
  const messages = chatMessages(call.sent, call.received);
  const last = messages.findLastIndex((m) => m.role === "assistant");
  const out: Json[] = [];
  messages.forEach((m, i) => {
    if (m.result) {
      out.push({ role: "tool", tool_call_id: m.result.id ?? "", content: m.result.content });
      return;
    }
    const text = textOf(m);
    if (m.role !== "assistant") {
      if (text) out.push({ role: m.role === "developer" ? "system" : m.role, content: text });
      return;
    }
    if (!text && !m.calls.length) return;
    const message: { [key: string]: Json } = { role: "assistant" };
    if (text) message.content = text;
    if (m.calls.length) message.tool_calls = m.calls.map(openaiCall);
    message.weight = perRun || i === last ? 1 : 0;
    out.push(message);
  });
  const line: { [key: string]: Json } = { messages: out };
  if (call.tools?.length) {
    line.tools = call.tools;
    line.parallel_tool_calls = messages.some((m) => m.calls.length > 1);
  }
  return line;
}

/** A `sharegpt` line's body. */
export function sharegptLine(call: Call): { [key: string]: Json } {
  const turns: { from: string; values: string[] }[] = [];
  const system: string[] = [];
  const push = (from: string, value: string) => {
    const prev = turns.at(-1);
    // Two turns of one side in a row (a user's two messages, two tools' results) are one turn.
    if (prev && prev.from === from && (from === "human" || from === "observation")) prev.values.push(value);
    else turns.push({ from, values: [value] });
  };
  for (const m of chatMessages(call.sent, call.received)) {
    if (m.result) push("observation", m.result.content);
    else if (m.role === "system" || m.role === "developer") system.push(textOf(m));
    else if (m.role === "user") push("human", textOf(m));
    else if (m.calls.length) {
      const calls = m.calls.map((c) => ({ name: c.name, arguments: argumentsObject(c.arguments) }));
      push("function_call", JSON.stringify(calls.length === 1 ? calls[0] : calls));
    } else if (textOf(m)) push("gpt", textOf(m));
  }
  const line: { [key: string]: Json } = {
    conversations: turns.map((t) => ({
      from: t.from,
      // Several results of one reply's calls are one observation: the list of their texts.
      value: t.values.length === 1
        ? t.values[0]!
        : t.from === "observation"
        ? JSON.stringify(t.values)
        : t.values.join("\n"),
    })),
  };
  if (system.length) line.system = system.join("\n");
  if (call.tools?.length) line.tools = JSON.stringify(call.tools.map(functionOf));
  return line;
}

/** A tool in OpenAI's function form, as LLaMA-Factory's `tools` lists it: the function alone. */
function functionOf(tool: Json): Json {
  return tool !== null && typeof tool === "object" && !Array.isArray(tool) && "function" in tool
    ? tool.function
    : tool;
}

/** An `hf` line's body. */
export function hfLine(call: Call): { [key: string]: Json } {
  const messages: Json[] = [];
  for (const m of chatMessages(call.sent, call.received)) {
    if (m.result) {
      messages.push({
        role: "tool",
        tool_call_id: m.result.id,
        name: m.result.name,
        content: m.result.content,
      });
      continue;
    }
    const message: { [key: string]: Json } = { role: m.role === "developer" ? "system" : m.role };
    message.content = textOf(m);
    if (m.thinking.length) message.reasoning_content = m.thinking.join("");
    if (m.calls.length) {
      message.tool_calls = m.calls.map((c) => ({
        id: c.id,
        type: "function",
        function: { name: c.name, arguments: argumentsObject(c.arguments) },
      }));
    }
    messages.push(message);
  }
  return { messages, tools: call.tools ?? [] };
}

/**
 * A model call as the messages of a conversation: system, user, assistant (text, reasoning, tool calls) and
 * tool results, read from whatever recorded it. It reads the AI SDK's prompt and reply (provrun's capture), the
 * Anthropic Messages, OpenAI Chat Completions and OpenAI Responses bodies (the model gateway's), a list of
 * messages (the agent backend's history), and an agent program's session file (Claude Code's transcript, Codex's
 * rollout), each one line of JSON per item. Every text is cut to the page and the list to its last messages, so
 * a conversation of any length makes a bounded answer.
 * @module
 */
import type { Json } from "../evidence/event.ts";
import { cutJson } from "./view_cut.ts";

/** One part of a message. */
export interface ChatPart {
  type: "text" | "reasoning" | "tool_call" | "tool_result" | "file" | "other";
  /** The text (of a text, reasoning or other part, or a tool result's text). */
  text?: string;
  /** A tool call's or result's tool name. */
  name?: string;
  /** A tool call's ID, which its result names. */
  id?: string;
  /** A tool call's arguments, as JSON text. */
  args?: string;
  /** A tool result that is an error. */
  error?: boolean;
}

/** One message. */
export interface ChatMessage {
  /** `system`, `user`, `assistant` or `tool` (a developer message is a system message). */
  role: string;
  parts: ChatPart[];
  /** True for the model's reply to this call (the last message). */
  reply?: boolean;
}

/** A conversation, cut to a page. */
export interface ChatView {
  messages: ChatMessage[];
  /** How many earlier messages were left out (the page keeps the last ones). */
  skipped: number;
  /** True when a text was cut or a payload was read only in part. */
  cut: boolean;
}

/** How far a conversation is cut. */
export const CHAT_CUT = { text: 8000, args: 4000, messages: 300, parts: 200 } as const;

type Obj = { [key: string]: Json };
const isObj = (v: Json | undefined): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** Cuts texts as they are made; `cut` says whether any was. */
class Cutter {
  cut = false;
  /** Messages left out before any was read: a list is read from its last items. */
  skipped = 0;
  /** The last items of a list, counting what is left out. */
  last<T>(list: readonly T[], n: number): readonly T[] {
    if (list.length <= n) return list;
    this.skipped += list.length - n;
    return list.slice(-n);
  }
  /** The first items of a list, marking the cut. */
  first<T>(list: readonly T[], n: number): readonly T[] {
    if (list.length <= n) return list;
    this.cut = true;
    return list.slice(0, n);
  }
  text(value: string, limit: number = CHAT_CUT.text): string {
    if (value.length <= limit) return value;
    this.cut = true;
    return value.slice(0, limit) + "…";
  }
  json(value: Json | undefined): string {
    if (value === undefined) return "";
    if (typeof value === "string") return this.text(value, CHAT_CUT.args);
    // Cut before it is written out: indented JSON of a value nested a million deep is a million squared.
    const bounded = cutJson(value, { strings: CHAT_CUT.args, items: 100, depth: 12 });
    if (bounded.cut) this.cut = true;
    return this.text(JSON.stringify(bounded.value, null, 2), CHAT_CUT.args);
  }
}

const ROLES: Record<string, string> = { developer: "system", model: "assistant", human: "user" };

/** The text of a tool result's output, in any of the shapes above. */
function resultText(out: Json | undefined, cut: Cutter): string {
  if (typeof out === "string") return cut.text(out);
  if (Array.isArray(out)) {
    return cut.text(
      out.slice(0, 100).map((p) => (isObj(p) && typeof p.text === "string" ? p.text : cut.json(p))).join(
        "\n",
      ),
    );
  }
  if (isObj(out) && "value" in out && typeof out.type === "string") return resultText(out.value, cut);
  return cut.json(out ?? null);
}

/** One part of a message's content. */
function partOf(p: Json, cut: Cutter): ChatPart {
  if (typeof p === "string") return { type: "text", text: cut.text(p) };
  if (!isObj(p)) return { type: "other", text: cut.json(p) };
  const type = typeof p.type === "string" ? p.type : "";
  const str = (v: Json | undefined) => (typeof v === "string" ? v : undefined);
  switch (type) {
    case "text":
    case "input_text":
    case "output_text":
      return { type: "text", text: cut.text(str(p.text) ?? "") };
    case "reasoning":
    case "thinking":
      return { type: "reasoning", text: cut.text(str(p.text) ?? str(p.thinking) ?? "") };
    case "tool-call":
    case "tool_use":
    case "function_call":
      return {
        type: "tool_call",
        name: str(p.toolName) ?? str(p.name) ?? "",
        id: str(p.toolCallId) ?? str(p.id) ?? str(p.call_id) ?? "",
        args: cut.json(p.input ?? p.arguments ?? p.args),
      };
    case "tool-result":
    case "tool_result":
    case "function_call_output": {
      const output = p.output ?? p.result ?? p.content;
      const errorOutput = isObj(output) && typeof output.type === "string" && output.type.startsWith("error");
      return {
        type: "tool_result",
        name: str(p.toolName) ?? "",
        id: str(p.toolCallId) ?? str(p.tool_use_id) ?? str(p.call_id) ?? "",
        text: resultText(output, cut),
        ...(p.is_error === true || p.isError === true || errorOutput ? { error: true } : {}),
      };
    }
    case "file":
    case "image":
    case "image_url":
    case "input_image":
    case "document":
      return { type: "file", text: `[${type}${typeof p.mediaType === "string" ? `: ${p.mediaType}` : ""}]` };
  }
  return { type: "other", text: cut.json(p) };
}

/** One message in any of the shapes above, or null when the value is not one. */
function messageOf(m: Json, cut: Cutter): ChatMessage | null {
  if (!isObj(m)) return null;
  // Items of the OpenAI Responses API that are not messages: a call, its output, reasoning.
  if (typeof m.type === "string" && m.type !== "message" && m.role === undefined) {
    const part = partOf(m, cut);
    if (part.type === "other") return null;
    return { role: part.type === "tool_result" ? "tool" : "assistant", parts: [part] };
  }
  if (typeof m.role !== "string") return null;
  const role = ROLES[m.role] ?? m.role;
  const content = m.content;
  const parts = Array.isArray(content)
    ? cut.first(content, CHAT_CUT.parts).map((p) => partOf(p, cut))
    : content === undefined || content === null
    ? []
    : [partOf(content, cut)];
  // OpenAI Chat Completions: the assistant's tool calls beside its content, and a tool message's call ID.
  if (Array.isArray(m.tool_calls)) {
    for (const call of m.tool_calls) {
      const fn = isObj(call) && isObj(call.function) ? call.function : {};
      parts.push({
        type: "tool_call",
        name: typeof fn.name === "string" ? fn.name : "",
        id: isObj(call) && typeof call.id === "string" ? call.id : "",
        args: cut.json(fn.arguments),
      });
    }
  }
  if (role === "tool" && typeof m.tool_call_id === "string") {
    return {
      role,
      parts: [{ type: "tool_result", id: m.tool_call_id, text: parts.map((p) => p.text ?? "").join("") }],
    };
  }
  return { role, parts };
}

function listOf(value: Json | undefined, cut: Cutter): ChatMessage[] {
  if (!Array.isArray(value)) return [];
  return cut.last(value, CHAT_CUT.messages * 2).flatMap((m) => messageOf(m, cut) ?? []);
}

/** The messages of a request body, in any of the shapes above. */
function requestMessages(request: Json, cut: Cutter): ChatMessage[] {
  if (Array.isArray(request)) return listOf(request, cut);
  if (!isObj(request)) {
    return typeof request === "string" ? [{ role: "user", parts: [partOf(request, cut)] }] : [];
  }
  if (isObj(request.params)) return requestMessages(request.params, cut);
  const out: ChatMessage[] = [];
  const system = request.system ?? request.instructions;
  if (system !== undefined && system !== null) {
    const parts = Array.isArray(system) ? system.map((p) => partOf(p, cut)) : [partOf(system, cut)];
    out.push({ role: "system", parts });
  }
  if (Array.isArray(request.prompt)) out.push(...listOf(request.prompt, cut));
  else if (Array.isArray(request.messages)) out.push(...listOf(request.messages, cut));
  else if (Array.isArray(request.input)) out.push(...listOf(request.input, cut));
  else if (typeof request.input === "string") out.push({ role: "user", parts: [partOf(request.input, cut)] });
  else if (typeof request.prompt === "string") {
    out.push({ role: "user", parts: [partOf(request.prompt, cut)] });
  }
  return out;
}

/** The model's reply, in any of the shapes above, as one assistant message (or none). */
function replyMessage(reply: Json, cut: Cutter): ChatMessage | null {
  if (!isObj(reply)) return null;
  let parts: ChatPart[] = [];
  if (Array.isArray(reply.content)) {
    parts = cut.first(reply.content, CHAT_CUT.parts).map((p) => partOf(p, cut));
  } else if (Array.isArray(reply.choices) && isObj(reply.choices[0])) {
    const message = messageOf(reply.choices[0].message ?? null, cut);
    parts = message?.parts ?? [];
  } else if (Array.isArray(reply.output)) {
    parts = listOf(reply.output, cut).flatMap((m) => m.parts);
  } else if (typeof reply.text === "string") {
    parts = [{ type: "text", text: cut.text(reply.text) }];
    if (Array.isArray(reply.tool_calls)) {
      for (const c of reply.tool_calls) {
        if (isObj(c)) {
          parts.push({ type: "tool_call", name: String(c.name ?? ""), id: String(c.id ?? ""), args: "" });
        }
      }
    }
  }
  return parts.length ? { role: "assistant", parts, reply: true } : null;
}

function bounded(messages: ChatMessage[], cut: Cutter): ChatView {
  const skipped = Math.max(0, messages.length - CHAT_CUT.messages);
  return { messages: messages.slice(skipped), skipped: skipped + cut.skipped, cut: cut.cut };
}

/**
 * The conversation of one model call: its request's messages, then its reply.
 *
 * @param request The request payload, as JSON (null when it cannot be read).
 * @param reply The reply payload, as JSON (null when there is none).
 * @returns The messages, cut to the page.
 * @example
 * ```ts
 * import { chatOfCall } from "./chat_view.ts";
 * const chat = chatOfCall(
 *   { params: { prompt: [{ role: "user", content: [{ type: "text", text: "Q3?" }] }] } },
 *   { content: [{ type: "text", text: "Revenue grew 12%." }] },
 * );
 * chat.messages.map((m) => m.role); // ["user", "assistant"]
 * ```
 */
export function chatOfCall(request: Json, reply: Json): ChatView {
  const cut = new Cutter();
  const messages = requestMessages(request, cut);
  const answer = reply === null ? null : replyMessage(reply, cut);
  if (answer) messages.push(answer);
  return bounded(messages, cut);
}

/**
 * The conversation of a list of messages, or of a session file of one JSON item per line: Claude Code's
 * transcript (`{type, message: {role, content}}`), Codex's rollout (`{type: "response_item", payload}`), or
 * plain messages.
 *
 * @param value The payload: a list of messages, or the session file's text.
 * @returns The messages, cut to the page.
 */
export function chatOfSession(value: Json): ChatView {
  const cut = new Cutter();
  if (Array.isArray(value)) return bounded(listOf(value, cut), cut);
  if (typeof value !== "string") return bounded(requestMessages(value, cut), cut);
  const messages: ChatMessage[] = [];
  for (const line of cut.last(value.split("\n"), CHAT_CUT.messages * 4)) {
    if (line.trim() === "") continue;
    let item: Json;
    try {
      item = JSON.parse(line);
    } catch {
      cut.cut = true; // the last line of a file read in part
      continue;
    }
    if (!isObj(item)) continue;
    const inner = isObj(item.message) ? item.message : isObj(item.payload) ? item.payload : item;
    const message = messageOf(inner, cut);
    // Codex writes its own context as messages too; a session's meta lines are not messages.
    if (message && message.parts.length) messages.push(message);
  }
  return bounded(messages, cut);
}

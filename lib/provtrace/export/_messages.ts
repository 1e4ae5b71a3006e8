/**
 * A call's parts as chat messages, the form every conversation format is written from: each message's role,
 * texts, thinking, files and tool calls; a tool's return is a `tool` message of its own, after the message
 * that holds it (a tool the provider ran returns inside the assistant's reply).
 * @module
 */
import type { Json } from "../../provevi/mod.ts";
import type { Part } from "./_calls.ts";

/** A tool call in a message. */
export interface ChatCall {
  id: string | null;
  name: string | null;
  /** The arguments as the model gave them: parsed JSON where they were JSON. */
  arguments: Json;
}

/** One chat message. */
export interface ChatMessage {
  role: string;
  texts: string[];
  thinking: string[];
  files: Part[];
  calls: ChatCall[];
  /** A `tool` message's return. */
  result?: { id: string | null; name: string | null; content: string; error: boolean };
}

/**
 * The messages of a call: what it sent, then its reply.
 *
 * @param sent The sent parts, grouped by message.
 * @param received The reply's parts.
 * @returns The messages in order; a message with nothing in it is left out.
 */
export function chatMessages(sent: Part[][], received: Part[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const list of received.length ? [...sent, received] : sent) {
    const role = list[0]!.role;
    const returns = list.filter((p) => p.kind === "tool_return");
    if (role !== "tool") {
      const message: ChatMessage = {
        role,
        texts: list.filter((p) => p.kind === "text").map((p) => String(p.text)),
        thinking: list.filter((p) => p.kind === "thinking").map((p) => String(p.text)),
        files: list.filter((p) => p.kind === "file"),
        calls: list.filter((p) => p.kind === "tool_call").map((c) => ({
          id: c.tool_call_id === undefined ? null : c.tool_call_id as string | null,
          name: c.tool_name === undefined ? null : c.tool_name as string | null,
          arguments: c.arguments ?? null,
        })),
      };
      if (message.texts.length || message.thinking.length || message.files.length || message.calls.length) {
        out.push(message);
      }
    }
    for (const r of returns) {
      out.push({
        role: "tool",
        texts: [],
        thinking: [],
        files: [],
        calls: [],
        result: {
          id: r.tool_call_id === undefined ? null : r.tool_call_id as string | null,
          name: r.tool_name === undefined ? null : r.tool_name as string | null,
          content: resultText(r.result),
          error: r.error === true,
        },
      });
    }
  }
  return out;
}

/** A tool's result as the text a conversation format carries. */
export function resultText(result: Json | undefined): string {
  return typeof result === "string" ? result : JSON.stringify(result ?? null);
}

/** Arguments as JSON text, as OpenAI's `function.arguments` carries them. */
export function argumentsText(args: Json): string {
  return typeof args === "string" ? args : JSON.stringify(args);
}

/** Arguments as an object, as `apply_chat_template` and ATIF take them (text that is not an object is wrapped). */
export function argumentsObject(args: Json): { [key: string]: Json } {
  let value = args;
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch {
      return { input: args };
    }
  }
  return value !== null && typeof value === "object" && !Array.isArray(value) ? value : { input: value };
}

/** A file part as text, for formats that carry no files: its name and the SHA-256 of its bytes in the store. */
export function fileText(file: Part): string {
  return `[file ${file.filename ?? "(no name)"} ${file.media_type ?? ""} sha256:${file.sha256 ?? "?"}]`
    .replace(/ +/g, " ");
}

/**
 * Messages in OpenAI's chat format, as the `sft` export has always written them: a file is a `file` part named
 * by its SHA-256, thinking is left out, a tool's return is a `tool` message.
 */
export function sftMessages(messages: ChatMessage[]): Json[] {
  return messages.map((m) => {
    if (m.result) return { role: "tool", tool_call_id: m.result.id, content: m.result.content };
    const message: { [key: string]: Json } = { role: m.role };
    if (m.files.length) {
      message.content = [
        ...m.texts.map((t) => ({ type: "text", text: t })),
        ...m.files.map((f) => ({
          type: "file",
          file: { filename: f.filename ?? null, sha256: f.sha256 ?? null, url: f.url ?? null },
        })),
      ];
    } else message.content = m.texts.length ? m.texts.join("") : null;
    if (m.calls.length) message.tool_calls = m.calls.map(openaiCall);
    return message;
  }).filter((m) =>
    (m as { content?: Json }).content !== null || "tool_calls" in (m as object) ||
    (m as { role: string }).role === "tool"
  );
}

/** A tool call in OpenAI's form. */
export function openaiCall(c: ChatCall): Json {
  return { id: c.id, type: "function", function: { name: c.name, arguments: argumentsText(c.arguments) } };
}

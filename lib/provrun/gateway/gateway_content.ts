/**
 * The content of a model call through the gateway in the GenAI conventions' JSON shapes (v1.41.1:
 * `gen_ai.input.messages`, `gen_ai.output.messages`, `gen_ai.system_instructions`, `gen_ai.tool.definitions`),
 * read from the request and the response as the program and the provider sent them in the provider's API
 * (Anthropic Messages, OpenAI Chat, OpenAI Responses). Only a destination at `bodies` receives it; each attribute
 * is cut to the content cap, the whole in the run's evidence.
 * @module
 */
import type { Json } from "../../provevi/mod.ts";
import { capJson, CUT_MARK, finishReason } from "../../provevi/telemetry/mod.ts";
import type { ApiName } from "./provider_api.ts";

type Obj = { [key: string]: Json };
const isObj = (v: Json | undefined): v is Obj => v !== null && typeof v === "object" && !Array.isArray(v);
const list = (v: Json | undefined): Json[] => (Array.isArray(v) ? v : []);
const text = (v: Json | undefined): string => (typeof v === "string" ? v : "");

/** A message of the conventions: a role and its parts. */
interface Message {
  role: string;
  parts: Json[];
}

/** A JSON text parsed, as the conventions want a tool call's arguments; other text stays text. */
function parsed(value: Json | undefined): Json {
  if (typeof value !== "string") return value ?? null;
  try {
    return JSON.parse(value) as Json;
  } catch {
    return value;
  }
}

/** The text of a string, or of a list of text blocks (`{type: "text" | "input_text" | "output_text", text}`). */
function joined(content: Json | undefined): string {
  if (typeof content === "string") return content;
  return list(content).map((b) => (isObj(b) ? text(b.text) : "")).join("");
}

/** A media block: its bytes stay in the evidence, named by nothing here. */
function media(block: Obj): Json {
  const source = isObj(block.source) ? block.source : {};
  const mime = text(source.media_type) || null;
  const modality = block.type === "image" || block.type === "image_url" ? "image" : "document";
  if (source.type === "url") return { type: "uri", mime_type: mime, modality, uri: text(source.url) };
  return { type: "file", mime_type: mime, modality, file_id: "" };
}

/** One block of an Anthropic message (or of a response's content), in the conventions' shape. */
function anthropicPart(block: Json): Json | null {
  if (typeof block === "string") return { type: "text", content: block };
  if (!isObj(block)) return null;
  switch (block.type) {
    case "text":
      return { type: "text", content: text(block.text) };
    case "thinking":
      return { type: "reasoning", content: text(block.thinking) };
    case "tool_use":
      return {
        type: "tool_call",
        id: text(block.id),
        name: text(block.name),
        arguments: block.input ?? null,
      };
    case "tool_result":
      return { type: "tool_call_response", id: text(block.tool_use_id), response: joined(block.content) };
    case "image":
    case "document":
      return media(block);
    default:
      return null; // redacted thinking, cache markers: nothing the conventions name
  }
}

/** A message whose parts are all tool results is the conventions' `tool` message. */
function message(role: string, parts: Json[]): Message {
  const results = parts.length > 0 && parts.every((p) => isObj(p) && p.type === "tool_call_response");
  return { role: results ? "tool" : role, parts };
}

function anthropicInput(body: Obj): { system: Json[]; messages: Message[] } {
  const system = typeof body.system === "string"
    ? [{ type: "text", content: body.system }]
    : list(body.system).map((b) => ({ type: "text", content: isObj(b) ? text(b.text) : "" }));
  const messages = list(body.messages).filter(isObj).map((m) => {
    const blocks = typeof m.content === "string" ? [m.content] : list(m.content);
    return message(text(m.role) || "user", blocks.map(anthropicPart).filter((p) => p !== null));
  });
  return { system, messages };
}

/** An OpenAI Chat message's parts: its text, images, tool calls, or the tool result it is. */
function chatParts(m: Obj): Json[] {
  if (m.role === "tool") {
    return [{ type: "tool_call_response", id: text(m.tool_call_id), response: joined(m.content) }];
  }
  const parts: Json[] = [];
  if (typeof m.content === "string") parts.push({ type: "text", content: m.content });
  for (const p of list(m.content)) {
    if (!isObj(p)) continue;
    if (p.type === "text") parts.push({ type: "text", content: text(p.text) });
    else if (p.type === "image_url") parts.push(media(p));
  }
  for (const call of list(m.tool_calls)) {
    if (!isObj(call)) continue;
    const fn = isObj(call.function) ? call.function : {};
    parts.push({
      type: "tool_call",
      id: text(call.id),
      name: text(fn.name),
      arguments: parsed(fn.arguments),
    });
  }
  return parts;
}

function chatInput(body: Obj): { system: Json[]; messages: Message[] } {
  const system: Json[] = [];
  const messages: Message[] = [];
  for (const m of list(body.messages).filter(isObj)) {
    if (m.role === "system" || m.role === "developer") {
      system.push({ type: "text", content: joined(m.content) });
    } else messages.push({ role: text(m.role) || "user", parts: chatParts(m) });
  }
  return { system, messages };
}

/** One item of an OpenAI Responses input or output, as a message, or as system instructions. */
function responsesItem(item: Json): Message | { system: string } | null {
  if (!isObj(item)) return null;
  if (item.type === "function_call") {
    return {
      role: "assistant",
      parts: [{
        type: "tool_call",
        id: text(item.call_id),
        name: text(item.name),
        arguments: parsed(item.arguments),
      }],
    };
  }
  if (item.type === "function_call_output") {
    return {
      role: "tool",
      parts: [{ type: "tool_call_response", id: text(item.call_id), response: parsed(item.output) }],
    };
  }
  if (item.type === "reasoning") {
    const summary = list(item.summary).map((s) => (isObj(s) ? text(s.text) : "")).join("\n");
    return summary ? { role: "assistant", parts: [{ type: "reasoning", content: summary }] } : null;
  }
  if (item.type !== undefined && item.type !== "message") return null;
  if (item.role === "system" || item.role === "developer") return { system: joined(item.content) };
  return { role: text(item.role) || "user", parts: [{ type: "text", content: joined(item.content) }] };
}

function responsesInput(body: Obj): { system: Json[]; messages: Message[] } {
  const system: Json[] = typeof body.instructions === "string" && body.instructions
    ? [{ type: "text", content: body.instructions }]
    : [];
  if (typeof body.input === "string") {
    return { system, messages: [{ role: "user", parts: [{ type: "text", content: body.input }] }] };
  }
  const messages: Message[] = [];
  for (const item of list(body.input).map(responsesItem)) {
    if (item === null) continue;
    if ("system" in item) system.push({ type: "text", content: item.system });
    else messages.push(item);
  }
  return { system, messages };
}

/** The tools a request offered, as `gen_ai.tool.definitions`. */
function toolDefinitions(body: Obj): Json[] {
  return list(body.tools).filter(isObj).map((t) => {
    const fn = isObj(t.function) ? t.function : t;
    const schema = fn.input_schema ?? fn.parameters;
    if (
      t.type === undefined || t.type === "function" || t.type === "custom" || t.input_schema !== undefined
    ) {
      return {
        type: "function",
        name: text(fn.name),
        ...(typeof fn.description === "string" ? { description: fn.description } : {}),
        ...(schema !== undefined ? { parameters: schema } : {}),
      };
    }
    return { type: text(t.type), name: text(t.name) || text(t.type) };
  });
}

/** The parts of a response, as the assistant's message. */
function outputParts(api: ApiName, response: Obj): Json[] {
  if (api === "anthropic-messages") {
    return list(response.content).map(anthropicPart).filter((p) => p !== null);
  }
  if (api === "openai-chat") {
    const choice = list(response.choices)[0];
    return isObj(choice) && isObj(choice.message) ? chatParts(choice.message) : [];
  }
  return list(response.output).map(responsesItem).flatMap((
    m,
  ) => (m === null || "system" in m ? [] : m.parts));
}

/** A message that stands for `n` earlier messages a cut left out. */
const dropped = (n: number): Json => ({
  role: "user",
  parts: [{
    type: "text",
    content: `${CUT_MARK} ${n} earlier messages left out; the whole is in the run's evidence]`,
  }],
});

/**
 * The content attributes of a gateway's `chat` span, each as JSON text within the content cap.
 *
 * @param api The provider API of the call.
 * @param call The request's body, the response's body (null when none came) and its finish reason (the AI SDK's
 *   spelling, as the gateway's summary has it).
 * @returns The attributes; one that would be empty is left out.
 * @example
 * ```ts
 * import { gatewayContent } from "./gateway_content.ts";
 * const request = { system: "Be brief.", messages: [{ role: "user", content: "Q3?" }] };
 * const out = gatewayContent("anthropic-messages", { request, response: null, finish: null });
 * JSON.parse(out["gen_ai.input.messages"]!); // [{ role: "user", parts: [{ type: "text", content: "Q3?" }] }]
 * ```
 */
export function gatewayContent(
  api: ApiName,
  call: { request: Json | undefined; response: Json | null; finish: string | null },
): Record<string, string> {
  const body = isObj(call.request) ? call.request : {};
  const input = api === "anthropic-messages"
    ? anthropicInput(body)
    : api === "openai-chat"
    ? chatInput(body)
    : responsesInput(body);
  const out: Record<string, string> = {
    "gen_ai.input.messages": capJson(input.messages as unknown as Json, { dropped, keep: "last" }).text,
  };
  if (input.system.length) out["gen_ai.system_instructions"] = capJson(input.system).text;
  const tools = toolDefinitions(body);
  if (tools.length) {
    out["gen_ai.tool.definitions"] = capJson(tools, {
      keep: "first",
      dropped: (n) => ({ type: "function", name: `${CUT_MARK} ${n} more tools left out]` }),
    }).text;
  }
  if (isObj(call.response)) {
    const parts = outputParts(api, call.response);
    const output = [{ role: "assistant", parts, finish_reason: finishReason(call.finish ?? "stop") }];
    out["gen_ai.output.messages"] = capJson(output).text;
  }
  return out;
}

/**
 * The content of a model call in the JSON shapes of the OpenTelemetry GenAI semantic conventions (v1.41.1:
 * `gen-ai-input-messages.json`, `gen-ai-output-messages.json`, `gen-ai-system-instructions.json`,
 * `gen-ai-tool-definitions.json`), made from the AI SDK's request and reply as the evidence keeps them (the
 * payloads of `model_called`: the call's options, with file bytes as `{"$payload": sha256}`, and the reply).
 * A destination at `bodies` receives these; below it, none of them.
 * @module
 */
import type { Json } from "../evidence/event.ts";
import { capJson, CUT_MARK } from "./content_cap.ts";

type Obj = { [key: string]: Json };

const isObj = (v: Json | undefined): v is Obj => v !== null && typeof v === "object" && !Array.isArray(v);
const str = (v: Json | undefined): string | null => (typeof v === "string" ? v : null);
const list = (v: Json | undefined): Json[] => (Array.isArray(v) ? v : []);

/**
 * The conventions' finish reason of an AI SDK one: `tool-calls` is `tool_call`, `content-filter` is
 * `content_filter`; `stop`, `length` and `error` are the same, and any other passes as it is.
 *
 * @example
 * ```ts
 * import { finishReason } from "./genai_messages.ts";
 * finishReason("tool-calls"); // "tool_call"
 * ```
 */
export function finishReason(reason: string): string {
  switch (reason) {
    case "tool-calls":
      return "tool_call";
    case "content-filter":
      return "content_filter";
    default:
      return reason;
  }
}

/** A JSON text parsed, as the conventions want a tool call's arguments and result; other text stays text. */
function parsedJson(value: Json): Json {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value) as Json;
  } catch {
    return value;
  }
}

/** The modality of a media type: image, video or audio, else its top-level type. */
function modality(mediaType: string | null): string {
  const top = (mediaType ?? "").split("/")[0] ?? "";
  return top === "" ? "document" : top;
}

/** A file part: its bytes stay in the evidence and are named by their payload's hash. */
function filePart(part: Obj): Obj {
  const mime = str(part.mediaType);
  const base = { mime_type: mime, modality: modality(mime) };
  const data = isObj(part.data) ? part.data : null;
  if (data?.type === "url") return { type: "uri", ...base, uri: str(data.url) ?? "" };
  if (data?.type === "text") return { type: "text", content: str(data.text) ?? "" };
  const bytes = data?.type === "data" ? data.data : part.data;
  if (isObj(bytes) && typeof bytes.$payload === "string") {
    return { type: "file", ...base, file_id: `sha256:${bytes.$payload}` };
  }
  if (typeof bytes === "string") return { type: "blob", ...base, content: bytes };
  if (data?.type === "reference") return { type: "file", ...base, file_id: JSON.stringify(data.reference) };
  return { type: "file", ...base, file_id: "" };
}

/** A tool's result as the AI SDK gives it to the model (`{type, value}`), as the conventions' response. */
function toolOutput(output: Json | undefined): Json {
  if (!isObj(output)) return output ?? null;
  if (output.type === "execution-denied") return { denied: true, reason: output.reason ?? null };
  if (output.type === "content") {
    return list(output.value).map((p) => (isObj(p) && p.type === "file" ? filePart(p) : p));
  }
  return output.value ?? null;
}

/** One part of a prompt's message, in the conventions' shape. */
function inputPart(part: Json): Json {
  if (!isObj(part)) return { type: "text", content: typeof part === "string" ? part : JSON.stringify(part) };
  switch (part.type) {
    case "text":
      return { type: "text", content: str(part.text) ?? "" };
    case "reasoning":
      return { type: "reasoning", content: str(part.text) ?? "" };
    case "file":
    case "reasoning-file":
      return filePart(part);
    case "tool-call":
      return {
        type: part.providerExecuted === true ? "server_tool_call" : "tool_call",
        id: str(part.toolCallId),
        name: str(part.toolName) ?? "",
        ...(part.providerExecuted === true
          ? { server_tool_call: { type: str(part.toolName) ?? "", input: parsedJson(part.input ?? null) } }
          : { arguments: parsedJson(part.input ?? null) }),
      };
    case "tool-result":
      return { type: "tool_call_response", id: str(part.toolCallId), response: toolOutput(part.output) };
    default: {
      // a part the conventions do not name (an approval, a provider's custom part): its own type, as is
      const { type, providerOptions: _o, ...rest } = part;
      return { ...rest, type: typeof type === "string" ? type.replaceAll("-", "_") : "unknown" };
    }
  }
}

/**
 * The chat history a model call sent, as `gen_ai.input.messages`: every message of the AI SDK's prompt but
 * its system messages (those are {@linkcode systemInstructions}).
 *
 * @param prompt The call's `prompt` (a list of messages).
 * @returns The messages, `[{ role, parts }]`.
 * @example
 * ```ts
 * import { inputMessages } from "./genai_messages.ts";
 * inputMessages([{ role: "user", content: [{ type: "text", text: "Q3?" }] }]);
 * // [{ role: "user", parts: [{ type: "text", content: "Q3?" }] }]
 * ```
 */
export function inputMessages(prompt: Json): Json[] {
  const out: Json[] = [];
  for (const m of list(prompt)) {
    if (!isObj(m) || m.role === "system") continue;
    const content = typeof m.content === "string" ? [{ type: "text", text: m.content }] : list(m.content);
    out.push({ role: str(m.role) ?? "user", parts: content.map(inputPart) });
  }
  return out;
}

/**
 * The system instructions a model call sent, as `gen_ai.system_instructions`, or null when it sent none.
 *
 * @param prompt The call's `prompt`.
 * @example
 * ```ts
 * import { systemInstructions } from "./genai_messages.ts";
 * systemInstructions([{ role: "system", content: "Be brief." }]); // [{ type: "text", content: "Be brief." }]
 * ```
 */
export function systemInstructions(prompt: Json): Json[] | null {
  const out: Json[] = [];
  for (const m of list(prompt)) {
    if (isObj(m) && m.role === "system") out.push({ type: "text", content: str(m.content) ?? "" });
  }
  return out.length ? out : null;
}

/**
 * The tools a model call offered, as `gen_ai.tool.definitions`, or null when it offered none.
 *
 * @param tools The call's `tools` (the AI SDK's function and provider tools).
 * @example
 * ```ts
 * import { toolDefinitions } from "./genai_messages.ts";
 * toolDefinitions([{ type: "function", name: "read_file", description: "Reads a file.", inputSchema: {} }]);
 * // [{ type: "function", name: "read_file", description: "Reads a file.", parameters: {} }]
 * ```
 */
export function toolDefinitions(tools: Json | undefined): Json[] | null {
  const out: Json[] = [];
  for (const t of list(tools)) {
    if (!isObj(t)) continue;
    if (t.type === "function") {
      out.push({
        type: "function",
        name: str(t.name) ?? "",
        ...(typeof t.description === "string" ? { description: t.description } : {}),
        ...(t.inputSchema !== undefined ? { parameters: t.inputSchema } : {}),
      });
    } else out.push({ type: str(t.type) ?? "provider", name: str(t.name) ?? str(t.id) ?? "" });
  }
  return out.length ? out : null;
}

/** One part of a reply, or of a streamed reply's parts, in the conventions' shape; null for a part that is not content. */
function outputPart(part: Obj): Json | null {
  switch (part.type) {
    case "text":
    case "reasoning":
      return { type: part.type, content: str(part.text) ?? "" };
    case "tool-call":
      return inputPart(part);
    case "tool-result":
      return {
        type: "server_tool_call_response",
        id: str(part.toolCallId),
        server_tool_call_response: { type: str(part.toolName) ?? "", result: part.result ?? null },
      };
    case "file":
    case "reasoning-file":
      return filePart(part);
    case "source":
      return { type: "source", uri: str(part.url) ?? null, title: str(part.title) ?? null };
    default:
      return null;
  }
}

/** The parts of a streamed reply: its reasoning, its text, then its tool calls and what the provider ran. */
function streamedParts(reply: Obj): Json[] {
  const parts: Json[] = [];
  const reasoning = list(reply.parts).filter((p) => isObj(p) && p.type === "reasoning-delta")
    .map((p) => str((p as Obj).delta) ?? "").join("");
  if (reasoning) parts.push({ type: "reasoning", content: reasoning });
  const text = str(reply.text);
  if (text) parts.push({ type: "text", content: text });
  for (const p of list(reply.parts)) {
    if (!isObj(p) || (p.type !== "tool-call" && p.type !== "tool-result" && p.type !== "file")) continue;
    const part = outputPart(p);
    if (part !== null) parts.push(part);
  }
  return parts;
}

/**
 * What a model call answered, as `gen_ai.output.messages`: one assistant message with its parts and finish
 * reason, from the reply as the evidence keeps it (a reply's `content`, or a streamed reply's `text` and
 * `parts`).
 *
 * @param reply The reply payload of a `model_called`.
 * @returns `[{ role: "assistant", parts, finish_reason }]`.
 * @example
 * ```ts
 * import { outputMessages } from "./genai_messages.ts";
 * outputMessages({ content: [{ type: "text", text: "12%" }], finish_reason: { unified: "stop" } });
 * // [{ role: "assistant", parts: [{ type: "text", content: "12%" }], finish_reason: "stop" }]
 * ```
 */
export function outputMessages(reply: Json): Json[] {
  if (!isObj(reply)) return [];
  const finish = isObj(reply.finish_reason) ? str(reply.finish_reason.unified) : str(reply.finish_reason);
  const parts = Array.isArray(reply.content)
    ? reply.content.filter(isObj).map(outputPart).filter((p): p is Json => p !== null)
    : streamedParts(reply);
  return [{ role: "assistant", parts, finish_reason: finishReason(finish ?? "stop") }];
}

/** A message that stands for `n` earlier messages a cut left out. */
const droppedMessages = (n: number): Json => ({
  role: "user",
  parts: [{
    type: "text",
    content: `${CUT_MARK} ${n} earlier messages left out; the whole is in the run's evidence]`,
  }],
});

/** Options of {@linkcode chatContent} and {@linkcode toolContent}. */
export interface ContentOptions {
  /** The largest attribute, in bytes of UTF-8; `CONTENT_BYTES` by default. */
  maxBytes?: number;
}

function capped(
  value: Json,
  options: ContentOptions & { dropped?: (n: number) => Json; keep?: "first" | "last" },
) {
  return capJson(value, {
    ...(options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes }),
    ...(options.dropped ? { dropped: options.dropped, keep: options.keep ?? "last" } : {}),
  }).text;
}

/**
 * The content attributes of a `chat` span: `gen_ai.input.messages`, `gen_ai.system_instructions`,
 * `gen_ai.tool.definitions` and (once the reply is in) `gen_ai.output.messages`, each as JSON text within
 * the content cap.
 *
 * @param params The call's options as the evidence keeps them (`prompt`, `tools`, …).
 * @param reply The reply payload, or null before it is in.
 * @param options The cap.
 * @returns The attributes; one that would be empty is left out.
 * @example
 * ```ts
 * import { chatContent } from "./genai_messages.ts";
 * const prompt = [{ role: "user", content: [{ type: "text", text: "Q3?" }] }];
 * Object.keys(chatContent({ prompt }, null)); // ["gen_ai.input.messages"]
 * ```
 */
export function chatContent(
  params: Json,
  reply: Json | null,
  options: ContentOptions = {},
): Record<string, string> {
  const out: Record<string, string> = {};
  const p = isObj(params) ? params : {};
  out["gen_ai.input.messages"] = capped(inputMessages(p.prompt ?? null), {
    ...options,
    dropped: droppedMessages,
  });
  const system = systemInstructions(p.prompt ?? null);
  if (system) out["gen_ai.system_instructions"] = capped(system, options);
  const tools = toolDefinitions(p.tools);
  if (tools) {
    out["gen_ai.tool.definitions"] = capped(tools, {
      ...options,
      keep: "first",
      dropped: (n) => ({ type: "function", name: `${CUT_MARK} ${n} more tools left out]` }),
    });
  }
  if (reply !== null) out["gen_ai.output.messages"] = capped(outputMessages(reply), options);
  return out;
}

/**
 * The content attributes of an `execute_tool` span: `gen_ai.tool.call.arguments` and, when the tool gave one,
 * `gen_ai.tool.call.result`, parsed from JSON text where they are, as JSON text within the content cap.
 *
 * @param args The arguments.
 * @param result The result, or undefined when the call failed.
 * @param options The cap.
 * @example
 * ```ts
 * import { toolContent } from "./genai_messages.ts";
 * toolContent('{"path":"a.csv"}', "1,2"); // { "gen_ai.tool.call.arguments": '{"path":"a.csv"}', "gen_ai.tool.call.result": '"1,2"' }
 * ```
 */
export function toolContent(
  args: Json,
  result: Json | undefined,
  options: ContentOptions = {},
): Record<string, string> {
  const out: Record<string, string> = { "gen_ai.tool.call.arguments": capped(parsedJson(args), options) };
  if (result !== undefined) out["gen_ai.tool.call.result"] = capped(result, options);
  return out;
}

/**
 * The messages of a model call, read from its request and reply payloads into one normal form: each message
 * part (text, tool call, tool return, thinking, file) with the role of its message. Three formats are read:
 * the AI SDK's (what provrun records: `params.prompt` and the reply's content or stream parts), OpenAI's chat
 * format and Responses items, and Anthropic's messages format (what a provider's wire body, the model gateway's
 * record or an agent program's span holds).
 * @module
 */
import type { Json } from "../../provevi/mod.ts";
import { sha256Hex } from "../../provevi/evidence/mod.ts";
import { canonicalJson } from "./_values.ts";

/** The formats a call's messages are read from, named as MLflow's `mlflow.message.format` names them. */
export type TraceMessageFormat = "ai_sdk" | "openai" | "anthropic";

/** A part kind, as the spec names them. */
export type TracePartKind = "text" | "tool_call" | "tool_return" | "thinking" | "file";

/** One part of a message, in the normal form the trace database keeps. */
export type TracePart =
  | { kind: "text"; text: string }
  | { kind: "thinking"; text: string }
  | { kind: "tool_call"; tool_call_id: string | null; tool_name: string; arguments: Json }
  | {
    kind: "tool_return";
    tool_call_id: string | null;
    tool_name: string | null;
    result: Json;
    error: boolean;
  }
  | {
    kind: "file";
    media_type: string | null;
    filename: string | null;
    sha256: string | null;
    url: string | null;
  };

/** A message: a role and its parts. */
export interface TraceMessage {
  role: string;
  parts: TracePart[];
}

/** One part with its role, as stored once in `trace_messages`, keyed by the hash of its canonical JSON. */
export interface TraceStoredPart {
  hash: string;
  role: string;
  part: TracePart;
  content: string;
  /** The index of the message the part belongs to, in its call. */
  message: number;
}

/**
 * The parts of messages as rows: each part with its role, its canonical JSON and that JSON's SHA-256, so a
 * message sent again in the next call hashes the same and is stored once.
 *
 * @param messages The messages, in order.
 * @returns One entry per part.
 * @example
 * ```ts
 * import { storedParts } from "./messages.ts";
 * storedParts([{ role: "user", parts: [{ kind: "text", text: "hi" }] }])[0]!.content;
 * // '{"kind":"text","role":"user","text":"hi"}'
 * ```
 */
export function storedParts(messages: TraceMessage[]): TraceStoredPart[] {
  const out: TraceStoredPart[] = [];
  messages.forEach((m, index) => {
    for (const part of m.parts) {
      const content = canonicalJson({ role: m.role, ...part });
      out.push({ hash: partHash(content), role: m.role, part, content, message: index });
    }
  });
  return out;
}

/**
 * The SHA-256 of a part's canonical JSON. A call sends the whole conversation again, so most parts were hashed
 * already for the call before: their hashes are kept, up to a bound on the texts kept with them.
 */
function partHash(content: string): string {
  let hash = hashes.get(content);
  if (hash === undefined) {
    hash = sha256Hex(content);
    if (hashedLength + content.length > HASHED_LENGTH) {
      hashes.clear();
      hashedLength = 0;
    }
    hashes.set(content, hash);
    hashedLength += content.length;
  }
  return hash;
}

const hashes = new Map<string, string>();
let hashedLength = 0;
/** The most text (UTF-16 code units) kept with the hashes; past it they are dropped and made again. */
const HASHED_LENGTH = 8 * 1024 * 1024;

/** The messages a request sent, and the format they were read in. */
export interface TraceSentMessages {
  format: TraceMessageFormat;
  messages: TraceMessage[];
  /** The tools offered, in OpenAI's function form, or null when none were. */
  tools: Json[] | null;
}

type Obj = { [key: string]: Json };
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

/**
 * Reads the messages a request sent: the AI SDK's `params.prompt` when the payload has it, else the wire
 * body's messages in OpenAI's or Anthropic's format.
 *
 * @param request The request payload, parsed.
 * @param api The API the model gateway recorded (`data.api`), or null.
 * @returns The messages, their format and the tools offered.
 * @example
 * ```ts
 * import { sentMessages } from "./messages.ts";
 * sentMessages({ params: { prompt: [{ role: "user", content: [{ type: "text", text: "hi" }] }] } }).format; // "ai_sdk"
 * ```
 */
export function sentMessages(request: Json, api: string | null = null): TraceSentMessages {
  const params = isObj(request) && isObj(request.params) ? request.params : null;
  if (params && Array.isArray(params.prompt)) {
    return { format: "ai_sdk", messages: params.prompt.map(aiSdkMessage), tools: aiSdkTools(params.tools) };
  }
  const body = isObj(request) && isObj(request.wire) ? request.wire : isObj(request) ? request : null;
  if (body && Array.isArray(body.messages)) {
    // the model gateway records which API a body is; else it is told by its shape
    if (api === "anthropic-messages" || (api === null && isAnthropic(body))) {
      const messages: TraceMessage[] = [];
      if (typeof body.system === "string") messages.push({ role: "system", parts: [text(body.system)] });
      else if (Array.isArray(body.system)) {
        messages.push({ role: "system", parts: body.system.flatMap((b) => anthropicPart(b)) });
      }
      for (const m of body.messages) if (isObj(m)) messages.push(anthropicMessage(m));
      return { format: "anthropic", messages, tools: anthropicTools(body.tools) };
    }
    return {
      format: "openai",
      messages: body.messages.filter(isObj).map(openaiMessage),
      tools: Array.isArray(body.tools) ? body.tools : null,
    };
  }
  if (body && Array.isArray(body.input)) {
    // OpenAI's Responses API (what Codex speaks, as the model gateway keeps it)
    const messages: TraceMessage[] = typeof body.instructions === "string"
      ? [{ role: "system", parts: [text(body.instructions)] }]
      : [];
    for (const item of body.input) if (isObj(item)) messages.push(responsesItem(item));
    return { format: "openai", messages, tools: Array.isArray(body.tools) ? body.tools : null };
  }
  return { format: "ai_sdk", messages: [], tools: null };
}

/** One item of a Responses API input or output, as a message. */
function responsesItem(item: Obj): TraceMessage {
  switch (item.type) {
    case "function_call":
    case "custom_tool_call":
      return {
        role: "assistant",
        parts: [{
          kind: "tool_call",
          tool_call_id: str(item.call_id),
          tool_name: str(item.name) ?? "",
          arguments: parseArgs(item.arguments ?? item.input),
        }],
      };
    case "function_call_output":
    case "custom_tool_call_output":
      return {
        role: "tool",
        parts: [{
          kind: "tool_return",
          tool_call_id: str(item.call_id),
          tool_name: null,
          result: parseArgs(item.output),
          error: false,
        }],
      };
    case "reasoning": {
      const summary = Array.isArray(item.summary)
        ? item.summary.filter(isObj).map((p) => str(p.text) ?? "")
        : [];
      return { role: "assistant", parts: [{ kind: "thinking", text: summary.join("\n") }] };
    }
    default: {
      const role = str(item.role) ?? "unknown";
      if (typeof item.content === "string") return { role, parts: [text(item.content)] };
      const parts = Array.isArray(item.content)
        ? item.content.filter(isObj).flatMap((c) => (typeof c.text === "string" ? [text(c.text)] : []))
        : [];
      return { role, parts };
    }
  }
}

/**
 * Reads the message a reply received: the AI SDK's content (a call made whole) or stream parts (a streamed
 * call, whose text arrives joined), else an OpenAI or Anthropic response body.
 *
 * @param reply The reply payload, parsed.
 * @returns The assistant's message; no parts when the reply held none.
 */
export function receivedMessage(reply: Json): TraceMessage {
  const r = isObj(reply) ? reply : {};
  if (Array.isArray(r.content) && !("role" in r && r.type === "message")) {
    return { role: "assistant", parts: r.content.flatMap(aiSdkPart) };
  }
  if (Array.isArray(r.parts)) return { role: "assistant", parts: streamParts(r.parts, str(r.text) ?? "") };
  if (Array.isArray(r.choices) && isObj(r.choices[0]) && isObj(r.choices[0].message)) {
    return openaiMessage(r.choices[0].message);
  }
  if (Array.isArray(r.content)) return anthropicMessage({ role: "assistant", content: r.content });
  if (Array.isArray(r.output)) {
    return { role: "assistant", parts: r.output.filter(isObj).flatMap((item) => responsesItem(item).parts) };
  }
  return { role: "assistant", parts: [] };
}

function text(t: string): TracePart {
  return { kind: "text", text: t };
}

function parseArgs(input: Json | undefined): Json {
  if (typeof input !== "string") return input ?? null;
  try {
    return JSON.parse(input);
  } catch {
    return input;
  }
}

function fileRef(data: Json | undefined): { sha256: string | null; url: string | null } {
  if (isObj(data) && typeof data.$payload === "string") return { sha256: data.$payload, url: null };
  // The AI SDK's file data: `{ type: "data", data }`, `{ type: "url", url }`, `{ type: "text", text }`.
  if (isObj(data) && data.type === "data") return fileRef(data.data);
  if (isObj(data) && data.type === "url") return { sha256: null, url: str(data.url) };
  if (isObj(data) && data.type === "text") return { sha256: sha256Hex(str(data.text) ?? ""), url: null };
  if (typeof data === "string") {
    if (/^[a-z][a-z0-9+.-]*:/i.test(data) && !data.startsWith("data:")) return { sha256: null, url: data };
    const base64 = data.startsWith("data:") ? data.slice(data.indexOf(",") + 1) : data;
    try {
      return { sha256: sha256Hex(Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))), url: null };
    } catch {
      return { sha256: sha256Hex(data), url: null };
    }
  }
  return { sha256: null, url: null };
}

function aiSdkMessage(m: Json): TraceMessage {
  if (!isObj(m)) return { role: "unknown", parts: [] };
  const role = str(m.role) ?? "unknown";
  if (typeof m.content === "string") return { role, parts: [text(m.content)] };
  return { role, parts: Array.isArray(m.content) ? m.content.flatMap(aiSdkPart) : [] };
}

function toolOutput(output: Json | undefined): { result: Json; error: boolean } {
  if (!isObj(output)) return { result: output ?? null, error: false };
  const type = str(output.type) ?? "";
  return { result: output.value ?? output.reason ?? null, error: type.startsWith("error") };
}

function aiSdkPart(p: Json): TracePart[] {
  if (!isObj(p)) return [];
  switch (p.type) {
    case "text":
      return [text(str(p.text) ?? "")];
    case "reasoning":
      return [{ kind: "thinking", text: str(p.text) ?? "" }];
    case "file":
    case "image":
      return [{
        kind: "file",
        media_type: str(p.mediaType) ?? str(p.mimeType),
        filename: str(p.filename),
        ...fileRef(p.data ?? p.image),
      }];
    case "tool-call":
      return [{
        kind: "tool_call",
        tool_call_id: str(p.toolCallId),
        tool_name: str(p.toolName) ?? "",
        arguments: parseArgs(p.input ?? p.args),
      }];
    case "tool-result": {
      const { result, error } = "output" in p
        ? toolOutput(p.output)
        : { result: p.result ?? null, error: false };
      return [{
        kind: "tool_return",
        tool_call_id: str(p.toolCallId),
        tool_name: str(p.toolName),
        result,
        error: error || p.isError === true,
      }];
    }
    default:
      return [];
  }
}

/** The parts of a streamed reply: reasoning deltas joined by their ID, the text at its first start. */
function streamParts(parts: Json[], joined: string): TracePart[] {
  const out: TracePart[] = [];
  const reasoning = new Map<string, { kind: "thinking"; text: string }>();
  let textPlaced = false;
  for (const p of parts) {
    if (!isObj(p)) continue;
    if (p.type === "reasoning-start" || p.type === "reasoning-delta") {
      const id = str(p.id) ?? "";
      let r = reasoning.get(id);
      if (!r) {
        r = { kind: "thinking", text: "" };
        reasoning.set(id, r);
        out.push(r);
      }
      if (p.type === "reasoning-delta") r.text += str(p.delta) ?? "";
    } else if (p.type === "text-start" && !textPlaced) {
      textPlaced = true;
      out.push(text(joined));
    } else if (p.type === "tool-call" || p.type === "tool-result" || p.type === "file") {
      out.push(...aiSdkPart(p));
    }
  }
  if (!textPlaced && joined) out.push(text(joined));
  return out;
}

function aiSdkTools(tools: Json | undefined): Json[] | null {
  if (!Array.isArray(tools) || tools.length === 0) return null;
  return tools.filter(isObj).map((t): Json =>
    t.type === "function"
      ? {
        type: "function",
        function: {
          name: t.name ?? null,
          description: t.description ?? null,
          parameters: t.inputSchema ?? null,
        },
      }
      : { type: t.type ?? null, name: t.name ?? null, id: t.id ?? null }
  );
}

function isAnthropic(body: Obj): boolean {
  // OpenAI's chat format puts the system prompt among the messages; Anthropic's has a field of its own.
  if (typeof body.system === "string" || Array.isArray(body.system)) return true;
  return (body.messages as Json[]).some((m) =>
    isObj(m) && Array.isArray(m.content) &&
    m.content.some((b) =>
      isObj(b) && ["tool_use", "tool_result", "thinking", "image", "document"].includes(String(b.type))
    )
  );
}

function anthropicMessage(m: Obj): TraceMessage {
  const role = str(m.role) ?? "unknown";
  if (typeof m.content === "string") return { role, parts: [text(m.content)] };
  return { role, parts: Array.isArray(m.content) ? m.content.flatMap(anthropicPart) : [] };
}

function anthropicPart(b: Json): TracePart[] {
  if (!isObj(b)) return [];
  switch (b.type) {
    case "text":
      return [text(str(b.text) ?? "")];
    case "thinking":
      return [{ kind: "thinking", text: str(b.thinking) ?? "" }];
    case "redacted_thinking":
      return [{ kind: "thinking", text: "" }];
    case "tool_use":
    case "server_tool_use":
      return [{
        kind: "tool_call",
        tool_call_id: str(b.id),
        tool_name: str(b.name) ?? "",
        arguments: b.input ?? null,
      }];
    case "tool_result":
      return [{
        kind: "tool_return",
        tool_call_id: str(b.tool_use_id),
        tool_name: null,
        result: b.content ?? null,
        error: b.is_error === true,
      }];
    case "image":
    case "document": {
      const source = isObj(b.source) ? b.source : {};
      return [{
        kind: "file",
        media_type: str(source.media_type),
        filename: str(b.title),
        ...(source.type === "url" ? { sha256: null, url: str(source.url) } : fileRef(source.data)),
      }];
    }
    default:
      return [];
  }
}

function anthropicTools(tools: Json | undefined): Json[] | null {
  if (!Array.isArray(tools) || tools.length === 0) return null;
  return tools.filter(isObj).map((t) => ({
    type: "function",
    function: {
      name: t.name ?? null,
      description: t.description ?? null,
      parameters: t.input_schema ?? null,
    },
  }));
}

function openaiMessage(m: Obj): TraceMessage {
  const role = str(m.role) ?? "unknown";
  const parts: TracePart[] = [];
  if (typeof m.reasoning_content === "string") parts.push({ kind: "thinking", text: m.reasoning_content });
  if (role === "tool") {
    parts.push({
      kind: "tool_return",
      tool_call_id: str(m.tool_call_id),
      tool_name: str(m.name),
      result: parseArgs(m.content),
      error: false,
    });
    return { role, parts };
  }
  if (typeof m.content === "string") parts.push(text(m.content));
  else if (Array.isArray(m.content)) {
    for (const c of m.content) {
      if (!isObj(c)) continue;
      if (c.type === "text") parts.push(text(str(c.text) ?? ""));
      else if (c.type === "image_url" && isObj(c.image_url)) {
        const url = str(c.image_url.url) ?? "";
        parts.push({
          kind: "file",
          media_type: url.startsWith("data:") ? url.slice(5, url.indexOf(";")) : null,
          filename: null,
          ...fileRef(url),
        });
      } else if (c.type === "file" && isObj(c.file)) {
        parts.push({
          kind: "file",
          media_type: null,
          filename: str(c.file.filename),
          ...fileRef(c.file.file_data),
        });
      }
    }
  }
  if (Array.isArray(m.tool_calls)) {
    for (const call of m.tool_calls) {
      if (!isObj(call) || !isObj(call.function)) continue;
      parts.push({
        kind: "tool_call",
        tool_call_id: str(call.id),
        tool_name: str(call.function.name) ?? "",
        arguments: parseArgs(call.function.arguments),
      });
    }
  }
  return { role, parts };
}

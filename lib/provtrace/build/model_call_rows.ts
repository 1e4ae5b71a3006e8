/**
 * The rows of one model call: the call itself, its messages (sent and received), the tool calls its reply asked
 * for, and the exact tokens when the provider returned them.
 * @module
 */
import type { EvidenceEvent, Json } from "../../provevi/mod.ts";
import {
  receivedMessage,
  sentMessages,
  storedParts,
  type TraceMessage,
  type TraceMessageFormat,
  type TraceStoredPart,
} from "./messages.ts";
import type { TraceRow } from "./trace_row.ts";
import { isObj, json, num, str } from "./_values.ts";

/** The row of one model call, the rows of its messages, and the tool calls its reply asked for. */
export async function modelCallRows(
  e: EvidenceEvent,
  { spanId, failed, readJson, sessionId }: {
    spanId: string;
    failed: EvidenceEvent | null;
    readJson: (sha: string | null | undefined) => Promise<Json>;
    sessionId: string | null;
  },
): Promise<{
  row: TraceRow;
  parts: { stored: TraceStoredPart; row: TraceRow }[];
  asked: { id: string; name: string; args: Json }[];
  reply: TraceMessage | null;
  attributes: Record<string, Json>;
}> {
  const d = e.data;
  const request = await readJson(e.payload);
  const replySha = str(d.response_payload);
  const reply = replySha ? await readJson(replySha) : null;
  const sent = sentMessages(request, str(d.api));
  const received = reply === null ? null : receivedMessage(reply);
  const provider = str(d.provider);
  const format: TraceMessageFormat = sent.messages.length ? sent.format : "ai_sdk";
  const { cacheRead, cacheWrite, input, output, total } = callTokens(d, { provider, reply });
  const runId = e.run_id;
  const parts = messageParts({ runId, spanId }, { sent: sent.messages, received });
  const asked: { id: string; name: string; args: Json }[] = [];
  for (const p of received?.parts ?? []) {
    if (p.kind === "tool_call" && p.tool_call_id) {
      asked.push({ id: p.tool_call_id, name: p.tool_name, args: p.arguments });
    }
  }
  const tools = sent.tools === null ? null : json(sent.tools);
  const usage = { input_tokens: input, output_tokens: output, total_tokens: total } as Record<string, Json>;
  if (cacheRead !== null) usage.cache_read_input_tokens = cacheRead;
  if (cacheWrite !== null) usage.cache_creation_input_tokens = cacheWrite;
  const attributes: Record<string, Json> = {
    "mlflow.spanInputs": { messages: sent.messages as unknown as Json },
    "mlflow.spanOutputs": received as unknown as Json,
    "mlflow.chat.tokenUsage": usage,
    "mlflow.message.format": format,
    "mlflow.chat.tools": sent.tools,
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": provider,
    "gen_ai.request.model": str(d.model),
    "gen_ai.response.model": str(d.answered_by),
    "gen_ai.usage.input_tokens": input,
    "gen_ai.usage.output_tokens": output,
    "gen_ai.response.finish_reasons": str(d.finish_reason) ? [str(d.finish_reason)!] : null,
    "gen_ai.conversation.id": sessionId,
    "gen_ai.input.messages_ref": e.payload,
    "gen_ai.output.messages_ref": replySha,
  };
  const row: TraceRow = {
    run_id: runId,
    span_id: spanId,
    seq: e.seq,
    provider,
    model: str(d.model),
    answered_by: str(d.answered_by),
    message_format: format,
    input_tokens: input,
    output_tokens: output,
    total_tokens: total,
    cache_read_input_tokens: cacheRead,
    cache_creation_input_tokens: cacheWrite,
    reasoning_tokens: num(d.reasoning_tokens),
    finish_reason: str(d.finish_reason),
    streamed: typeof d.streamed === "boolean" ? (d.streamed ? 1 : 0) : null,
    tools,
    session_id: sessionId,
    request_sha256: e.payload,
    response_sha256: replySha,
    cost: str(d.cost),
    error: failed ? `${str(failed.data.error) ?? "Error"}: ${str(failed.data.message) ?? ""}` : null,
  };
  return { row, parts, asked, reply: received, attributes };
}

/** The token counts of a call, with Anthropic's cached tokens added to its input as MLflow counts them. */
function callTokens(
  d: EvidenceEvent["data"],
  { provider, reply }: { provider: string | null; reply: Json },
): {
  cacheRead: number | null;
  cacheWrite: number | null;
  input: number | null;
  output: number | null;
  total: number | null;
} {
  const cacheRead = num(d.cache_read_tokens);
  const cacheWrite = num(d.cache_write_tokens);
  let input = num(d.input_tokens);
  // Anthropic's API counts cached tokens apart from input_tokens; MLflow adds them in. The AI SDK's total
  // already holds them, but the provider's own reply (when the wire body was kept) is the better source.
  const wireUsage = isObj(reply) && isObj(reply.response) && isObj(reply.response.body) &&
      isObj(reply.response.body.usage)
    ? reply.response.body.usage
    : null;
  if (provider?.startsWith("anthropic") && wireUsage && typeof wireUsage.input_tokens === "number") {
    input = wireUsage.input_tokens + (num(wireUsage.cache_read_input_tokens) ?? 0) +
      (num(wireUsage.cache_creation_input_tokens) ?? 0);
  }
  const output = num(d.output_tokens);
  const total = input === null && output === null ? null : (input ?? 0) + (output ?? 0);
  return { cacheRead, cacheWrite, input, output, total };
}

/** The stored messages of a call, sent then received, each with its row in the call's messages. */
function messageParts(
  { runId, spanId }: { runId: string; spanId: string },
  { sent, received }: { sent: TraceMessage[]; received: TraceMessage | null },
): { stored: TraceStoredPart; row: TraceRow }[] {
  const parts: { stored: TraceStoredPart; row: TraceRow }[] = [];
  const add = (direction: string, list: TraceStoredPart[]) =>
    list.forEach((stored, position) =>
      parts.push({
        stored,
        row: {
          run_id: runId,
          span_id: spanId,
          direction,
          position,
          message: stored.message,
          message_hash: stored.hash,
        },
      })
    );
  add("sent", storedParts(sent));
  if (received) add("received", storedParts([received]));
  return parts;
}

/**
 * The exact tokens of a model call, from its tokens payload (provrun's capture writes it where the provider
 * returned token IDs): each list kept only when it is a list of the right numbers, else empty.
 */
export function tokenRow(e: EvidenceEvent, spanId: string, tokens: Json): TraceRow | null {
  const sha = str(e.data.tokens_payload);
  if (!sha || !isObj(tokens)) return null;
  const list = (v: Json | undefined, integers: boolean) =>
    Array.isArray(v) && v.every((n) => typeof n === "number" && (!integers || Number.isInteger(n)))
      ? json(v)
      : null;
  return {
    run_id: e.run_id,
    span_id: spanId,
    prompt_token_ids: list(tokens.prompt_token_ids, true),
    completion_token_ids: list(tokens.completion_token_ids, true),
    logprobs: list(tokens.logprobs, false),
    tokens_sha256: sha,
  };
}

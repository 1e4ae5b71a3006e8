/**
 * The rows of one run: its events and payloads mapped to spans, model calls, messages, tool calls, access
 * and assessments, as MLflow's autolog maps a run's steps (an `AGENT` span at the root, an `LLM` span for
 * each model call, a `TOOL` span for each tool call), with MLflow's names beside the GenAI names. No time is
 * guessed: a step with no recorded start keeps its end (if any) and is marked `timed` false.
 * @module
 */
import canonicalize from "canonicalize";
import { type Assessment, type EvidenceEvent, type Json, ProveviError } from "../../provevi/mod.ts";
import { payloadsOf } from "../../provevi/evidence/mod.ts";
import { sha256Hex } from "../../provevi/evidence/mod.ts";
import { receivedRows } from "./received_rows.ts";
import {
  receivedMessage,
  sentMessages,
  storedParts,
  type TraceMessage,
  type TraceMessageFormat,
  type TraceStoredPart,
} from "./messages.ts";

import type { TraceRow } from "./trace_row.ts";
export type { TraceRow };

/** Every row of one run, by table. */
export interface TraceRunRows {
  run: TraceRow;
  spans: TraceRow[];
  modelCalls: TraceRow[];
  /** The exact tokens of the model calls whose provider returned them. */
  tokens: TraceRow[];
  messages: TraceStoredPart[];
  callMessages: TraceRow[];
  toolCalls: TraceRow[];
  access: TraceRow[];
  assessments: TraceRow[];
}

/** What {@linkcode runRows} reads the run from. */
export interface TraceRunSource {
  /** The run's events, in order. */
  events: readonly EvidenceEvent[];
  /** The lines of `events.jsonl`, for each event's line hash. */
  lines: readonly string[];
  /** Reads a payload by its SHA-256, with the hash checked before it is parsed. */
  payload(sha256: string): Promise<Uint8Array>;
  /**
   * The run's assessments in provevi's store, and those of its experiment that judge it: the experiment as a
   * whole, and the version it pinned (none for a store without them).
   */
  assessments: readonly Assessment[];
}

/** Event types that are part of a step's span but never make a span of their own. */
const NOT_STEPS = new Set([
  "note_added",
  "access_requested",
  "access_granted",
  "access_denied",
  "input_verified",
  "output_artifact_created",
  "telemetry_blocked",
  "telemetry_problem",
  // a batch of a program's spans: its spans are rows of their own (received_rows.ts)
  "spans_received",
]);

/** Which event of a span names it: a model or tool call first, then a failure or a library span, then any. */
const PRIORITY: Record<string, number> = {
  model_called: 0,
  tool_called: 0,
  step_failed: 1,
  span_recorded: 1,
};

const decoder = new TextDecoder();
const json = (value: unknown): string => canonicalize(value ?? null)!;

/**
 * Maps a run's events and payloads to the trace database's rows.
 *
 * @param source The events, their lines, the payload reader and the assessments.
 * @returns The rows of every table for the run.
 * @throws ProveviError when a payload cannot be read or its hash does not match its name.
 * @example
 * ```ts
 * import { runRows } from "./run_rows.ts";
 * // const rows = await runRows({ events, lines, payload: (sha) => record.payload(sha), assessments: [] });
 * ```
 */
export async function runRows(source: TraceRunSource): Promise<TraceRunRows> {
  const { events, lines } = source;
  const first = events[0];
  if (!first || first.type !== "run_created") {
    throw new ProveviError("the run's first event is not run_created");
  }
  const runId = first.run_id;
  const lineHash = (seq: number) => (lines[seq] === undefined ? null : sha256Hex(lines[seq]!));
  const cache = new Map<string, Json>();
  const readJson = async (sha: string | null | undefined): Promise<Json> => {
    if (!sha) return null;
    if (cache.has(sha)) return cache.get(sha)!;
    let bytes: Uint8Array;
    try {
      bytes = await source.payload(sha);
    } catch (error) {
      throw new ProveviError(
        `run ${runId}: payload ${sha} cannot be read: ${(error as Error).message.split("\n")[0]}`,
        { cause: error },
      );
    }
    const text = decoder.decode(bytes);
    let value: Json;
    try {
      value = JSON.parse(text);
    } catch {
      value = text;
    }
    cache.set(sha, value);
    return value;
  };

  // Every payload of the run read at once: each read waits on the disk, and the reads do not depend on
  // one another.
  // (A batch of a program's spans is read as bytes, by receivedRows.)
  const jsonPayloads = events.flatMap((e) => (e.type === "spans_received" ? [] : payloadsOf(e)));
  await Promise.all([...new Set(jsonPayloads)].map((sha) => readJson(sha)));

  const end = events.find((e) => e.type === "run_completed" || e.type === "run_failed") ?? null;
  const d = first.data;
  const spec = isObj(d.spec) ? d.spec : {};
  const sessionId = str(d.session_id);
  const agentSpan = first.span_id ?? "seq-0";

  // The spans of the steps: events grouped by span ID (an older run's step without one is its own span).
  const groups = new Map<string, EvidenceEvent[]>();
  for (const e of events) {
    if (e === first || e === end) continue;
    const id = e.span_id ?? (NOT_STEPS.has(e.type) ? null : `seq-${e.seq}`);
    if (id === null || id === agentSpan) continue;
    const group = groups.get(id);
    if (group) group.push(e);
    else groups.set(id, [e]);
  }

  const modelCalls: TraceRow[] = [];
  const tokens: TraceRow[] = [];
  const callMessages: TraceRow[] = [];
  const messages = new Map<string, TraceStoredPart>();
  const toolCalls: TraceRow[] = [];
  const spans: TraceRow[] = [];
  const attributesOf = new Map<string, Record<string, Json>>();
  const askedBy = new Map<string, string>(); // tool call ID → the model call's span that asked for it
  const asked: { span: string; id: string; name: string; args: Json }[] = [];
  let prompt: Json = null;
  let lastReply: TraceMessage | null = null;

  for (const [spanId, group] of groups) {
    const primary = group.reduce((a, b) => ((PRIORITY[b.type] ?? 9) < (PRIORITY[a.type] ?? 9) ? b : a));
    const failed = group.find((e) => e.type === "step_failed") ?? null;
    const stepType = primary.type === "step_failed" ? str(primary.data.step) ?? "step_failed" : primary.type;
    const rendered = group.find((e) => e.type === "prompt_rendered");
    if (rendered) prompt = await readJson(rendered.payload);
    const starts = group.map((e) => e.started_at).filter((t): t is string => t !== null).sort();
    const start = starts[0] ?? null;
    const endTime = group.map((e) => e.time).sort().at(-1)!;
    const attributes: Record<string, Json> = {};
    let kind = "UNKNOWN";
    let name = stepType;
    if (stepType === "model_called") {
      kind = "LLM";
      const call = await modelCallRows(primary, spanId, failed, readJson, sessionId);
      modelCalls.push(call.row);
      const exact = tokenRow(primary, spanId, await readJson(str(primary.data.tokens_payload)));
      if (exact) tokens.push(exact);
      for (const p of call.parts) messages.set(p.stored.hash, p.stored);
      callMessages.push(...call.parts.map((p) => p.row));
      for (const t of call.asked) {
        askedBy.set(t.id, spanId);
        asked.push({ span: spanId, ...t });
      }
      if (call.reply) lastReply = call.reply;
      name = `chat ${call.row.model ?? ""}`.trim();
      Object.assign(attributes, call.attributes);
    } else if (stepType === "tool_called") {
      kind = "TOOL";
      name = `execute_tool ${str(primary.data.tool) ?? ""}`.trim();
      attributes["gen_ai.operation.name"] = "execute_tool";
      attributes["gen_ai.tool.name"] = str(primary.data.tool);
      attributes["gen_ai.tool.call.id"] = str(primary.data.call_id);
    } else if (primary.type === "span_recorded") {
      const op = str(
        isObj(primary.data.attributes) ? primary.data.attributes["gen_ai.operation.name"] : null,
      );
      kind = op === "chat" || op === "text_completion"
        ? "CHAT_MODEL"
        : op === "execute_tool"
        ? "TOOL"
        : op === "invoke_agent" || op === "create_agent"
        ? "AGENT"
        : "UNKNOWN";
      name = str(primary.data.name) ?? "span";
      if (isObj(primary.data.attributes)) Object.assign(attributes, primary.data.attributes);
    } else if (stepType === "prompt_rendered" || stepType === "trace_imported") {
      kind = "PARSER";
    }
    attributes["mlflow.spanType"] = kind;
    const isProviderTool = primary.type === "tool_called" && primary.data.executed_by === "provider";
    // A step whose end is known but whose start is not keeps its end; a tool the provider ran has neither,
    // since provrun did not see it run: the time it was written is not when it ran.
    const endKept = isProviderTool
      ? null
      : (primary.type === "span_recorded" ? str(primary.data.end_time) : endTime);
    const timed = start !== null && endKept !== null;
    const errorOf = failed ?? (primary.type === "tool_called" && primary.data.error ? primary : null);
    spans.push({
      run_id: runId,
      span_id: spanId,
      trace_id: primary.trace_id,
      parent_span_id: primary.parent_span_id ??
        (primary.span_id === null
          ? (isProviderTool ? askedBy.get(str(primary.data.call_id) ?? "") ?? agentSpan : agentSpan)
          : null),
      seq: primary.seq,
      line_hash: lineHash(primary.seq),
      event_type: primary.type,
      kind,
      name,
      start_time: isProviderTool ? null : start,
      end_time: endKept,
      duration_ms: timed ? durationMs(start!, endKept!) : null,
      timed: timed ? 1 : 0,
      status: errorOf ? "ERROR" : primary.type === "span_recorded" ? recordedStatus(primary) : "OK",
      error: errorOf
        ? `${str(errorOf.data.error) ?? "Error"}: ${str(errorOf.data.message) ?? ""}`.trim()
        : primary.type === "span_recorded" && recordedStatus(primary) === "ERROR"
        ? str(isObj(primary.data.status) ? primary.data.status.message : null)
        : null,
      origin: primary.type === "span_recorded" ? "span_recorded" : "evidence",
      scope: primary.type === "span_recorded" ? str(primary.data.scope) : "provrun",
      attributes: "",
    });
    attributesOf.set(spanId, attributes);
  }

  // Tool calls, with their arguments and results from payloads; inputs and outputs into their spans.
  const seen = new Set<string>();
  for (const e of events) {
    if (e.type !== "tool_called") continue;
    const spanId = e.span_id ?? `seq-${e.seq}`;
    let callId = str(e.data.call_id) ?? `seq-${e.seq}`;
    if (seen.has(callId)) callId = `${callId}@${e.seq}`;
    seen.add(callId);
    const args = await readJson(e.payload);
    const result = await readJson(str(e.data.result_payload));
    const executedBy = str(e.data.executed_by);
    toolCalls.push({
      run_id: runId,
      call_id: callId,
      span_id: spanId,
      seq: e.seq,
      model_span_id: askedBy.get(str(e.data.call_id) ?? "") ??
        (executedBy === "provider" ? e.parent_span_id : null),
      tool: str(e.data.tool) ?? "",
      arguments: json(args),
      result: e.data.result_payload ? json(result) : null,
      error: str(e.data.error),
      error_message: str(e.data.message),
      executed_by: executedBy,
      deferred: 0,
      provider_run: executedBy === "provider" ? 1 : 0,
      output_tool: executedBy === "output" ? 1 : 0,
    });
    const attributes = attributesOf.get(spanId);
    if (attributes) {
      attributes["mlflow.spanInputs"] = args;
      attributes["mlflow.spanOutputs"] = result;
    }
  }
  // A call the model asked for that the run never made (a tool without execute, a run stopped at its limit).
  for (const a of asked) {
    if (seen.has(a.id)) continue;
    seen.add(a.id);
    toolCalls.push({
      run_id: runId,
      call_id: a.id,
      span_id: null,
      seq: null,
      model_span_id: a.span,
      tool: a.name,
      arguments: json(a.args),
      result: null,
      error: null,
      error_message: null,
      executed_by: null,
      deferred: 1,
      provider_run: 0,
      output_tool: 0,
    });
  }

  const finalText = lastReply?.parts.filter((p) => p.kind === "text").map((p) => (p as { text: string }).text)
    .join("") ?? null;
  const agentAttributes: Record<string, Json> = {
    "mlflow.spanType": "AGENT",
    "mlflow.spanInputs": prompt,
    "mlflow.spanOutputs": finalText,
    "gen_ai.operation.name": "invoke_agent",
    "gen_ai.agent.name": str(d.agent) ?? str(spec.name),
    "gen_ai.conversation.id": sessionId,
    "session_id": sessionId,
    "provrun.run_id": runId,
  };
  const endStatus = end?.type === "run_completed"
    ? "completed"
    : end?.type === "run_failed"
    ? "failed"
    : "incomplete";
  spans.unshift({
    run_id: runId,
    span_id: agentSpan,
    trace_id: first.trace_id,
    parent_span_id: null,
    seq: 0,
    line_hash: lineHash(0),
    event_type: "run_created",
    kind: "AGENT",
    name: `invoke_agent ${str(d.agent) ?? str(spec.name) ?? ""}`.trim(),
    start_time: first.time,
    end_time: end?.time ?? null,
    duration_ms: end ? durationMs(first.time, end.time) : null,
    timed: end ? 1 : 0,
    status: endStatus === "completed" ? "OK" : endStatus === "failed" ? "ERROR" : "UNSET",
    error: end?.type === "run_failed"
      ? `${str(end.data.error) ?? "Error"}: ${str(end.data.message) ?? ""}`
      : null,
    origin: "evidence",
    scope: "provrun",
    attributes: json(agentAttributes),
  });
  for (const s of spans) {
    const a = attributesOf.get(s.span_id as string);
    if (a && s.event_type !== "run_created") s.attributes = json(a);
  }

  const access: TraceRow[] = [];
  for (const e of events) {
    const decision = e.type === "access_granted"
      ? "granted"
      : e.type === "access_denied"
      ? "denied"
      : e.type === "access_requested"
      ? "requested"
      : null;
    if (!decision) continue;
    for (const uri of new Set(e.refs)) {
      access.push({
        run_id: runId,
        seq: e.seq,
        uri,
        decision,
        mode: str(e.data.mode),
        reason: str(e.data.reason) ??
          (decision === "granted" && str(e.data.expires_at) ? `expires ${str(e.data.expires_at)}` : null),
      });
    }
  }

  // A program's spans (spans_received): rows of their own, beside provrun's steps.
  const received = await receivedRows({
    runId,
    events,
    lineHash,
    payload: (sha) => source.payload(sha),
    taken: { spans: new Set(spans.map((s) => s.span_id as string)), calls: seen },
  });
  spans.push(...received.spans);
  modelCalls.push(...received.modelCalls);
  toolCalls.push(...received.toolCalls);

  const spanOfSeq = new Map<number, string>();
  for (const s of spans) {
    if (typeof s.seq === "number" && s.origin !== "receiver") spanOfSeq.set(s.seq, s.span_id as string);
  }
  const assessments: TraceRow[] = source.assessments.map((a, n) => ({
    run_id: runId,
    n,
    seq: a.seq,
    span_id: a.span_id ?? (a.seq !== null ? spanOfSeq.get(a.seq) ?? null : null),
    name: a.name,
    value: json(a.value),
    rationale: a.rationale,
    source: a.source,
    created_at: a.created_at,
    experiment: a.experiment ?? null,
  }));

  const recordedCost = end && isObj(end.data.cost) ? end.data.cost : null;
  const run: TraceRow = {
    cost: str(recordedCost?.amount),
    currency: str(recordedCost?.currency),
    run_id: runId,
    org: str(d.org),
    domain: str(d.domain),
    env: str(d.env),
    actor: str(d.actor) ?? first.actor,
    mode: str(d.mode),
    experiment: str(d.experiment)?.replace(/\?.*$/, "") ?? null,
    experiment_pin: str(d.experiment_pin),
    agent: str(d.agent) ?? str(spec.name),
    agent_version: str(d.agent_version),
    backend: str(d.backend) ?? str(spec.backend),
    model: str(d.model) ?? str(spec.model),
    session_id: sessionId,
    parent_run: str(d.parent_run),
    status: endStatus,
    started_at: first.time,
    ended_at: end?.time ?? null,
    trace_id: first.trace_id,
    span_id: first.span_id,
  };
  return {
    run,
    spans,
    modelCalls,
    tokens,
    messages: [...messages.values()],
    callMessages,
    toolCalls,
    access,
    assessments,
  };
}

/** The row of one model call, the rows of its messages, and the tool calls its reply asked for. */
async function modelCallRows(
  e: EvidenceEvent,
  spanId: string,
  failed: EvidenceEvent | null,
  readJson: (sha: string | null | undefined) => Promise<Json>,
  sessionId: string | null,
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
  const runId = e.run_id;
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
  add("sent", storedParts(sent.messages));
  if (received) add("received", storedParts([received]));
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

/**
 * The exact tokens of a model call, from its tokens payload (provrun's capture writes it where the provider
 * returned token IDs): each list kept only when it is a list of the right numbers, else empty.
 */
function tokenRow(e: EvidenceEvent, spanId: string, tokens: Json): TraceRow | null {
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

/** A span an approved library or an older receiver recorded: OTLP's status code as the tables write it. */
function recordedStatus(e: EvidenceEvent): string {
  const code = isObj(e.data.status) ? e.data.status.code : null;
  return code === 2 ? "ERROR" : code === 0 ? "UNSET" : "OK";
}

function durationMs(start: string, end: string): number {
  return (micros(end) - micros(start)) / 1000;
}

/** Microseconds since the epoch of an RFC 3339 UTC time, keeping the fraction that `Date` would cut. */
function micros(time: string): number {
  const m = /^(.*?)(?:\.(\d+))?Z$/.exec(time)!;
  const whole = Date.parse(`${m[1]}Z`);
  const frac = (m[2] ?? "").padEnd(6, "0").slice(0, 6);
  return whole * 1000 + Number(frac);
}

type Obj = { [key: string]: Json };
function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
function str(v: unknown): string | null {
  return typeof v === "string" ? v : null;
}
function num(v: unknown): number | null {
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

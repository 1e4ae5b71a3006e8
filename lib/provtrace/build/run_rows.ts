/**
 * The rows of one run: its events and payloads mapped to spans, model calls, messages, tool calls, access
 * and assessments, as MLflow's autolog maps a run's steps (an `AGENT` span at the root, an `LLM` span for
 * each model call, a `TOOL` span for each tool call), with MLflow's names beside the GenAI names. No time is
 * guessed: a step with no recorded start keeps its end (if any) and is marked `timed` false.
 * @module
 */
import type { Assessment, EvidenceEvent, Json } from "../../provevi/mod.ts";
import { ProveviError } from "../../provevi/evidence/mod.ts";
import { payloadsOf } from "../../provevi/evidence/mod.ts";
import { sha256Hex } from "../../provevi/evidence/mod.ts";
import { receivedRows } from "./program_span_rows.ts";
import type { TraceMessage, TraceStoredPart } from "./messages.ts";
import { modelCallRows, tokenRow } from "./model_call_rows.ts";
import { isObj, json, str } from "./_values.ts";

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
  /** The SHA-256 of each of `lines`, when the reader of the lines has them already. */
  lineHashes?: readonly string[];
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
  // a batch of a program's spans: its spans are rows of their own (program_span_rows.ts)
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
  const hashes = source.lineHashes?.length === lines.length ? source.lineHashes : null;
  const lineHash = (seq: number) =>
    lines[seq] === undefined ? null : hashes ? hashes[seq]! : sha256Hex(lines[seq]!);
  const readJson = payloadReader(source, runId);

  // Every payload of the run read at once: each read waits on the disk, and the reads do not depend on
  // one another.
  // (A batch of a program's spans is read as bytes, by receivedRows.)
  const jsonPayloads = events.flatMap((e) => (e.type === "spans_received" ? [] : payloadsOf(e)));
  await Promise.all([...new Set(jsonPayloads)].map((sha) => readJson(sha)));

  const end = events.find((e) => e.type === "run_completed" || e.type === "run_failed") ?? null;
  const run: RunContext = {
    runId,
    first,
    end,
    sessionId: str(first.data.session_id),
    agentSpan: first.span_id ?? "seq-0",
    lineHash,
    readJson,
  };
  const rows = emptyStepRows();
  for (const [spanId, group] of stepGroups(events, run)) await addStep(run, rows, { spanId, group });
  const seen = await addToolCalls(run, rows, events);
  const { spans, modelCalls, toolCalls } = rows;
  spans.unshift(agentSpanRow(run, rows));
  for (const s of spans) {
    const a = rows.attributesOf.get(s.span_id as string);
    if (a && s.event_type !== "run_created") s.attributes = json(a);
  }
  const access = accessRows(events, runId);

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

  return {
    run: runRow(run),
    spans,
    modelCalls,
    tokens: rows.tokens,
    messages: [...rows.messages.values()],
    callMessages: rows.callMessages,
    toolCalls,
    access,
    assessments: assessmentRows(source.assessments, { runId, spans }),
  };
}

/** What the rows of a run's steps share. */
interface RunContext {
  runId: string;
  /** The run's `run_created` event. */
  first: EvidenceEvent;
  /** The run's ending event, if it has one. */
  end: EvidenceEvent | null;
  sessionId: string | null;
  /** The span of the run as a whole, the parent of a step that names none. */
  agentSpan: string;
  lineHash: (seq: number) => string | null;
  readJson: (sha: string | null | undefined) => Promise<Json>;
}

/** The rows the steps make, gathered as the spans are walked in order. */
interface StepRows {
  spans: TraceRow[];
  modelCalls: TraceRow[];
  tokens: TraceRow[];
  callMessages: TraceRow[];
  messages: Map<string, TraceStoredPart>;
  toolCalls: TraceRow[];
  attributesOf: Map<string, Record<string, Json>>;
  /** Tool call ID → the model call's span that asked for it. */
  askedBy: Map<string, string>;
  asked: { span: string; id: string; name: string; args: Json }[];
  prompt: Json;
  lastReply: TraceMessage | null;
}

function emptyStepRows(): StepRows {
  return {
    spans: [],
    modelCalls: [],
    tokens: [],
    callMessages: [],
    messages: new Map(),
    toolCalls: [],
    attributesOf: new Map(),
    askedBy: new Map(),
    asked: [],
    prompt: null,
    lastReply: null,
  };
}

/** Reads a payload as JSON (as text when it is not JSON), once each; a payload that cannot be read throws. */
function payloadReader(
  source: TraceRunSource,
  runId: string,
): (sha: string | null | undefined) => Promise<Json> {
  const cache = new Map<string, Json>();
  return async (sha) => {
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
}

/** The spans of the steps: events grouped by span ID (an older run's step without one is its own span). */
function stepGroups(events: readonly EvidenceEvent[], run: RunContext): Map<string, EvidenceEvent[]> {
  const groups = new Map<string, EvidenceEvent[]>();
  for (const e of events) {
    if (e === run.first || e === run.end) continue;
    const id = e.span_id ?? (NOT_STEPS.has(e.type) ? null : `seq-${e.seq}`);
    if (id === null || id === run.agentSpan) continue;
    const group = groups.get(id);
    if (group) group.push(e);
    else groups.set(id, [e]);
  }
  return groups;
}

/** Adds the span of one step, and the rows of its model call if it is one. */
async function addStep(
  run: RunContext,
  rows: StepRows,
  { spanId, group }: { spanId: string; group: EvidenceEvent[] },
): Promise<void> {
  const primary = group.reduce((a, b) => ((PRIORITY[b.type] ?? 9) < (PRIORITY[a.type] ?? 9) ? b : a));
  const failed = group.find((e) => e.type === "step_failed") ?? null;
  const stepType = primary.type === "step_failed" ? str(primary.data.step) ?? "step_failed" : primary.type;
  const rendered = group.find((e) => e.type === "prompt_rendered");
  if (rendered) rows.prompt = await run.readJson(rendered.payload);
  const starts = group.map((e) => e.started_at).filter((t): t is string => t !== null).sort();
  const start = starts[0] ?? null;
  const endTime = group.map((e) => e.time).sort().at(-1)!;
  const { kind, name, attributes } = await stepKind(run, rows, { spanId, primary, failed, stepType });
  attributes["mlflow.spanType"] = kind;
  const isProviderTool = primary.type === "tool_called" && primary.data.executed_by === "provider";
  // A step whose end is known but whose start is not keeps its end; a tool the provider ran has neither,
  // since provrun did not see it run: the time it was written is not when it ran.
  const endKept = isProviderTool
    ? null
    : (primary.type === "span_recorded" ? str(primary.data.end_time) : endTime);
  const timed = start !== null && endKept !== null;
  const errorOf = failed ?? (primary.type === "tool_called" && primary.data.error ? primary : null);
  rows.spans.push({
    run_id: run.runId,
    span_id: spanId,
    trace_id: primary.trace_id,
    parent_span_id: primary.parent_span_id ??
      (primary.span_id === null
        ? (isProviderTool
          ? rows.askedBy.get(str(primary.data.call_id) ?? "") ?? run.agentSpan
          : run.agentSpan)
        : null),
    seq: primary.seq,
    line_hash: run.lineHash(primary.seq),
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
  rows.attributesOf.set(spanId, attributes);
}

/** A step's MLflow span type, its name and its attributes; a model call's rows are added on the way. */
async function stepKind(
  run: RunContext,
  rows: StepRows,
  { spanId, primary, failed, stepType }: {
    spanId: string;
    primary: EvidenceEvent;
    failed: EvidenceEvent | null;
    stepType: string;
  },
): Promise<{ kind: string; name: string; attributes: Record<string, Json> }> {
  const attributes: Record<string, Json> = {};
  if (stepType === "model_called") {
    const call = await modelCallRows(primary, {
      spanId,
      failed,
      readJson: run.readJson,
      sessionId: run.sessionId,
    });
    rows.modelCalls.push(call.row);
    const exact = tokenRow(primary, spanId, await run.readJson(str(primary.data.tokens_payload)));
    if (exact) rows.tokens.push(exact);
    for (const p of call.parts) rows.messages.set(p.stored.hash, p.stored);
    rows.callMessages.push(...call.parts.map((p) => p.row));
    for (const t of call.asked) {
      rows.askedBy.set(t.id, spanId);
      rows.asked.push({ span: spanId, ...t });
    }
    if (call.reply) rows.lastReply = call.reply;
    Object.assign(attributes, call.attributes);
    return { kind: "LLM", name: `chat ${call.row.model ?? ""}`.trim(), attributes };
  }
  if (stepType === "tool_called") {
    attributes["gen_ai.operation.name"] = "execute_tool";
    attributes["gen_ai.tool.name"] = str(primary.data.tool);
    attributes["gen_ai.tool.call.id"] = str(primary.data.call_id);
    return { kind: "TOOL", name: `execute_tool ${str(primary.data.tool) ?? ""}`.trim(), attributes };
  }
  if (primary.type === "span_recorded") {
    if (isObj(primary.data.attributes)) Object.assign(attributes, primary.data.attributes);
    return { kind: recordedKind(primary), name: str(primary.data.name) ?? "span", attributes };
  }
  const parser = stepType === "prompt_rendered" || stepType === "trace_imported";
  return { kind: parser ? "PARSER" : "UNKNOWN", name: stepType, attributes };
}

/** The MLflow span type of a recorded span, from its GenAI operation. */
function recordedKind(primary: EvidenceEvent): string {
  const op = str(
    isObj(primary.data.attributes) ? primary.data.attributes["gen_ai.operation.name"] : null,
  );
  return op === "chat" || op === "text_completion"
    ? "CHAT_MODEL"
    : op === "execute_tool"
    ? "TOOL"
    : op === "invoke_agent" || op === "create_agent"
    ? "AGENT"
    : "UNKNOWN";
}

/**
 * Tool calls, with their arguments and results from payloads; inputs and outputs into their spans. Gives the
 * call IDs taken.
 */
async function addToolCalls(
  run: RunContext,
  rows: StepRows,
  events: readonly EvidenceEvent[],
): Promise<Set<string>> {
  const seen = new Set<string>();
  for (const e of events) {
    if (e.type !== "tool_called") continue;
    const spanId = e.span_id ?? `seq-${e.seq}`;
    let callId = str(e.data.call_id) ?? `seq-${e.seq}`;
    if (seen.has(callId)) callId = `${callId}@${e.seq}`;
    seen.add(callId);
    const args = await run.readJson(e.payload);
    const result = await run.readJson(str(e.data.result_payload));
    const executedBy = str(e.data.executed_by);
    rows.toolCalls.push({
      run_id: run.runId,
      call_id: callId,
      span_id: spanId,
      seq: e.seq,
      model_span_id: rows.askedBy.get(str(e.data.call_id) ?? "") ??
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
    const attributes = rows.attributesOf.get(spanId);
    if (attributes) {
      attributes["mlflow.spanInputs"] = args;
      attributes["mlflow.spanOutputs"] = result;
    }
  }
  // A call the model asked for that the run never made (a tool without execute, a run stopped at its limit).
  for (const a of rows.asked) {
    if (seen.has(a.id)) continue;
    seen.add(a.id);
    rows.toolCalls.push({
      run_id: run.runId,
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
  return seen;
}

/** How the run ended: completed, failed, or incomplete when it has no ending event. */
function endStatusOf(end: EvidenceEvent | null): string {
  return end?.type === "run_completed" ? "completed" : end?.type === "run_failed" ? "failed" : "incomplete";
}

/** The span of the run as a whole, from its first event to its end, with the prompt and the final reply. */
function agentSpanRow(run: RunContext, rows: StepRows): TraceRow {
  const { first, end, runId, sessionId } = run;
  const d = first.data;
  const spec = isObj(d.spec) ? d.spec : {};
  const finalText =
    rows.lastReply?.parts.filter((p) => p.kind === "text").map((p) => (p as { text: string }).text)
      .join("") ?? null;
  const agentAttributes: Record<string, Json> = {
    "mlflow.spanType": "AGENT",
    "mlflow.spanInputs": rows.prompt,
    "mlflow.spanOutputs": finalText,
    "gen_ai.operation.name": "invoke_agent",
    "gen_ai.agent.name": str(d.agent) ?? str(spec.name),
    "gen_ai.conversation.id": sessionId,
    "session_id": sessionId,
    "provrun.run_id": runId,
  };
  const endStatus = endStatusOf(end);
  return {
    run_id: runId,
    span_id: run.agentSpan,
    trace_id: first.trace_id,
    parent_span_id: null,
    seq: 0,
    line_hash: run.lineHash(0),
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
  };
}

/** The access rows: one for each URI that an access request, grant or denial names. */
function accessRows(events: readonly EvidenceEvent[], runId: string): TraceRow[] {
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
  return access;
}

/** The assessment rows, each tied to the span of its event when it names no span. */
function assessmentRows(
  assessments: readonly Assessment[],
  { runId, spans }: { runId: string; spans: TraceRow[] },
): TraceRow[] {
  const spanOfSeq = new Map<number, string>();
  for (const s of spans) {
    if (typeof s.seq === "number" && s.origin !== "receiver") spanOfSeq.set(s.seq, s.span_id as string);
  }
  return assessments.map((a, n) => ({
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
}

/** The run's own row: who ran what, with which model, how it ended and what it cost. */
function runRow({ first, end, runId, sessionId }: RunContext): TraceRow {
  const d = first.data;
  const spec = isObj(d.spec) ? d.spec : {};
  const recordedCost = end && isObj(end.data.cost) ? end.data.cost : null;
  return {
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
    status: endStatusOf(end),
    started_at: first.time,
    ended_at: end?.time ?? null,
    trace_id: first.trace_id,
    span_id: first.span_id,
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

/**
 * The model calls an export writes, read from the trace database in bulk: for each run, its calls' message
 * parts (each distinct part parsed once, though a conversation sends it again in every call), the tool calls
 * their replies asked for, their exact tokens, the run's and steps' assessments, and the events each call's
 * line holds. Each format makes its lines from these; none reads the database itself.
 * @module
 */
import type { DatabaseSync, SQLInputValue, StatementSync } from "node:sqlite";
import type { Json } from "../../provevi/mod.ts";

/** A message part as the trace database keeps it: its role, its kind and its fields. */
export type Part = { role: string; kind: string; [key: string]: Json };

/** One event a line holds: its seq and the SHA-256 of its line in `events.jsonl`. */
export interface LineEvent {
  seq: number;
  line_hash: string;
}

/** A tool call that a call's reply asked for, with its result. */
export interface CallTool {
  call_id: string;
  tool: string;
  arguments: Json;
  result: Json;
  error: string | null;
  executed_by: string | null;
  deferred: boolean;
  /** The `tool_called` event, when the tool ran and was recorded. */
  event: LineEvent | null;
}

/** The exact tokens of a call, where its provider returned them. */
export interface CallTokens {
  prompt_token_ids: number[] | null;
  completion_token_ids: number[] | null;
  logprobs: number[] | null;
}

/** One model call and everything its lines are made of. */
export interface Call {
  row: Record<string, string | number | null>;
  run_id: string;
  span_id: string;
  seq: number | null;
  /** Its messages as sent: parts grouped by message, in order. */
  sent: Part[][];
  /** Its reply's parts. */
  received: Part[];
  tools: Json[] | null;
  results: CallTool[];
  tokens: CallTokens | null;
  /** The run's and this step's assessments. */
  assessments: Json[];
  /** The `model_called` event, when the call has a seq and a line. */
  event: LineEvent | null;
}

/** The run of a call, as `trace_runs` holds it. */
export interface CallRun {
  run_id: string;
  agent: string | null;
  agent_version: string | null;
  model: string | null;
  session_id: string | null;
  parent_run: string | null;
}

/**
 * Reads the calls of the given rows, in their order, run by run.
 *
 * @param db The trace database, inside the export's snapshot.
 * @param rows The chosen model calls (`run_id`, `span_id`, `seq`, `line_hash`, `tools`, …).
 * @returns The calls, in the rows' order.
 */
export function loadCalls(db: DatabaseSync, rows: Record<string, string | number | null>[]): Call[] {
  const parsed = new Map<string, Part>();
  const partOf = (hash: string, content: string): Part => {
    let part = parsed.get(hash);
    if (part === undefined) parsed.set(hash, part = JSON.parse(content) as Part);
    return part;
  };
  const byRun = new Map<string, Record<string, string | number | null>[]>();
  for (const r of rows) {
    const list = byRun.get(String(r.run_id));
    if (list) list.push(r);
    else byRun.set(String(r.run_id), [r]);
  }
  const calls = new Map<string, Call>();
  for (const [runId, runRows] of byRun) {
    const spans = new Set(runRows.map((r) => String(r.span_id)));
    const parts = partsOfRun(db, runId, spans, partOf);
    const results = toolsOfRun(db, runId);
    const tokens = tokensOfRun(db, runId);
    const assessments = assessmentsOfRun(db, runId);
    for (const r of runRows) {
      const spanId = String(r.span_id);
      const seq = r.seq === null ? null : Number(r.seq);
      const own = parts.get(spanId) ?? { sent: [], received: [] };
      calls.set(`${runId} ${spanId}`, {
        row: r,
        run_id: runId,
        span_id: spanId,
        seq,
        sent: own.sent,
        received: own.received,
        tools: r.tools === null ? null : JSON.parse(String(r.tools)) as Json[],
        results: results.get(spanId) ?? [],
        tokens: tokens.get(spanId) ?? null,
        assessments: assessments.filter((a) => a.on_run || a.span_id === spanId).map((a) => a.json),
        event: seq !== null && r.line_hash !== null ? { seq, line_hash: String(r.line_hash) } : null,
      });
    }
  }
  return rows.map((r) => calls.get(`${r.run_id} ${r.span_id}`)!);
}

/** The runs of the calls, by run ID. */
export function runsOf(db: DatabaseSync, runIds: readonly string[]): Map<string, CallRun> {
  const out = new Map<string, CallRun>();
  const statement = preparedOnce(
    db,
    "SELECT run_id, agent, agent_version, model, session_id, parent_run FROM trace_runs WHERE run_id = ?",
  );
  for (const id of runIds) {
    const row = statement.get(id) as CallRun | undefined;
    if (row) out.set(id, row);
  }
  return out;
}

/** The sent and received parts of a run's chosen calls, grouped by message. */
function partsOfRun(
  db: DatabaseSync,
  runId: string,
  spans: Set<string>,
  partOf: (hash: string, content: string) => Part,
): Map<string, { sent: Part[][]; received: Part[] }> {
  const out = new Map<string, { sent: Part[][]; received: Part[] }>();
  let last: { span: string; direction: string; message: number } | null = null;
  const statement = preparedOnce(
    db,
    `
    SELECT cm.span_id, cm.direction, cm.message, cm.message_hash, m.content FROM trace_call_messages cm
      JOIN trace_messages m ON m.hash = cm.message_hash
    WHERE cm.run_id = ? ORDER BY cm.span_id, cm.direction DESC, cm.position`,
  );
  for (const r of statement.iterate(runId) as Iterable<Record<string, string | number>>) {
    const span = String(r.span_id);
    if (!spans.has(span)) continue;
    let call = out.get(span);
    if (!call) out.set(span, call = { sent: [], received: [] });
    const part = partOf(String(r.message_hash), String(r.content));
    if (r.direction === "received") {
      call.received.push(part);
      continue;
    }
    const message = Number(r.message);
    if (last && last.span === span && last.direction === "sent" && last.message === message) {
      call.sent.at(-1)!.push(part);
    } else call.sent.push([part]);
    last = { span, direction: String(r.direction), message };
  }
  return out;
}

/** The tool calls of a run, by the model call that asked for them, each with its `tool_called` event. */
function toolsOfRun(db: DatabaseSync, runId: string): Map<string, CallTool[]> {
  const out = new Map<string, CallTool[]>();
  const rows = preparedOnce(
    db,
    `
    SELECT t.model_span_id, t.call_id, t.tool, t.arguments, t.result, t.error, t.executed_by, t.deferred,
      t.seq, s.line_hash
    FROM trace_tool_calls t LEFT JOIN trace_spans s ON s.run_id = t.run_id AND s.span_id = t.span_id
    WHERE t.run_id = ? ORDER BY t.seq IS NULL, t.seq, t.call_id`,
  ).all(runId) as Record<
    string,
    string | number | null
  >[];
  for (const t of rows) {
    if (t.model_span_id === null) continue;
    const list = out.get(String(t.model_span_id)) ?? [];
    list.push({
      call_id: String(t.call_id),
      tool: String(t.tool),
      arguments: t.arguments === null ? null : JSON.parse(String(t.arguments)),
      result: t.result === null ? null : JSON.parse(String(t.result)),
      error: t.error === null ? null : String(t.error),
      executed_by: t.executed_by === null ? null : String(t.executed_by),
      deferred: t.deferred === 1,
      event: t.seq !== null && t.line_hash !== null
        ? { seq: Number(t.seq), line_hash: String(t.line_hash) }
        : null,
    });
    out.set(String(t.model_span_id), list);
  }
  return out;
}

/** The exact tokens of a run's calls, by span. */
function tokensOfRun(db: DatabaseSync, runId: string): Map<string, CallTokens> {
  const out = new Map<string, CallTokens>();
  const list = (v: string | null) => v === null ? null : JSON.parse(v) as number[];
  for (
    const r of preparedOnce(
      db,
      "SELECT span_id, prompt_token_ids, completion_token_ids, logprobs FROM trace_tokens WHERE run_id = ?",
    ).all(runId) as Record<string, string | null>[]
  ) {
    out.set(String(r.span_id), {
      prompt_token_ids: list(r.prompt_token_ids!),
      completion_token_ids: list(r.completion_token_ids!),
      logprobs: list(r.logprobs!),
    });
  }
  return out;
}

/** The assessments of a run and its steps, as a line shows them. */
function assessmentsOfRun(
  db: DatabaseSync,
  runId: string,
): { on_run: boolean; span_id: string | null; json: Json }[] {
  return (preparedOnce(
    db,
    `
    SELECT name, value, rationale, source, seq, span_id, experiment FROM trace_assessments WHERE run_id = ? ORDER BY n`,
  )
    .all(runId as SQLInputValue) as {
      name: string;
      value: string;
      rationale: string | null;
      source: string | null;
      seq: number | null;
      span_id: string | null;
      experiment: string | null;
    }[]).map((a) => ({
      // An assessment of the run's experiment (as a whole, or of the version it pinned) judges the run too.
      on_run: a.seq === null && a.span_id === null,
      span_id: a.span_id,
      json: {
        name: a.name,
        value: JSON.parse(a.value) as Json,
        rationale: a.rationale,
        source: a.source,
        on: a.experiment !== null ? "experiment" : a.span_id === null ? "run" : "step",
        ...(a.experiment !== null ? { experiment: a.experiment } : {}),
      },
    }));
}

/** Statements by database and text, prepared once: an export reads each run with the same few. */
const prepared = new WeakMap<DatabaseSync, Map<string, StatementSync>>();

function preparedOnce(db: DatabaseSync, sql: string): StatementSync {
  let byText = prepared.get(db);
  if (byText === undefined) prepared.set(db, byText = new Map());
  let found = byText.get(sql);
  if (found === undefined) byText.set(sql, found = db.prepare(sql));
  return found;
}

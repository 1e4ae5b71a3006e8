/**
 * The model calls an export writes, read from the trace database in bulk: for each run, its calls' message
 * parts (each distinct part parsed once, though a conversation sends it again in every call), the tool calls
 * their replies asked for, their exact tokens, the run's and steps' assessments, and the events each call's
 * line holds. Each format makes its lines from these; none reads the database itself.
 * @module
 */
import type { DatabaseSync, StatementSync } from "node:sqlite";
import type { Json } from "../../provevi/mod.ts";
import type { TraceRunTables } from "../db/mod.ts";

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

/** A chosen model call's row, as the export's query gives it (`run_id`, `span_id`, `seq`, `line_hash`, `tools`, …). */
export type CallRow = Record<string, string | number | null>;

/**
 * Reads the calls of the given rows, in their order, run by run.
 *
 * @param db The trace database, inside the export's snapshot.
 * @param rows The chosen model calls (`run_id`, `span_id`, `seq`, `line_hash`, `tools`, …).
 * @returns The calls, in the rows' order.
 */
export function loadCalls(db: DatabaseSync, rows: CallRow[]): Call[] {
  const reader = new CallReader(db);
  for (const [runId, runRows] of byRun(rows)) reader.read(runId, runRows);
  return reader.inOrder(rows);
}

/** Rows grouped by run, in the order runs first appear. */
export function byRun(rows: CallRow[]): Map<string, CallRow[]> {
  const out = new Map<string, CallRow[]>();
  for (const r of rows) {
    const list = out.get(String(r.run_id));
    if (list) list.push(r);
    else out.set(String(r.run_id), [r]);
  }
  return out;
}

/**
 * Makes the calls of runs, run by run: from the run's rows as the export's check read them for their digest
 * (so that a run's rows are read once), or else from the database. Each distinct message part is parsed once
 * across all runs.
 */
export class CallReader {
  #db: DatabaseSync;
  #parsed = new Map<string, Part>();
  #calls = new Map<string, Call>();

  /** @param db The trace database, inside the export's snapshot. */
  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  /**
   * Makes one run's calls and keeps them for {@linkcode CallReader.inOrder}.
   *
   * @param runId The run.
   * @param runRows The run's chosen model calls.
   * @param tables The run's rows as its digest read them, or none to read them from the database.
   */
  read(runId: string, runRows: CallRow[], tables?: TraceRunTables): void {
    const spans = new Set(runRows.map((r) => String(r.span_id)));
    const part = (hash: string, content: string): Part => {
      let found = this.#parsed.get(hash);
      if (found === undefined) this.#parsed.set(hash, found = JSON.parse(content) as Part);
      return found;
    };
    const run = tables === undefined ? this.#fromDb(runId, spans, part) : fromTables(tables, spans, part);
    for (const r of runRows) {
      const spanId = String(r.span_id);
      const seq = r.seq === null ? null : Number(r.seq);
      const own = run.parts.get(spanId) ?? { sent: [], received: [] };
      this.#calls.set(`${runId} ${spanId}`, {
        row: r,
        run_id: runId,
        span_id: spanId,
        seq,
        sent: own.sent,
        received: own.received,
        tools: r.tools === null ? null : JSON.parse(String(r.tools)) as Json[],
        results: run.results.get(spanId) ?? [],
        tokens: run.tokens.get(spanId) ?? null,
        assessments: run.assessments.filter((a) => a.on_run || a.span_id === spanId).map((a) => a.json),
        event: seq !== null && r.line_hash !== null ? { seq, line_hash: String(r.line_hash) } : null,
      });
    }
  }

  /** The calls made for the given rows, in the rows' order (a row of a run not read has none). */
  inOrder(rows: CallRow[]): Call[] {
    const out: Call[] = [];
    for (const r of rows) {
      const call = this.#calls.get(`${r.run_id} ${r.span_id}`);
      if (call !== undefined) out.push(call);
    }
    return out;
  }

  #fromDb(runId: string, spans: Set<string>, part: PartOf): RunParts {
    const db = this.#db;
    return {
      parts: groupParts(partRows(db, runId), { spans, part, content: (r) => r.content }),
      results: groupTools(toolRows(db, runId), (t) => t.line_hash),
      tokens: tokensOf(preparedOnce(db, TOKENS).all(runId) as Row[]),
      assessments: assessmentsOf(preparedOnce(db, ASSESSMENTS).all(runId) as Row[]),
    };
  }
}

type Row = Record<string, unknown>;
type PartOf = (hash: string, content: string) => Part;

/** What a run's calls are made of, by the span of the model call. */
interface RunParts {
  parts: Map<string, { sent: Part[][]; received: Part[] }>;
  results: Map<string, CallTool[]>;
  tokens: Map<string, CallTokens>;
  assessments: { on_run: boolean; span_id: string | null; json: Json }[];
}

/** A run's calls' parts from its rows as its digest read them (each table in its key's order). */
function fromTables(tables: TraceRunTables, spans: Set<string>, part: PartOf): RunParts {
  const contents = new Map<unknown, unknown>();
  for (const m of rowsOf(tables, "trace_messages", ["hash", "content"])) contents.set(m.hash, m.content);
  const lineHashes = new Map<unknown, unknown>();
  for (const s of rowsOf(tables, "trace_spans", ["span_id", "line_hash"])) {
    lineHashes.set(s.span_id, s.line_hash);
  }
  // The database's order: by seq, a tool call without one last; call ID (the digest's order) among equals.
  const tools = rowsOf(tables, "trace_tool_calls").map((t, i) => ({ t, i })).sort((a, b) =>
    (a.t.seq === null ? 1 : 0) - (b.t.seq === null ? 1 : 0) || Number(a.t.seq) - Number(b.t.seq) || a.i - b.i
  ).map(({ t }) => t);
  return {
    parts: groupParts(
      rowsOf(tables, "trace_call_messages", ["span_id", "direction", "message", "message_hash"]),
      {
        spans,
        part,
        content: (r) => contents.get(r.message_hash),
      },
    ),
    results: groupTools(tools, (t) => t.span_id === null ? null : lineHashes.get(t.span_id) ?? null),
    tokens: tokensOf(rowsOf(tables, "trace_tokens")),
    assessments: assessmentsOf(rowsOf(tables, "trace_assessments")),
  };
}

/**
 * A table's rows as objects by column name, with only the columns named when `only` is given: a run's spans
 * hold its largest texts, and a line needs two of their columns.
 */
function rowsOf(tables: TraceRunTables, table: string, only?: readonly string[]): Row[] {
  const found = tables.get(table);
  if (found === undefined) return [];
  const names = only ?? found.names;
  const at = names.map((n) => found.names.indexOf(n));
  return found.rows.map((values) => {
    const row: Row = {};
    for (let i = 0; i < names.length; i++) row[names[i]!] = at[i]! < 0 ? undefined : values[at[i]!];
    return row;
  });
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

/** A run's call message rows with their parts' content. */
function partRows(db: DatabaseSync, runId: string): Iterable<Row> {
  return preparedOnce(
    db,
    `
    SELECT cm.span_id, cm.direction, cm.message, cm.message_hash, m.content FROM trace_call_messages cm
      JOIN trace_messages m ON m.hash = cm.message_hash
    WHERE cm.run_id = ? ORDER BY cm.span_id, cm.direction DESC, cm.position`,
  ).iterate(runId) as Iterable<Row>;
}

/**
 * The sent and received parts of a run's chosen calls, grouped by message, from its call message rows in
 * position order within each span and direction.
 */
function groupParts(
  rows: Iterable<Row>,
  { spans, part: partOf, content }: { spans: Set<string>; part: PartOf; content: (row: Row) => unknown },
): Map<string, { sent: Part[][]; received: Part[] }> {
  const out = new Map<string, { sent: Part[][]; received: Part[] }>();
  let last: { span: string; message: number } | null = null; // the last sent part's
  for (const r of rows) {
    const span = String(r.span_id);
    const text = content(r);
    if (!spans.has(span) || text === undefined) continue; // no such message: as the join leaves it out
    let call = out.get(span);
    if (!call) out.set(span, call = { sent: [], received: [] });
    const part = partOf(String(r.message_hash), String(text));
    if (r.direction === "received") {
      call.received.push(part);
      continue;
    }
    const message = Number(r.message);
    if (last && last.span === span && last.message === message) call.sent.at(-1)!.push(part);
    else call.sent.push([part]);
    last = { span, message };
  }
  return out;
}

/** A run's tool calls with their own span's line hash, in seq order. */
function toolRows(db: DatabaseSync, runId: string): Row[] {
  return preparedOnce(
    db,
    `
    SELECT t.model_span_id, t.call_id, t.tool, t.arguments, t.result, t.error, t.executed_by, t.deferred,
      t.seq, s.line_hash
    FROM trace_tool_calls t LEFT JOIN trace_spans s ON s.run_id = t.run_id AND s.span_id = t.span_id
    WHERE t.run_id = ? ORDER BY t.seq IS NULL, t.seq, t.call_id`,
  ).all(runId) as Row[];
}

/** The tool calls of a run, by the model call that asked for them, each with its `tool_called` event. */
function groupTools(rows: Row[], lineHash: (t: Row) => unknown): Map<string, CallTool[]> {
  const out = new Map<string, CallTool[]>();
  for (const t of rows) {
    if (t.model_span_id === null) continue;
    const list = out.get(String(t.model_span_id)) ?? [];
    const hash = lineHash(t);
    list.push({
      call_id: String(t.call_id),
      tool: String(t.tool),
      arguments: t.arguments === null ? null : JSON.parse(String(t.arguments)),
      result: t.result === null ? null : JSON.parse(String(t.result)),
      error: t.error === null ? null : String(t.error),
      executed_by: t.executed_by === null ? null : String(t.executed_by),
      deferred: t.deferred === 1,
      event: t.seq !== null && hash !== null && hash !== undefined
        ? { seq: Number(t.seq), line_hash: String(hash) }
        : null,
    });
    out.set(String(t.model_span_id), list);
  }
  return out;
}

const TOKENS =
  "SELECT span_id, prompt_token_ids, completion_token_ids, logprobs FROM trace_tokens WHERE run_id = ?";

/** The exact tokens of a run's calls, by span. */
function tokensOf(rows: Row[]): Map<string, CallTokens> {
  const out = new Map<string, CallTokens>();
  const list = (v: unknown) => v === null ? null : JSON.parse(String(v)) as number[];
  for (const r of rows) {
    out.set(String(r.span_id), {
      prompt_token_ids: list(r.prompt_token_ids),
      completion_token_ids: list(r.completion_token_ids),
      logprobs: list(r.logprobs),
    });
  }
  return out;
}

const ASSESSMENTS =
  "SELECT name, value, rationale, source, seq, span_id, experiment FROM trace_assessments WHERE run_id = ? ORDER BY n";

/** The assessments of a run and its steps, as a line shows them, from its rows in `n` order. */
function assessmentsOf(rows: Row[]): { on_run: boolean; span_id: string | null; json: Json }[] {
  return (rows as {
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

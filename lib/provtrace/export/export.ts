/**
 * Exports for a training job, as JSON lines it takes as they are: `steps` (the state before each model call,
 * the action it took, and the result of the tool calls that followed) and `sft` (chat fine-tuning lines in
 * OpenAI's chat format, `messages` and `tools`). Every line carries its provenance: the run, the event's seq
 * and line hash, and the last hash of the store's run, so a trained model's data can be traced back to
 * verified evidence.
 *
 * An export writes nothing it has not checked: before it writes a run's lines, it checks the run against its
 * store as `provtrace check` does (the store still holds it, with the same last hash, it still verifies, and
 * the file's rows of the run are exactly what its evidence gives), on one snapshot of the file, and it
 * refuses a run that fails, with one line.
 * @module
 */
import type { DatabaseSync, SQLInputValue } from "node:sqlite";
import type { Catalog } from "../../provcat/mod.ts";
import { type Json, ProveviError } from "../../provevi/mod.ts";
import { openTraceDb, TRACE_SCHEMA_VERSION, traceSchemaProblems } from "../db/mod.ts";
import { checkTraceRun, type TraceSourceCheck } from "../build/mod.ts";
import { SourceStores, traceSources } from "../build/_source_stores.ts";

/** What {@linkcode exportTrace} writes, and which rows. */
export interface TraceExportOptions {
  /** `steps`: state, action and result rows; `sft`: chat fine-tuning lines. */
  kind: "steps" | "sft";
  /** For `sft`: a line per model call (default), or per run (its final conversation). */
  per?: "call" | "run";
  /** Only runs of this experiment: its URI (any version, or `?at=` one), or its last path segment. */
  experiment?: string;
  /** Only runs of this agent class: its name or `org/domain/env/name`. */
  agent?: string;
  /** Only runs of this status: completed, failed or incomplete. */
  status?: string;
  /** Only steps whose run, or the step itself, has an assessment that passes: `NAME>=VALUE` (or >, <=, <, =). */
  assessment?: string;
  /** Also runs added with `--allow-unverified` (their provenance says `verified: false`). */
  allowUnverified?: boolean;
  /** The runs root to read a `file` store from, instead of the one each run records. */
  runs?: string;
  /** The catalog that reads each run's committed bundle and experiment, to verify it again. */
  catalog?: Catalog | (() => Catalog | Promise<Catalog>);
}

/** What {@linkcode exportTrace} gives. */
export interface TraceExport {
  /** The lines, in run and seq order, of the runs that checked out. */
  lines: TraceExportLine[];
  /** The runs that the filters chose and the export refused, each with why in one line; none of their lines. */
  refused: { run_id: string; state: TraceSourceCheck["state"]; problem: string }[];
}

/** Where a line came from. */
export interface TraceProvenance {
  run_id: string;
  seq: number | null;
  span_id: string;
  /** The SHA-256 of the event's line in `events.jsonl`. */
  line_hash: string | null;
  /** The run's last hash in the store when it was built. */
  last_hash: string;
  store_uri: string;
  verified: boolean;
  build_version: string;
}

/** One exported line. */
export interface TraceExportLine {
  /** Where the line came from; an `sft` line's provenance also holds the step's and run's assessments. */
  provenance: TraceProvenance & { assessments?: unknown[] };
  [key: string]: unknown;
}

const OPS = /^([^<>=]+?)\s*(>=|<=|>|<|=)\s*(.+)$/;

/**
 * Parses `NAME>=VALUE`.
 * @throws ProveviError for another form.
 */
export function parseAssessmentFilter(text: string): { name: string; op: string; value: number } {
  const m = OPS.exec(text);
  const value = m ? Number(m[3]) : NaN;
  if (!m || !Number.isFinite(value)) {
    throw new ProveviError(
      `--assessment "${text}" is not NAME>=VALUE: give an assessment's name, one of >= > <= < =, and a number (true is 1)`,
    );
  }
  return { name: m[1]!.trim(), op: m[2]!, value };
}

/**
 * Exports a trace database's steps as lines for a training job, each run checked against its store first.
 *
 * @param db The trace database's file.
 * @param options What to export, which runs, and where their sources are.
 * @returns The lines of the runs that checked out, and the runs refused; it prints nothing.
 * @throws ProveviError for a database that cannot be opened or whose schema was changed, or a filter that
 * cannot be read.
 * @example
 * ```ts
 * import { exportTrace } from "./export.ts";
 * const { lines, refused } = await exportTrace("/tmp/trace.db", { kind: "sft", per: "run" });
 * for (const line of lines) console.log(JSON.stringify(line));
 * ```
 */
export async function exportTrace(db: string, options: TraceExportOptions): Promise<TraceExport> {
  if (options.kind !== "steps" && options.kind !== "sft") {
    throw new ProveviError(`--kind ${options.kind} is not an export: use steps or sft`);
  }
  const per = options.per ?? "call";
  if (per !== "call" && per !== "run") throw new ProveviError(`--per ${per} is not call or run`);
  using trace = openTraceDb(db);
  const changed = traceSchemaProblems(trace.db, TRACE_SCHEMA_VERSION);
  if (changed.length) {
    throw new ProveviError(
      `the trace database "${db}" cannot be exported: its schema is not a trace database's (${
        changed[0]
      }); delete it and build it again`,
    );
  }
  // One snapshot of the file for the check of each run and the lines written from it.
  trace.db.exec("BEGIN");
  try {
    const rows = chosenRows(trace.db, options, per);
    const checked = await checkRuns(trace.db, [...new Set(rows.map((r) => String(r.run_id)))], options);
    const refused = [...checked.values()].filter((c) => c.refused !== null).map((c) => c.refused!);
    const lines = rows.filter((r) => checked.get(String(r.run_id))?.refused === null).map((row) =>
      lineOf(trace.db, row, options.kind, checked.get(String(row.run_id))!.verified)
    );
    return { lines, refused };
  } finally {
    trace.db.exec("COMMIT");
  }
}

/** The model calls that the filters choose, with their run's source, in run and seq order. */
function chosenRows(
  db: DatabaseSync,
  options: TraceExportOptions,
  per: "call" | "run",
): Record<string, string | number | null>[] {
  const where: string[] = [];
  const args: SQLInputValue[] = [];
  if (!options.allowUnverified) where.push("src.verified = 1");
  if (options.status !== undefined) {
    where.push("r.status = ?");
    args.push(options.status);
  }
  if (options.agent !== undefined) {
    where.push("(r.agent = ? OR r.org || '/' || r.domain || '/' || r.env || '/' || r.agent = ?)");
    args.push(options.agent, options.agent);
  }
  if (options.experiment !== undefined) {
    const e = options.experiment;
    where.push("(r.experiment = ? OR r.experiment_pin = ? OR r.experiment LIKE ? ESCAPE '\\')");
    args.push(e, e, `%/${e.replace(/[\\%_]/g, (c) => `\\${c}`)}`);
  }
  if (options.assessment !== undefined) {
    const f = parseAssessmentFilter(options.assessment);
    where.push(`EXISTS (SELECT 1 FROM trace_assessments a WHERE a.run_id = c.run_id AND a.name = ?
      AND ((a.seq IS NULL AND a.span_id IS NULL) OR a.span_id = c.span_id)
      AND json_type(a.value) IN ('integer', 'real', 'true', 'false')
      AND CAST(json_extract(a.value, '$') AS REAL) ${f.op} ?)`);
    args.push(f.name, f.value);
  }
  if (per === "run" && options.kind === "sft") {
    where.push(
      "s.seq = (SELECT max(s2.seq) FROM trace_model_calls c2 JOIN trace_spans s2 " +
        "ON s2.run_id = c2.run_id AND s2.span_id = c2.span_id WHERE c2.run_id = c.run_id AND c2.error IS NULL)",
    );
  }
  return db.prepare(`
    SELECT c.run_id, c.span_id, s.seq, s.line_hash, c.model, c.answered_by, c.provider, c.message_format,
      c.input_tokens, c.output_tokens, c.finish_reason, c.tools, c.error,
      src.last_hash, src.store_uri, src.verified, src.build_version
    FROM trace_model_calls c
      JOIN trace_spans s ON s.run_id = c.run_id AND s.span_id = c.span_id
      JOIN trace_runs r ON r.run_id = c.run_id
      JOIN trace_sources src ON src.run_id = c.run_id
    ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
    ORDER BY r.started_at, c.run_id, s.seq`).all(...args) as Record<string, string | number | null>[];
}

/** Each run checked against its store: whether it verifies now, or why it is refused. */
async function checkRuns(
  db: DatabaseSync,
  runIds: string[],
  options: TraceExportOptions,
): Promise<Map<string, { verified: boolean; refused: TraceExport["refused"][number] | null }>> {
  const out = new Map<string, { verified: boolean; refused: TraceExport["refused"][number] | null }>();
  await using stores = new SourceStores(options.runs);
  for (const source of traceSources(db, runIds)) {
    const store = await stores.open(source);
    const check = typeof store === "string"
      ? { state: "unreadable" as const, verified: false, problem: store }
      : await checkTraceRun(db, source, store, options.catalog ? { catalog: options.catalog } : {});
    let problem = check.problem;
    if (problem === null && !check.verified && !options.allowUnverified) {
      problem = "it does not verify now; export it with --allow-unverified to mark it so";
    }
    out.set(source.run_id, {
      verified: check.verified,
      refused: problem === null ? null : { run_id: source.run_id, state: check.state, problem },
    });
  }
  return out;
}

function lineOf(
  db: DatabaseSync,
  row: Record<string, string | number | null>,
  kind: "steps" | "sft",
  verified: boolean,
): TraceExportLine {
  const runId = String(row.run_id);
  const spanId = String(row.span_id);
  const provenance: TraceProvenance = {
    run_id: runId,
    seq: row.seq === null ? null : Number(row.seq),
    span_id: spanId,
    line_hash: row.line_hash === null ? null : String(row.line_hash),
    last_hash: String(row.last_hash),
    store_uri: String(row.store_uri),
    verified,
    build_version: String(row.build_version),
  };
  const parts = db.prepare(`
    SELECT cm.direction, cm.message, m.content FROM trace_call_messages cm
      JOIN trace_messages m ON m.hash = cm.message_hash
    WHERE cm.run_id = ? AND cm.span_id = ? ORDER BY cm.direction DESC, cm.position`).all(runId, spanId) as {
    direction: string;
    message: number;
    content: string;
  }[];
  const assessments = assessmentsOf(db, runId, spanId);
  const tools = row.tools === null ? null : JSON.parse(String(row.tools)) as Json[];
  const sent = parts.filter((p) => p.direction === "sent");
  const received = parts.filter((p) => p.direction === "received");
  if (kind === "sft") {
    return {
      messages: [...openaiMessages(sent), ...openaiMessages(received)],
      ...(tools ? { tools } : {}),
      provenance: { ...provenance, assessments },
    };
  }
  const result = db.prepare(`
    SELECT call_id, tool, arguments, result, error, executed_by, deferred FROM trace_tool_calls
    WHERE run_id = ? AND model_span_id = ? ORDER BY seq IS NULL, seq, call_id`).all(runId, spanId) as Record<
    string,
    string | number | null
  >[];
  return {
    run_id: runId,
    seq: provenance.seq,
    model: row.model,
    answered_by: row.answered_by,
    provider: row.provider,
    message_format: row.message_format,
    input_tokens: row.input_tokens,
    output_tokens: row.output_tokens,
    finish_reason: row.finish_reason,
    error: row.error,
    state: sent.map((p) => JSON.parse(p.content)),
    action: received.map((p) => JSON.parse(p.content)),
    result: result.map((t) => ({
      call_id: t.call_id,
      tool: t.tool,
      arguments: t.arguments === null ? null : JSON.parse(String(t.arguments)),
      result: t.result === null ? null : JSON.parse(String(t.result)),
      error: t.error,
      executed_by: t.executed_by,
      deferred: t.deferred === 1,
    })),
    tools,
    assessments,
    provenance,
  };
}

/** The assessments of a run and of one of its steps, as a line shows them. */
function assessmentsOf(db: DatabaseSync, runId: string, spanId: string): Json[] {
  return (db.prepare(`
    SELECT name, value, rationale, source, seq, span_id, experiment FROM trace_assessments
    WHERE run_id = ? AND ((seq IS NULL AND span_id IS NULL) OR span_id = ?) ORDER BY n`).all(
    runId,
    spanId,
  ) as {
    name: string;
    value: string;
    rationale: string | null;
    source: string | null;
    seq: number | null;
    span_id: string | null;
    experiment: string | null;
  }[]).map((a) => ({
    name: a.name,
    value: JSON.parse(a.value) as Json,
    rationale: a.rationale,
    source: a.source,
    on: a.experiment !== null ? "experiment" : a.span_id === null ? "run" : "step",
    ...(a.experiment !== null ? { experiment: a.experiment } : {}),
  }));
}

type Part = { role: string; kind: string; [key: string]: Json };

/**
 * Parts grouped into messages of OpenAI's chat format. Thinking has no place in that format and is left out
 * (the `steps` export keeps it); a file is a `file` part named by its SHA-256 (the bytes stay in the store);
 * a tool's return is a `tool` message.
 */
function openaiMessages(parts: { message: number; content: string }[]): Json[] {
  const byMessage = new Map<number, Part[]>();
  for (const p of parts) {
    const list = byMessage.get(p.message) ?? [];
    list.push(JSON.parse(p.content));
    byMessage.set(p.message, list);
  }
  const out: Json[] = [];
  for (const list of byMessage.values()) {
    const role = list[0]!.role;
    const texts = list.filter((p) => p.kind === "text").map((p) => String(p.text));
    const files = list.filter((p) => p.kind === "file");
    const calls = list.filter((p) => p.kind === "tool_call");
    const returns = list.filter((p) => p.kind === "tool_return");
    if (role === "tool") {
      for (const r of returns) out.push(toolMessage(r));
      continue;
    }
    const message: { [key: string]: Json } = { role };
    if (files.length) {
      message.content = [
        ...texts.map((t) => ({ type: "text", text: t })),
        ...files.map((f) => ({
          type: "file",
          file: { filename: f.filename ?? null, sha256: f.sha256 ?? null, url: f.url ?? null },
        })),
      ];
    } else message.content = texts.length ? texts.join("") : null;
    if (calls.length) {
      message.tool_calls = calls.map((c) => ({
        id: c.tool_call_id ?? null,
        type: "function",
        function: {
          name: c.tool_name ?? null,
          arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments),
        },
      }));
    }
    if (message.content !== null || calls.length) out.push(message);
    for (const r of returns) out.push(toolMessage(r));
  }
  return out;
}

function toolMessage(r: Part): Json {
  return {
    role: "tool",
    tool_call_id: r.tool_call_id ?? null,
    content: typeof r.result === "string" ? r.result : JSON.stringify(r.result),
  };
}

/**
 * Exports for a training job, as JSON lines it takes as they are: `steps` (the state before each model call,
 * the action it took, and the result of the tool calls that followed; with `tokens`, the exact token IDs,
 * log-probabilities and loss mask of each turn), `sft` (chat lines in OpenAI's chat format), and the formats
 * trainers read (`openai`, `sharegpt`, `hf`: `formats.ts`; `atif`: `atif.ts`). Every line carries its
 * provenance: the run, the seq and line hash of each event whose content it holds, the last hash of the
 * store's run, whether it verified, and the telemetry policy's level that let it out, so a trained model's
 * data can be traced back to verified evidence (`PROVENANCE_PLACE` says where each format keeps it).
 *
 * An export writes nothing it has not checked: before it writes a run's lines, it checks the run against its
 * store as `provtrace check` does (the store still holds it, with the same last hash, it still verifies, and
 * the file's rows of the run are exactly what its evidence gives), on one snapshot of the file, and it
 * refuses a run that fails, with one line.
 * @module
 */
import type { DatabaseSync, SQLInputValue } from "node:sqlite";
import type { Catalog } from "../../provcat/mod.ts";
import type { Json, TelemetryPolicy } from "../../provevi/mod.ts";
import { ProveviError } from "../../provevi/evidence/mod.ts";
import {
  openTraceDb,
  readRowsKey,
  TRACE_SCHEMA_VERSION,
  type TraceRunTables,
  traceSchemaProblems,
} from "../db/mod.ts";
import { checkTraceRun, type TraceSourceCheck } from "../build/mod.ts";
import { readAhead } from "../build/_read_ahead.ts";
import { RowsHasher } from "../build/_rows_hasher.ts";
import { unhashedRows } from "./_hashed_rows.ts";
import { SourceStores, sourceWithEvidence, traceSources } from "../build/_source_stores.ts";
import { byRun, type Call, CallReader, type CallRow, type LineEvent, runsOf } from "./_calls.ts";
export type { LineEvent } from "./_calls.ts";
import { chatMessages, sftMessages } from "./_messages.ts";
import { hfLine, openaiLine, sharegptLine, TRACE_EXPORT_FORMATS, type TraceExportFormat } from "./formats.ts";
import { atifTrajectory } from "./atif.ts";
import { type PrefixBreak, type TokenTurn, tokenTurns } from "./tokens.ts";

/** What {@linkcode exportTrace} writes, and which rows. */
export interface TraceExportOptions {
  /** The format: `steps`, `sft`, `openai`, `sharegpt`, `hf` or `atif` (`formats.ts`, `atif.ts`). */
  kind: TraceExportFormat;
  /** For `sft`, `openai`, `sharegpt` and `hf`: a line per model call (default), or per run (its final conversation). */
  per?: "call" | "run";
  /** For `steps`: each turn's exact tokens, log-probabilities and loss mask, and the check of the prefix property. */
  tokens?: boolean;
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
  /**
   * The runs root that runs are read from (the default one when absent): a run the file says was built from
   * another is refused, since the file does not choose the evidence it is checked against.
   */
  runs?: string;
  /** The store URIs that runs may be read from, as the build was given them; `file` alone by default. */
  stores?: readonly string[];
  /** The catalog that reads each run's committed bundle and experiment, to verify it again. */
  catalog?: Catalog | (() => Catalog | Promise<Catalog>);
  /**
   * The rows key's file: a run whose rows' MAC holds under it, over their digest and the store's manifest now,
   * is not built again before its lines are written. None by default; the CLI gives its default path.
   */
  keyFile?: string;
  /**
   * The telemetry policy that lets the lines out, with `destination`: the destination must receive `bodies`
   * (a training line holds the messages), and each line's provenance names the policy, the destination and
   * its level. Without one, the provenance says no policy was named (`policy: null`).
   */
  policy?: TelemetryPolicy;
  /** The policy's destination that the export is. */
  destination?: string;
  /**
   * Whether, with the rows key, a worker reads and hashes each run's rows, in the export's snapshot of the file,
   * while the next runs' evidence is read (the same check, on two cores); by default when the file holds 64 runs
   * or more.
   */
  checkWorker?: boolean;
}

/** What {@linkcode exportTrace} gives. */
export interface TraceExport {
  /** The lines, in run and seq order, of the runs that checked out. */
  lines: TraceExportLine[];
  /** The runs that the filters chose and the export refused, each with why in one line; none of their lines. */
  refused: { run_id: string; state: TraceSourceCheck["state"]; problem: string }[];
  /** With `tokens`: every turn whose prompt IDs do not start with the previous turn's prompt and completion. */
  breaks: PrefixBreak[];
}

/** The policy that let a line out. */
export interface TraceExportPolicy {
  /** The SHA-256 of the policy's canonical JSON. */
  digest: string;
  destination: string;
  /** The level the destination receives: `bodies`, as a training line needs. */
  level: string;
}

/** Where a line came from. */
export interface TraceProvenance {
  run_id: string;
  /** The line's model call (for a trajectory, its run's last). */
  seq: number | null;
  span_id: string;
  /** The SHA-256 of the event's line in `events.jsonl`. */
  line_hash: string | null;
  /** Every event whose content the line holds, in seq order: its seq and the SHA-256 of its line. */
  events: LineEvent[];
  /** The run's last hash in the store when it was built. */
  last_hash: string;
  store_uri: string;
  verified: boolean;
  build_version: string;
  /** The policy and level that let the line out, or null when the export named none. */
  policy: TraceExportPolicy | null;
}

/** Where an embedded sub-agent's steps came from (`atif`): its run, and the events the trajectory holds. */
export interface TraceSubagentProvenance {
  run_id: string;
  last_hash: string;
  store_uri: string;
  verified: boolean;
  events: LineEvent[];
}

/** One exported line. */
export interface TraceExportLine {
  /** Where the line came from; an `sft` line's provenance also holds the step's and run's assessments. */
  provenance: TraceProvenance & { assessments?: unknown[]; subagents?: TraceSubagentProvenance[] };
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
 * @returns The lines of the runs that checked out, the runs refused, and (with `tokens`) the prefix
 * property's breaks; it prints nothing.
 * @throws ProveviError for a database that cannot be opened or whose schema was changed, a filter that
 * cannot be read, or a policy whose destination may not receive the lines.
 * @example
 * ```ts
 * import { buildTrace, exportTrace } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const db = `${await Deno.makeTempDir()}/trace.db`;
 * await buildTrace({ store: "file", runs: "fixtures/runs", db });
 * const { lines, refused } = await exportTrace(db, { kind: "steps", runs: "fixtures/runs" });
 * assert.ok(lines.length > 0);
 * assert.deepEqual(refused, []);
 * ```
 */
export async function exportTrace(db: string, options: TraceExportOptions): Promise<TraceExport> {
  if (!(TRACE_EXPORT_FORMATS as readonly string[]).includes(options.kind)) {
    throw new ProveviError(
      `--format ${options.kind} is not an export: use ${TRACE_EXPORT_FORMATS.join(", ")}`,
    );
  }
  const per = options.per ?? "call";
  if (per !== "call" && per !== "run") throw new ProveviError(`--per ${per} is not call or run`);
  if (options.tokens && options.kind !== "steps") {
    throw new ProveviError(
      `--tokens goes with --format steps (the exact tokens of each turn), not ${options.kind}`,
    );
  }
  const policy = policyOf(options);
  using trace = openTraceDb(db);
  const changed = traceSchemaProblems(trace.db, TRACE_SCHEMA_VERSION);
  if (changed.length) {
    throw new ProveviError(
      `the trace database "${db}" cannot be exported: its schema is not a trace database's (${
        changed[0]
      }); delete it and build it again`,
    );
  }
  const key = options.keyFile === undefined ? null : await readRowsKey(options.keyFile);
  // One snapshot of the file for the check of each run and the lines written from it (and for the worker that
  // hashes the runs' rows, when there is one).
  const worker = key !== null && (options.checkWorker ?? runsCount(trace.db) >= WORKER_RUNS);
  trace.db.exec("BEGIN");
  try {
    const firstRead = () => trace.db.prepare("SELECT count(*) AS n FROM trace_sources").get();
    using hasher = worker ? await RowsHasher.open(trace.path, trace.db, firstRead) : (firstRead(), null);
    const rows = chosenRows(trace.db, options, per);
    const reader = new CallReader(trace.db);
    const checked = await checkRuns(trace.db, byRun(rows), { ...options, reader, key, hasher });
    const refused = [...checked.values()].filter((c) => c.refused !== null).map((c) => c.refused!);
    const calls = reader.inOrder(rows);
    const verified = (runId: string) => checked.get(runId)!.verified;
    if (options.kind === "atif") {
      return { lines: atifLines(trace.db, calls, { verified, policy }), refused, breaks: [] };
    }
    const { turns, breaks } = options.tokens ? tokenTurns(calls) : { turns: [], breaks: [] };
    const lines = calls.map((call, i) =>
      lineOf(call, {
        kind: options.kind,
        per,
        verified: verified(call.run_id),
        policy,
        turn: turns[i] ?? null,
      })
    );
    return { lines, refused, breaks };
  } finally {
    trace.db.exec("COMMIT");
  }
}

/** The policy that lets the lines out, checked: its destination must receive bodies. */
function policyOf(options: TraceExportOptions): TraceExportPolicy | null {
  if (options.policy === undefined && options.destination === undefined) return null;
  if (options.policy === undefined || options.destination === undefined) {
    throw new ProveviError(
      "--policy and --destination go together: the policy, and its destination that the export is",
    );
  }
  const destination = options.policy.destination(options.destination);
  if (destination === null) {
    throw new ProveviError(
      `the telemetry policy names no destination "${options.destination}": add it, with receives: bodies`,
    );
  }
  if (destination.receives !== "bodies") {
    throw new ProveviError(
      `the telemetry policy lets destination "${destination.name}" receive ${destination.receives} only, and a training export holds message bodies: give it receives: bodies, or export to another destination`,
    );
  }
  return { digest: options.policy.digest(), destination: destination.name, level: destination.receives };
}

/** The model calls that the filters choose, with their run's source, in run and seq order. */
function chosenRows(
  db: DatabaseSync,
  options: TraceExportOptions,
  per: "call" | "run",
): CallRow[] {
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
  // A conversation format trains on replies: a call that failed has none.
  if (options.kind !== "steps" && options.kind !== "sft") where.push("c.error IS NULL");
  if (per === "run" && options.kind !== "steps" && options.kind !== "atif") {
    where.push(
      "s.seq = (SELECT max(s2.seq) FROM trace_model_calls c2 JOIN trace_spans s2 " +
        "ON s2.run_id = c2.run_id AND s2.span_id = c2.span_id WHERE c2.run_id = c.run_id AND c2.error IS NULL)",
    );
  }
  return db.prepare(`
    SELECT c.run_id, c.span_id, s.seq, s.line_hash, s.end_time, c.model, c.answered_by, c.provider,
      c.message_format, c.input_tokens, c.output_tokens, c.cache_read_input_tokens, c.finish_reason, c.tools,
      c.error, src.last_hash, src.store_uri, src.verified, src.build_version
    FROM trace_model_calls c
      JOIN trace_spans s ON s.run_id = c.run_id AND s.span_id = c.span_id
      JOIN trace_runs r ON r.run_id = c.run_id
      JOIN trace_sources src ON src.run_id = c.run_id
    ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
    ORDER BY r.started_at, c.run_id, s.seq`).all(...args) as CallRow[];
}

/** From how many runs an export hashes them on a worker by default (below it, the worker's start costs more). */
const WORKER_RUNS = 64;
/** How many runs' checks are under way at once when a worker hashes them. */
const CHECKS_AT_ONCE = 16;

/** How many runs the file holds, read before the export's snapshot: whether a worker is worth its start. */
function runsCount(db: DatabaseSync): number {
  return Number((db.prepare("SELECT count(*) AS n FROM trace_sources").get() as { n: number }).n);
}

/**
 * Each run checked against its store: whether it verifies now, or why it is refused. The calls of a run that
 * checks out are made at once, from its rows as the check read them for their digest: one read of each row.
 * With the rows key and many runs, a worker walks each run's lines and hashes its rows while the next runs are
 * read here: a few checks are under way at once, and each run's calls are made when its own check is done.
 */
async function checkRuns(
  db: DatabaseSync,
  rows: Map<string, CallRow[]>,
  options: TraceExportOptions & { reader: CallReader; key: Uint8Array | null; hasher: RowsHasher | null },
): Promise<Map<string, { verified: boolean; refused: TraceExport["refused"][number] | null }>> {
  const out = new Map<string, { verified: boolean; refused: TraceExport["refused"][number] | null }>();
  const { key, hasher } = options;
  await using stores = new SourceStores(options);
  const sources = traceSources(db, [...rows.keys()]);
  hasher?.queue(sources.map((s) => s.run_id));
  const take = readAhead(sources.length, (i) => sourceWithEvidence(stores, sources[i]!));
  const checkOne = async (i: number) => {
    const source = sources[i]!;
    const { store, evidence } = await take(i);
    let tables: TraceRunTables | undefined;
    const check = typeof store === "string"
      ? { state: "unreadable" as const, verified: false, problem: store }
      : await checkTraceRun(db, source, store, {
        key,
        ...(options.catalog ? { catalog: options.catalog } : {}),
        ...(hasher ? { hasher } : {}),
        tables: (read: TraceRunTables) => tables = read,
        evidence: evidence!,
      });
    return { source, check, tables };
  };
  const done = ({ source, check, tables }: Awaited<ReturnType<typeof checkOne>>) => {
    let problem = check.problem;
    let state = check.state;
    if (problem === null && !check.verified && !options.allowUnverified) {
      problem = "it does not verify now; export it with --allow-unverified to mark it so";
    }
    // The calls this export read are the calls the check hashed, column by column, or the run is refused.
    const unhashed = problem === null && tables !== undefined
      ? unhashedRows(db, source.run_id, rows.get(source.run_id)!, tables)
      : null;
    if (unhashed !== null) {
      state = "rows";
      problem =
        `the file's rows changed while it was exported (${unhashed} is not what its check hashed); export it again`;
    }
    out.set(source.run_id, {
      verified: unhashed === null && check.verified,
      refused: problem === null ? null : { run_id: source.run_id, state, problem },
    });
    // The lines are made of the rows the check hashed (on the worker, its read of them, without the spans'
    // attributes), never of another read of the file, which could have changed under the export since.
    if (problem === null) {
      if (tables === undefined) throw new Error(`the check of run ${source.run_id} passed without its rows`);
      options.reader.read(source.run_id, rows.get(source.run_id)!, tables);
    }
  };
  // In order: each check is started in turn (its reads in this snapshot), and its result taken in turn.
  const underWay: Promise<Awaited<ReturnType<typeof checkOne>>>[] = [];
  const atOnce = hasher ? CHECKS_AT_ONCE : 1;
  for (let i = 0; i < sources.length; i++) {
    const check = checkOne(i);
    check.catch(() => {}); // its error is thrown when it is taken
    underWay.push(check);
    if (underWay.length >= atOnce) done(await underWay.shift()!);
  }
  while (underWay.length) done(await underWay.shift()!);
  return out;
}

/** A call's provenance: its run's source, and the events the line holds. */
function provenanceOf(
  call: Call,
  events: LineEvent[],
  context: { verified: boolean; policy: TraceExportPolicy | null },
): TraceProvenance {
  const row = call.row;
  return {
    run_id: call.run_id,
    seq: call.seq,
    span_id: call.span_id,
    line_hash: row.line_hash === null ? null : String(row.line_hash),
    events: [...new Map(events.map((e) => [e.seq, e])).values()].sort((a, b) => a.seq - b.seq),
    last_hash: String(row.last_hash),
    store_uri: String(row.store_uri),
    verified: context.verified,
    build_version: String(row.build_version),
    policy: context.policy,
  };
}

/** One call's line in a per-call (or, with `per: run`, the run's last call's) format. */
function lineOf(
  call: Call,
  context: {
    kind: TraceExportFormat;
    per: "call" | "run";
    verified: boolean;
    policy: TraceExportPolicy | null;
    turn: TokenTurn | null;
  },
): TraceExportLine {
  const own = call.event ? [call.event] : [];
  switch (context.kind) {
    case "sft":
      return {
        messages: sftMessages(chatMessages(call.sent, call.received)),
        ...(call.tools ? { tools: call.tools } : {}),
        provenance: { ...provenanceOf(call, own, context), assessments: call.assessments },
      };
    case "openai":
      return { ...openaiLine(call, context.per === "run"), provenance: provenanceOf(call, own, context) };
    case "sharegpt":
      return { ...sharegptLine(call), provenance: provenanceOf(call, own, context) };
    case "hf":
      return { ...hfLine(call), provenance: provenanceOf(call, own, context) };
    default:
      return stepsLine(call, context);
  }
}

/** A `steps` line: state, action and result, with the tool calls' events in its provenance. */
function stepsLine(
  call: Call,
  context: { verified: boolean; policy: TraceExportPolicy | null; turn: TokenTurn | null },
): TraceExportLine {
  const row = call.row;
  const events = [
    ...(call.event ? [call.event] : []),
    ...call.results.flatMap((t) => t.event ? [t.event] : []),
  ];
  const provenance = provenanceOf(call, events, context);
  return {
    run_id: call.run_id,
    seq: call.seq,
    model: row.model,
    answered_by: row.answered_by,
    provider: row.provider,
    message_format: row.message_format,
    input_tokens: row.input_tokens,
    output_tokens: row.output_tokens,
    finish_reason: row.finish_reason,
    error: row.error,
    state: call.sent.flat(),
    action: call.received,
    result: call.results.map((t) => ({
      call_id: t.call_id,
      tool: t.tool,
      arguments: t.arguments,
      result: t.result,
      error: t.error,
      executed_by: t.executed_by,
      deferred: t.deferred,
    })),
    tools: call.tools,
    ...(context.turn ? { tokens: context.turn } : {}),
    assessments: call.assessments,
    provenance,
  };
}

/** One line per run: its trajectory, with the run's children that the export holds embedded in it. */
function atifLines(
  db: DatabaseSync,
  calls: Call[],
  context: { verified: (runId: string) => boolean; policy: TraceExportPolicy | null },
): TraceExportLine[] {
  const byRun = new Map<string, Call[]>();
  for (const c of calls) {
    const list = byRun.get(c.run_id);
    if (list) list.push(c);
    else byRun.set(c.run_id, [c]);
  }
  const runs = runsOf(db, [...byRun.keys()]);
  const { turns } = tokenTurns(calls);
  const turnOf = new Map(calls.map((c, i) => [c, turns[i] ?? null]));
  const trajectories = new Map<string, { [key: string]: Json }>();
  for (const [runId, list] of byRun) {
    const t = atifTrajectory(runs.get(runId)!, list.map((call) => ({ call, turn: turnOf.get(call)! })));
    if (t) trajectories.set(runId, t);
  }
  // A run whose parent is in the export is its parent's sub-agent, embedded, not a line of its own.
  const childOf = (runId: string) => {
    const parent = runs.get(runId)?.parent_run ?? null;
    return parent !== null && parent !== runId && trajectories.has(parent) ? parent : null;
  };
  const children = new Map<string, string[]>(); // each run's sub-agents in the export, in the export's order
  for (const runId of trajectories.keys()) {
    const parent = childOf(runId);
    if (parent === null) continue;
    const into = trajectories.get(parent)!;
    const embedded = trajectories.get(runId)!;
    into.subagent_trajectories = [...((into.subagent_trajectories ?? []) as Json[]), embedded];
    const list = children.get(parent);
    if (list) list.push(runId);
    else children.set(parent, [runId]);
  }
  const eventsOf = (runId: string) =>
    byRun.get(runId)!.flatMap((c) => [
      ...(c.event ? [c.event] : []),
      ...c.results.flatMap((t) => t.event ? [t.event] : []),
    ]);
  const lines: TraceExportLine[] = [];
  for (const [runId, trajectory] of trajectories) {
    if (childOf(runId) !== null) continue;
    const provenance: TraceProvenance & { subagents?: TraceSubagentProvenance[] } = provenanceOf(
      byRun.get(runId)!.at(-1)!,
      eventsOf(runId),
      { verified: context.verified(runId), policy: context.policy },
    );
    const subagents = descendants(runId, children).map((id) => {
      const p = provenanceOf(byRun.get(id)!.at(-1)!, eventsOf(id), {
        verified: context.verified(id),
        policy: context.policy,
      });
      return {
        run_id: id,
        last_hash: p.last_hash,
        store_uri: p.store_uri,
        verified: p.verified,
        events: p.events,
      };
    });
    if (subagents.length) provenance.subagents = subagents;
    lines.push({ ...trajectory, provenance });
  }
  return lines;
}

/**
 * The runs embedded in a run's trajectory, at any depth, each followed by its own: from the map of children made
 * once, so that an export of many runs does not look through every run for each run's children.
 */
function descendants(runId: string, children: Map<string, string[]>): string[] {
  const out: string[] = [];
  for (const id of children.get(runId) ?? []) out.push(id, ...descendants(id, children));
  return out;
}

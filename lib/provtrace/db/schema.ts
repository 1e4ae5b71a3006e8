/**
 * The trace database's schema as numbered upgrade steps, as provevi's sqlite store keeps its own: a file
 * records its version in `trace_meta`, and a newer version is a new step at the end, never a changed one.
 *
 * Version 1 is made to take spans that did not come from provrun's own events too (the spec's open question on
 * traces from outside): a span's `origin` says where it came from, its `seq` may be empty, its `span_id` is
 * any text, and its `attributes` keep whatever the sender gave. So the spans that the span receiver takes from
 * Claude Code or Codex fit these tables without a new version.
 *
 * `trace_tool_calls` is a rowid table whose index holds each call's tool and arguments: a question on a tool's
 * arguments ("every call to tool X whose arguments held Y") reads that tool's index entries only, and SQLite
 * seeks the table row of a match alone, which it does for a rowid table and not for a WITHOUT ROWID one.
 *
 * Version 2 keeps, beside each run's source, the digest of the run's rows as the build wrote them
 * (`trace_sources.rows_digest`, see `run_digest.ts`), so `provtrace check` can tell rows changed in the file
 * after the build from a source that changed under them.
 *
 * Version 3 adds the exact tokens of a model call where its provider returned them (`trace_tokens`: prompt
 * and completion token IDs and log-probabilities, a run's rows like the others), and the record of each
 * export (`trace_exports`, one row per export, keyed by the SHA-256 of its file, and `trace_export_lines`, the
 * events each line of it holds), so `provtrace lineage` can name the exports a run fed. The exports' rows are
 * not a run's rows: building a run again keeps them, and `provtrace lineage --check` compares them with the
 * runs.
 *
 * Version 5 adds `trace_sources.rows_mac`, the MAC of a run's rows under a key kept outside the file
 * (`rows_key.ts`), so `check` and the exports can trust rows the file cannot have forged without building the
 * run again.
 * @module
 */
import type { DatabaseSync } from "node:sqlite";

/** One upgrade step: it brings a file from `version - 1` to `version`. */
export interface TraceSchemaStep {
  /** The version the step makes. */
  version: number;
  /** What the step does, in one line. */
  description: string;
  /** Runs the step inside the caller's transaction. */
  up(db: DatabaseSync): void;
}

const V1 = `
CREATE TABLE trace_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE trace_sources (
  run_id TEXT PRIMARY KEY,
  store_uri TEXT NOT NULL,
  runs_root TEXT NOT NULL,
  last_hash TEXT NOT NULL,
  build_version TEXT NOT NULL,
  built_at TEXT NOT NULL,
  verified INTEGER NOT NULL,
  problems TEXT NOT NULL
);
CREATE TABLE trace_runs (
  run_id TEXT PRIMARY KEY,
  org TEXT, domain TEXT, env TEXT, actor TEXT, mode TEXT,
  experiment TEXT, experiment_pin TEXT,
  agent TEXT, agent_version TEXT, backend TEXT, model TEXT,
  session_id TEXT, parent_run TEXT,
  status TEXT NOT NULL,
  started_at TEXT, ended_at TEXT,
  trace_id TEXT, span_id TEXT
);
CREATE INDEX trace_runs_experiment ON trace_runs (experiment);
CREATE INDEX trace_runs_agent ON trace_runs (agent);
CREATE TABLE trace_spans (
  run_id TEXT NOT NULL,
  span_id TEXT NOT NULL,
  trace_id TEXT,
  parent_span_id TEXT,
  seq INTEGER,
  line_hash TEXT,
  event_type TEXT,
  kind TEXT NOT NULL,
  name TEXT NOT NULL,
  start_time TEXT,
  end_time TEXT,
  duration_ms REAL,
  timed INTEGER NOT NULL,
  status TEXT NOT NULL,
  error TEXT,
  origin TEXT NOT NULL,
  scope TEXT,
  attributes TEXT NOT NULL,
  PRIMARY KEY (run_id, span_id)
) WITHOUT ROWID;
CREATE INDEX trace_spans_seq ON trace_spans (run_id, seq);
CREATE INDEX trace_spans_parent ON trace_spans (run_id, parent_span_id);
CREATE TABLE trace_model_calls (
  run_id TEXT NOT NULL,
  span_id TEXT NOT NULL,
  seq INTEGER,
  provider TEXT,
  model TEXT,
  answered_by TEXT,
  message_format TEXT NOT NULL,
  input_tokens INTEGER,
  output_tokens INTEGER,
  total_tokens INTEGER,
  cache_read_input_tokens INTEGER,
  cache_creation_input_tokens INTEGER,
  reasoning_tokens INTEGER,
  finish_reason TEXT,
  streamed INTEGER,
  tools TEXT,
  session_id TEXT,
  request_sha256 TEXT,
  response_sha256 TEXT,
  error TEXT,
  PRIMARY KEY (run_id, span_id)
) WITHOUT ROWID;
CREATE INDEX trace_model_calls_model ON trace_model_calls (model);
CREATE TABLE trace_messages (
  hash TEXT PRIMARY KEY,
  role TEXT NOT NULL,
  part_kind TEXT NOT NULL,
  text TEXT,
  tool_call_id TEXT,
  tool_name TEXT,
  content TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE trace_call_messages (
  run_id TEXT NOT NULL,
  span_id TEXT NOT NULL,
  direction TEXT NOT NULL,
  position INTEGER NOT NULL,
  message INTEGER NOT NULL,
  message_hash TEXT NOT NULL,
  PRIMARY KEY (run_id, span_id, direction, position)
) WITHOUT ROWID;
CREATE INDEX trace_call_messages_hash ON trace_call_messages (message_hash);
CREATE TABLE trace_tool_calls (
  run_id TEXT NOT NULL,
  call_id TEXT NOT NULL,
  span_id TEXT,
  seq INTEGER,
  model_span_id TEXT,
  tool TEXT NOT NULL,
  arguments TEXT,
  result TEXT,
  error TEXT,
  error_message TEXT,
  executed_by TEXT,
  deferred INTEGER NOT NULL,
  provider_run INTEGER NOT NULL,
  output_tool INTEGER NOT NULL,
  PRIMARY KEY (run_id, call_id)
);
CREATE INDEX trace_tool_calls_tool ON trace_tool_calls (tool, arguments);
CREATE TABLE trace_access (
  run_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  uri TEXT NOT NULL,
  decision TEXT NOT NULL,
  mode TEXT,
  reason TEXT,
  PRIMARY KEY (run_id, seq, uri)
) WITHOUT ROWID;
CREATE TABLE trace_assessments (
  run_id TEXT NOT NULL,
  n INTEGER NOT NULL,
  seq INTEGER,
  span_id TEXT,
  name TEXT NOT NULL,
  value TEXT NOT NULL,
  rationale TEXT,
  source TEXT,
  created_at TEXT,
  PRIMARY KEY (run_id, n)
) WITHOUT ROWID;
CREATE INDEX trace_assessments_name ON trace_assessments (name);
CREATE VIEW trace_steps AS
  SELECT c.run_id, s.seq, c.span_id, s.line_hash, c.model, c.answered_by, c.provider, c.message_format,
    c.input_tokens, c.output_tokens, c.finish_reason,
    (SELECT json_group_array(json(m)) FROM (
      SELECT m.content AS m FROM trace_call_messages cm JOIN trace_messages m ON m.hash = cm.message_hash
      WHERE cm.run_id = c.run_id AND cm.span_id = c.span_id AND cm.direction = 'sent' ORDER BY cm.position
    )) AS state,
    (SELECT json_group_array(json(m)) FROM (
      SELECT m.content AS m FROM trace_call_messages cm JOIN trace_messages m ON m.hash = cm.message_hash
      WHERE cm.run_id = c.run_id AND cm.span_id = c.span_id AND cm.direction = 'received' ORDER BY cm.position
    )) AS action,
    (SELECT json_group_array(json(t)) FROM (
      SELECT json_object('call_id', t.call_id, 'tool', t.tool, 'arguments', json(t.arguments),
        'result', json(t.result), 'error', t.error, 'executed_by', t.executed_by, 'deferred', t.deferred) AS t
      FROM trace_tool_calls t WHERE t.run_id = c.run_id AND t.model_span_id = c.span_id
      ORDER BY t.seq IS NULL, t.seq, t.call_id
    )) AS result
  FROM trace_model_calls c JOIN trace_spans s ON s.run_id = c.run_id AND s.span_id = c.span_id;
`;

const V3 = `
CREATE TABLE trace_tokens (
  run_id TEXT NOT NULL,
  span_id TEXT NOT NULL,
  prompt_token_ids TEXT,
  completion_token_ids TEXT,
  logprobs TEXT,
  tokens_sha256 TEXT NOT NULL,
  PRIMARY KEY (run_id, span_id)
) WITHOUT ROWID;
CREATE TABLE trace_exports (
  export_id TEXT PRIMARY KEY,
  format TEXT NOT NULL,
  path TEXT,
  lines INTEGER NOT NULL,
  filters TEXT NOT NULL,
  toolkit_version TEXT NOT NULL,
  created_at TEXT NOT NULL,
  manifest TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE trace_export_lines (
  export_id TEXT NOT NULL,
  line INTEGER NOT NULL,
  run_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  line_hash TEXT NOT NULL,
  PRIMARY KEY (export_id, line, run_id, seq)
) WITHOUT ROWID;
CREATE INDEX trace_export_lines_run ON trace_export_lines (run_id, seq);
`;

/**
 * Costs: the cost a model call recorded (`model_called`'s `cost`) and the run's total with its currency (its last
 * event's `cost`), as exact decimal texts; `CAST(cost AS REAL)` sums them.
 */
const V6 = `
ALTER TABLE trace_model_calls ADD COLUMN cost TEXT;
ALTER TABLE trace_runs ADD COLUMN cost TEXT;
ALTER TABLE trace_runs ADD COLUMN currency TEXT;
`;

/**
 * The upgrade steps, in order. A new version is a new step at the end; a step never changes once released.
 *
 * @example
 * ```ts
 * import { TRACE_SCHEMA_STEPS } from "./schema.ts";
 * TRACE_SCHEMA_STEPS.map((s) => s.version); // [1, 2, 3, 4, 5, 6]
 * ```
 */
export const TRACE_SCHEMA_STEPS: readonly TraceSchemaStep[] = [
  {
    version: 1,
    description: "sources, runs, spans, model calls, messages, tool calls, access, assessments; trace_steps",
    up: (db) => db.exec(V1),
  },
  {
    version: 2,
    description: "trace_sources.rows_digest: the digest of each run's rows as the build wrote them",
    // A run built before this step has no digest: check and export compare its rows with its source all the
    // same, and say that the build kept no digest of them.
    up: (db) => db.exec("ALTER TABLE trace_sources ADD COLUMN rows_digest TEXT"),
  },
  {
    version: 3,
    description:
      "trace_tokens: a model call's token IDs and log-probabilities; trace_exports and their lines",
    up: (db) => db.exec(V3),
  },
  {
    version: 4,
    description: "trace_assessments.experiment: a run's rows hold its experiment's assessments too",
    // The experiment an assessment judges, pinned when it judges one version; null for one of the run, its
    // step or span. A run built before this step has none of its experiment's: check names the difference.
    up: (db) => db.exec("ALTER TABLE trace_assessments ADD COLUMN experiment TEXT"),
  },
  {
    version: 5,
    description:
      "trace_sources.rows_mac: each run's rows_digest and manifest sealed with the user's rows key",
    // A run built before this step, or without the key, has no MAC: check and export build it again from its
    // evidence, as `check --deep` does every run.
    up: (db) => db.exec("ALTER TABLE trace_sources ADD COLUMN rows_mac TEXT"),
  },
  {
    version: 6,
    description: "cost: each model call's and each run's, as the run recorded them (exact decimal texts)",
    up: (db) => db.exec(V6),
  },
];

/** The version the steps make: what this provtrace writes and reads. */
export const TRACE_SCHEMA_VERSION: number = TRACE_SCHEMA_STEPS[TRACE_SCHEMA_STEPS.length - 1]!.version;

/** The tables that hold one run's rows, in the order they are emptied when a run is built again. */
export const TRACE_RUN_TABLES: readonly string[] = [
  "trace_tokens",
  "trace_assessments",
  "trace_access",
  "trace_tool_calls",
  "trace_call_messages",
  "trace_model_calls",
  "trace_spans",
  "trace_runs",
  "trace_sources",
];

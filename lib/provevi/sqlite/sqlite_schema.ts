/**
 * The sqlite store's schema as numbered upgrade steps, applied one at a time, as sqlite-utils' migrations
 * are. A file records its version in `provevi_meta`. The schema check compares a file's `sqlite_master` with
 * what the steps make.
 * @module
 */
import { preparedOnce } from "./_prepared.ts";
import { DatabaseSync } from "node:sqlite";
import type { EvidenceEvent } from "../evidence/event.ts";
import { type SqlDb, writeCreatedRows } from "./sqlite_rows.ts";

/** One upgrade step: it brings a file from `version - 1` to `version`. */
export interface SchemaStep {
  /** The version the step makes. */
  version: number;
  /** What the step does, in one line. */
  description: string;
  /** Runs the step inside the caller's transaction. */
  up(db: SqlDb): void;
}

const VIEWS = `
CREATE VIEW provevi_grants AS
  SELECT e.run_id, e.seq, e.time, e.actor, r.uri,
         json_extract(e.line, '$.data.mode') AS mode,
         json_extract(e.line, '$.data.expires_at') AS expires_at
  FROM provevi_events e JOIN provevi_event_refs r ON r.run_id = e.run_id AND r.seq = e.seq
  WHERE e.type = 'access_granted';
CREATE VIEW provevi_refusals AS
  SELECT e.run_id, e.seq, e.time, e.actor, r.uri,
         json_extract(e.line, '$.data.mode') AS mode,
         json_extract(e.line, '$.data.reason') AS reason
  FROM provevi_events e JOIN provevi_event_refs r ON r.run_id = e.run_id AND r.seq = e.seq
  WHERE e.type = 'access_denied';
CREATE VIEW provevi_inputs AS
  SELECT e.run_id, e.seq, e.time, r.uri,
         json_extract(e.line, '$.data.name') AS name,
         json_extract(e.line, '$.data.sha256') AS sha256
  FROM provevi_events e JOIN provevi_event_refs r ON r.run_id = e.run_id AND r.seq = e.seq
  WHERE e.type = 'input_staged';
CREATE VIEW provevi_outputs AS
  SELECT e.run_id, e.seq, e.time,
         json_extract(e.line, '$.data.path') AS path,
         json_extract(e.line, '$.data.sha256') AS sha256,
         json_extract(e.line, '$.data.size') AS size
  FROM provevi_events e
  WHERE e.type = 'output_artifact_created';
`;

/** Version 1: the first tables, which called each agent class an experiment. */
const V1 = `
CREATE TABLE provevi_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE provevi_runs (
  run_id TEXT PRIMARY KEY,
  folder TEXT NOT NULL,
  org TEXT, domain TEXT, env TEXT, actor TEXT, mode TEXT,
  experiment TEXT,
  parent_run TEXT,
  status TEXT NOT NULL,
  started_at TEXT, ended_at TEXT,
  last_hash TEXT, manifest_sha256 TEXT, sealed_at TEXT,
  bundle_uri TEXT, bundle_pinned TEXT
);
CREATE INDEX provevi_runs_experiment ON provevi_runs (experiment);
CREATE TABLE provevi_run_params (
  run_id TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
  PRIMARY KEY (run_id, key)
) WITHOUT ROWID;
CREATE TABLE provevi_experiments (
  experiment TEXT PRIMARY KEY,
  org TEXT NOT NULL, domain TEXT NOT NULL, env TEXT NOT NULL, name TEXT NOT NULL,
  first_run TEXT NOT NULL
);
CREATE TABLE provevi_events (
  run_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  time TEXT NOT NULL,
  type TEXT NOT NULL,
  component TEXT NOT NULL,
  actor TEXT NOT NULL,
  payload TEXT,
  confidence TEXT NOT NULL,
  prev TEXT,
  trace_id TEXT, span_id TEXT, parent_span_id TEXT, started_at TEXT,
  line TEXT NOT NULL,
  PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
CREATE TABLE provevi_event_refs (
  run_id TEXT NOT NULL, seq INTEGER NOT NULL, n INTEGER NOT NULL, uri TEXT NOT NULL,
  PRIMARY KEY (run_id, seq, n)
) WITHOUT ROWID;
CREATE INDEX provevi_event_refs_uri ON provevi_event_refs (uri, run_id);
CREATE TABLE provevi_payloads (
  run_id TEXT NOT NULL, sha256 TEXT NOT NULL, size INTEGER NOT NULL, place TEXT NOT NULL,
  PRIMARY KEY (run_id, sha256)
) WITHOUT ROWID;
CREATE TABLE provevi_assessments (
  id INTEGER PRIMARY KEY,
  run_id TEXT NOT NULL, seq INTEGER, span_id TEXT,
  name TEXT NOT NULL, value TEXT NOT NULL, rationale TEXT, source TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX provevi_assessments_run ON provevi_assessments (run_id);
${VIEWS}`;

/** Version 2: agent classes get their own tables; experiments become the catalog's experiments. */
const V2 = `
CREATE TABLE provevi_agents (
  agent TEXT PRIMARY KEY,
  org TEXT NOT NULL, domain TEXT NOT NULL, env TEXT NOT NULL, name TEXT NOT NULL,
  first_run TEXT NOT NULL
);
CREATE INDEX provevi_agents_name ON provevi_agents (name);
CREATE TABLE provevi_agent_versions (
  agent TEXT NOT NULL, version TEXT NOT NULL,
  backend TEXT, model TEXT, tools TEXT, limits TEXT,
  first_run TEXT NOT NULL,
  PRIMARY KEY (agent, version)
) WITHOUT ROWID;
INSERT INTO provevi_agents (agent, org, domain, env, name, first_run)
  SELECT experiment, org, domain, env, name, first_run FROM provevi_experiments;
CREATE TABLE provevi_runs_v2 (
  run_id TEXT PRIMARY KEY,
  folder TEXT NOT NULL,
  org TEXT, domain TEXT, env TEXT, actor TEXT, mode TEXT,
  agent TEXT, agent_version TEXT,
  experiment TEXT, experiment_pin TEXT, experiment_sha256 TEXT,
  parent_run TEXT,
  status TEXT NOT NULL,
  started_at TEXT, ended_at TEXT,
  last_hash TEXT, manifest_sha256 TEXT, sealed_at TEXT,
  bundle_uri TEXT, bundle_pinned TEXT
);
INSERT INTO provevi_runs_v2 (run_id, folder, org, domain, env, actor, mode, agent, parent_run, status,
    started_at, ended_at, last_hash, manifest_sha256, sealed_at, bundle_uri, bundle_pinned)
  SELECT run_id, folder, org, domain, env, actor, mode, experiment, parent_run, status,
    started_at, ended_at, last_hash, manifest_sha256, sealed_at, bundle_uri, bundle_pinned
  FROM provevi_runs;
DROP TABLE provevi_runs;
ALTER TABLE provevi_runs_v2 RENAME TO provevi_runs;
CREATE INDEX provevi_runs_agent ON provevi_runs (agent, agent_version);
CREATE INDEX provevi_runs_experiment ON provevi_runs (experiment);
CREATE INDEX provevi_runs_experiment_pin ON provevi_runs (experiment_pin);
CREATE INDEX provevi_runs_parent ON provevi_runs (parent_run);
DROP TABLE provevi_experiments;
CREATE TABLE provevi_experiments (experiment TEXT PRIMARY KEY, first_run TEXT NOT NULL);
CREATE TABLE provevi_experiment_versions (
  experiment TEXT NOT NULL, pin TEXT NOT NULL, sha256 TEXT, first_run TEXT NOT NULL,
  PRIMARY KEY (experiment, pin)
) WITHOUT ROWID;
CREATE INDEX provevi_events_span ON provevi_events (span_id) WHERE span_id IS NOT NULL;
`;

/**
 * Version 3: indexes for the listing of runs (`listRuns`, `prove runs`): by status, by start, and the failed
 * runs by their error, so that a page of cancelled runs does not read every failed run's events.
 */
const V3 = `
CREATE INDEX provevi_runs_status ON provevi_runs (status, run_id);
CREATE INDEX provevi_runs_started ON provevi_runs (started_at);
CREATE INDEX provevi_events_failed ON provevi_events (json_extract(line, '$.data.error'), run_id)
  WHERE type = 'run_failed';
`;

/**
 * Version 4: indexes for the filtered listing of runs and the questions by agent and experiment. Each filter
 * column leads an index that goes on by status and then by run, so that a page of one agent (or experiment,
 * or pinned experiment) and one status is read in run order from the index alone, and its count is counted
 * there. The cancelled runs get a partial index of their own, so that telling failed from cancelled reads
 * only the cancelled runs' ending events, and the unsealed runs (running, or cut: a writer killed before or at
 * its seal) one of their own. The experiment indexes of version 2 are their prefixes, and go.
 */
const V4 = `
CREATE INDEX provevi_runs_agent_status ON provevi_runs (agent, status, run_id);
CREATE INDEX provevi_runs_experiment_status ON provevi_runs (experiment, status, run_id);
CREATE INDEX provevi_runs_pin_status ON provevi_runs (experiment_pin, status, run_id);
DROP INDEX provevi_runs_experiment;
DROP INDEX provevi_runs_experiment_pin;
CREATE INDEX provevi_events_cancelled ON provevi_events (run_id)
  WHERE type = 'run_failed' AND json_extract(line, '$.data.error') = 'CancelledError';
CREATE INDEX provevi_runs_unsealed ON provevi_runs (run_id) WHERE sealed_at IS NULL;
`;

/**
 * Version 6: the log of the store's sealed runs (docs/log.md): its key, its entries (a run once), the tree's
 * hashes at each tile level, and every checkpoint with the cosignatures it gathered. Runs sealed before the
 * upgrade are not in it: `prove log audit --repair` appends each one that verifies. (Version 5 is the postgres
 * store's; here it makes nothing, so that a version means the same in both.)
 */
const V6 = `
CREATE TABLE provevi_log_key (id INTEGER PRIMARY KEY CHECK (id = 1), key TEXT NOT NULL);
CREATE TABLE provevi_log_entries (
  idx INTEGER PRIMARY KEY CHECK (idx >= 0),
  run_id TEXT NOT NULL UNIQUE,
  entry BLOB NOT NULL
);
CREATE TABLE provevi_log_hashes (
  level INTEGER NOT NULL CHECK (level >= 0), n INTEGER NOT NULL CHECK (n >= 0), hash BLOB NOT NULL,
  PRIMARY KEY (level, n)
) WITHOUT ROWID;
CREATE TABLE provevi_log_checkpoints (size INTEGER PRIMARY KEY CHECK (size > 0), note TEXT NOT NULL, cosigned TEXT);
`;

/**
 * Version 7, as the postgres store's step 7 makes it: an assessment judges an experiment too (`experiment`, its
 * URI, pinned for one version; then no run), so `run_id` may be null, and exactly one of the two is set; and the
 * events are found by their trace ID (`trace(traceId)`). SQLite cannot drop a NOT NULL, so the table is made
 * again, with every row and ID kept.
 */
const V7 = `
CREATE TABLE provevi_assessments_v7 (
  id INTEGER PRIMARY KEY,
  run_id TEXT, seq INTEGER, span_id TEXT,
  experiment TEXT,
  name TEXT NOT NULL, value TEXT NOT NULL, rationale TEXT, source TEXT,
  created_at TEXT NOT NULL,
  CHECK ((run_id IS NULL) <> (experiment IS NULL)),
  CHECK (experiment IS NULL OR (seq IS NULL AND span_id IS NULL))
);
INSERT INTO provevi_assessments_v7 (id, run_id, seq, span_id, name, value, rationale, source, created_at)
  SELECT id, run_id, seq, span_id, name, value, rationale, source, created_at FROM provevi_assessments;
DROP TABLE provevi_assessments;
ALTER TABLE provevi_assessments_v7 RENAME TO provevi_assessments;
CREATE INDEX provevi_assessments_run ON provevi_assessments (run_id);
CREATE INDEX provevi_assessments_experiment ON provevi_assessments (experiment) WHERE experiment IS NOT NULL;
CREATE INDEX provevi_events_trace ON provevi_events (trace_id, run_id) WHERE trace_id IS NOT NULL;
`;

/**
 * The upgrade steps, in order. A new version is a new step at the end; a step never changes once released.
 *
 * @example
 * ```ts
 * import { SCHEMA_STEPS } from "./sqlite_schema.ts";
 * SCHEMA_STEPS.map((s) => s.version); // [1, 2, 3, 4, 5, 6, 7]
 * ```
 */
export const SCHEMA_STEPS: readonly SchemaStep[] = [
  {
    version: 1,
    description: "runs, events, refs, payloads, assessments; each agent class as an experiment",
    up: (db) => db.exec(V1),
  },
  {
    version: 2,
    description: "agent classes and versions in their own tables; each run's agent version from its events",
    up: (db) => {
      db.exec(V2);
      // Each run's agent version, settings and experiment come from its run_created line.
      const rows = db.prepare(
        `SELECT e.line FROM provevi_events e JOIN provevi_runs r ON r.run_id = e.run_id
         WHERE e.seq = 0 AND e.type = 'run_created' ORDER BY e.run_id`,
      ).all() as { line: string }[];
      for (const { line } of rows) writeCreatedRows(db, JSON.parse(line) as EvidenceEvent);
    },
  },
  {
    version: 3,
    description: "indexes for the listing of runs: by status, by start, failed runs by their error",
    up: (db) => db.exec(V3),
  },
  {
    version: 4,
    description:
      "indexes for filtered pages of runs: agent, experiment or pin, then status and run; cancelled and unsealed runs",
    up: (db) => db.exec(V4),
  },
  {
    version: 5,
    description:
      "views and indexes that read an event's line take every line, one with a NUL's or half a surrogate pair's escape",
    up: () => {}, // SQLite's JSON functions take every line already
  },
  {
    version: 6,
    description: "the log of the store's sealed runs: its key, entries, tile hashes and checkpoints",
    up: (db) => db.exec(V6),
  },
  {
    version: 7,
    description:
      "assessments of an experiment (run_id or experiment, one of the two); events found by trace ID",
    up: (db) => db.exec(V7),
  },
];

/** The schema version this provevi writes and reads. */
export const SCHEMA_VERSION: number = SCHEMA_STEPS[SCHEMA_STEPS.length - 1]!.version;

/**
 * The schema version a file records: 0 when it holds no provevi tables.
 *
 * @param db An open database.
 * @returns The version, or 0.
 */
export function schemaVersion(db: SqlDb): number {
  const meta = db.prepare(
    "SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = 'provevi_meta'",
  ).get();
  if (!meta) return 0;
  const row = db.prepare("SELECT value FROM provevi_meta WHERE key = 'schema_version'").get() as
    | { value: string }
    | undefined;
  return row ? Number(row.value) : 0;
}

/**
 * Applies one step inside the caller's transaction and records its version.
 *
 * @param db An open database, inside a transaction.
 * @param step The step to apply.
 */
export function applyStep(db: SqlDb, step: SchemaStep): void {
  step.up(db);
  db.prepare("INSERT OR REPLACE INTO provevi_meta (key, value) VALUES ('schema_version', ?)")
    .run(String(step.version));
}

/** One object of `sqlite_master`. */
export interface SchemaObject {
  type: string;
  name: string;
  tbl_name: string;
  sql: string | null;
}

let expected: Map<string, SchemaObject> | null = null;

/** The provevi objects that the steps make, by name; built once in memory. */
export function expectedSchema(): Map<string, SchemaObject> {
  if (expected) return expected;
  const db = new DatabaseSync(":memory:");
  try {
    for (const step of SCHEMA_STEPS) applyStep(db, step);
    expected = new Map(readSchema(db).map((o) => [o.name, o]));
  } finally {
    db.close();
  }
  return expected;
}

/**
 * The schema's objects, without SQLite's own tables and indexes (`sqlite_autoindex_…`, `sqlite_stat1`). The
 * test is on the name's prefix, not `LIKE 'sqlite_%'`, whose `_` matches any letter and so would hide a
 * trigger named `sqlitex…`; and a trigger or view is never SQLite's own, whatever its name.
 */
function readSchema(db: SqlDb): SchemaObject[] {
  return (preparedOnce(db, "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name")
    .all() as SchemaObject[])
    .filter((o) =>
      !((o.type === "table" || o.type === "index") && o.name.toLowerCase().startsWith("sqlite_"))
    );
}

const PROVEVI = /provevi_/i;

/**
 * The problems of a file's schema, empty when it is provevi's own. An extra index on a provevi table is
 * allowed, since it cannot change what a query returns; a trigger on a provevi table, or whose text names one,
 * is refused; a provevi object that is missing, changed or extra is refused. Other objects (MLflow's
 * tables) are left alone.
 *
 * @param db An open database at {@linkcode SCHEMA_VERSION}.
 * @returns One line per problem.
 */
export function schemaProblems(db: SqlDb): string[] {
  // A check of many runs over one connection reads the schema once while its version stays: SQLite changes the
  // version with every change of the schema it commits, and holds its own prepared statements to it. Not inside
  // a transaction of the connection's own, whose changes of the schema a rollback undoes, version and all (the
  // next change would have the same version). Nor once another connection committed anything (`data_version`,
  // which no one can set): it may have changed the schema and set `schema_version` back (`PRAGMA
  // schema_version = N`, as the sqlite3 shell may), so that the version alone repeats.
  if ((db as { isTransaction?: boolean }).isTransaction !== false) return freshSchemaProblems(db);
  const version = [
    (preparedOnce(db, "PRAGMA schema_version").get() as { schema_version: number }).schema_version,
    (preparedOnce(db, "PRAGMA data_version").get() as { data_version: number }).data_version,
  ].join(" ");
  const known = checked.get(db);
  if (known?.version === version) return [...known.problems];
  const problems = freshSchemaProblems(db);
  checked.set(db, { version, problems });
  return [...problems];
}

/**
 * The schema problems of each connection checked, with the schema's version they were found at and the
 * connection's `data_version` then.
 */
const checked = new WeakMap<SqlDb, { version: string; problems: string[] }>();

function freshSchemaProblems(db: SqlDb): string[] {
  const want = expectedSchema();
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const o of readSchema(db)) {
    const mine = want.get(o.name);
    if (mine) {
      seen.add(o.name);
      if (mine.type !== o.type || mine.tbl_name !== o.tbl_name || mine.sql !== o.sql) {
        problems.push(`the schema's ${o.type} ${o.name} was changed`);
      }
      continue;
    }
    if (o.type === "trigger" && (PROVEVI.test(o.tbl_name) || PROVEVI.test(o.sql ?? ""))) {
      problems.push(`the schema has a trigger ${o.name} on or naming a provevi table; drop it`);
    } else if (o.type === "index" && PROVEVI.test(o.tbl_name)) {
      continue; // an extra index cannot change what a query returns
    } else if (PROVEVI.test(o.name)) {
      problems.push(`the schema has a ${o.type} ${o.name} that provevi does not make`);
    }
  }
  for (const name of want.keys()) {
    if (!seen.has(name)) problems.push(`the schema lacks the ${want.get(name)!.type} ${name}`);
  }
  return problems;
}

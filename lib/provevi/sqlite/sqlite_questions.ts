/**
 * The questions across runs, as SQL over provevi's tables and views. Each is a function of an open
 * connection that returns plain data; {@linkcode SqliteStore} wraps them as methods.
 * @module
 */
import { preparedOnce } from "./_prepared.ts";
import type { Assessment } from "../store/assess.ts";
import { ProveviError } from "../evidence/errors.ts";
import { parseJson } from "../evidence/json_depth.ts";
import type { SqlDb } from "./sqlite_rows.ts";
import { linedRows } from "./_lined_rows.ts";
import type {
  AccessEntry,
  AgentDetail,
  AgentSummary,
  ExperimentDetail,
  ExperimentSummary,
  InputEntry,
  RunDetail,
  RunReading,
  RunSummary,
} from "../store/store_questions.ts";

/**
 * A column that holds JSON, parsed; a value that is not JSON means the file was changed by hand, which is a
 * store problem (exit 1), not a bug.
 */
function jsonColumn(text: string, where: string): unknown {
  try {
    // weighed, and no deeper than a reader walks: a value of the store's rows is printed, copied and compared
    // with a call a level (a tools column nested 100,000 deep crashed prove agent show)
    return parseJson(text, { weighed: true });
  } catch (error) {
    throw new ProveviError(`${where} is not JSON: the store file was changed; restore it from a copy`, {
      cause: error,
    });
  }
}

const SUMMARY =
  `r.run_id, r.agent, r.agent_version, r.experiment, r.experiment_pin, r.status, r.started_at, r.ended_at`;

/** The runs that staged `uri`, by the URI itself or by a pinned version (`uri?at=…`). */
export function runsReading(db: SqlDb, uri: string): RunReading[] {
  const rows = db.prepare(
    `SELECT ${SUMMARY}, f.uri AS uri
     FROM provevi_event_refs f
     JOIN provevi_events e ON e.run_id = f.run_id AND e.seq = f.seq
     JOIN provevi_runs r ON r.run_id = f.run_id
     WHERE (f.uri = ? OR (f.uri >= ? AND f.uri < ?)) AND e.type = 'input_staged'
     ORDER BY r.run_id, e.seq`,
  ).all(uri, `${uri}?`, `${uri}@`) as unknown as RunReading[];
  const seen = new Set<string>();
  return rows.filter((r) => !seen.has(r.run_id) && seen.add(r.run_id));
}

/** The experiments whose URI is `uri`, or whose last part(s) are `uri`. */
function experimentsNamed(db: SqlDb, uri: string): string[] {
  const exact = db.prepare("SELECT experiment FROM provevi_experiments WHERE experiment = ?").get(uri);
  if (exact) return [uri];
  const all = db.prepare("SELECT experiment FROM provevi_experiments ORDER BY experiment").all() as {
    experiment: string;
  }[];
  return all.map((r) => r.experiment).filter((e) => e.endsWith(`/${uri}`));
}

/** The runs that named an experiment, by URI or name; a pinned URI (`?at=`) gives that version's runs. */
export function runsOfExperiment(db: SqlDb, uri: string): RunSummary[] {
  if (uri.includes("?")) {
    return db.prepare(`SELECT ${SUMMARY} FROM provevi_runs r WHERE r.experiment_pin = ? ORDER BY r.run_id`)
      .all(uri) as unknown as RunSummary[];
  }
  const out: RunSummary[] = [];
  const stmt = db.prepare(`SELECT ${SUMMARY} FROM provevi_runs r WHERE r.experiment = ? ORDER BY r.run_id`);
  for (const e of experimentsNamed(db, uri)) out.push(...(stmt.all(e) as unknown as RunSummary[]));
  return out.sort((a, b) => (a.run_id < b.run_id ? -1 : 1));
}

/** The experiments that runs named. */
export function experiments(db: SqlDb): ExperimentSummary[] {
  return db.prepare(
    `SELECT x.experiment, x.first_run,
       (SELECT count(*) FROM provevi_experiment_versions v WHERE v.experiment = x.experiment) AS versions,
       (SELECT count(*) FROM provevi_runs r WHERE r.experiment = x.experiment) AS runs
     FROM provevi_experiments x ORDER BY x.experiment`,
  ).all() as unknown as ExperimentSummary[];
}

/** An experiment by URI or name, with its versions and their runs; null when no run named it. */
export function experiment(db: SqlDb, uri: string): ExperimentDetail | null {
  const names = experimentsNamed(db, uri.replace(/[?#].*$/, ""));
  if (names.length === 0) return null;
  if (names.length > 1) {
    throw new ProveviError(
      `"${uri}" names ${names.length} experiments (${names.join(", ")}); pass the whole URI`,
    );
  }
  const name = names[0]!;
  const head = db.prepare("SELECT experiment, first_run FROM provevi_experiments WHERE experiment = ?")
    .get(name) as { experiment: string; first_run: string };
  const versions = db.prepare(
    "SELECT pin, sha256, first_run FROM provevi_experiment_versions WHERE experiment = ? ORDER BY first_run, pin",
  ).all(name) as { pin: string; sha256: string | null; first_run: string }[];
  const runsOf = db.prepare("SELECT run_id FROM provevi_runs WHERE experiment_pin = ? ORDER BY run_id");
  const unpinned = db.prepare(
    "SELECT run_id FROM provevi_runs WHERE experiment = ? AND experiment_pin IS NULL ORDER BY run_id",
  ).all(name) as { run_id: string }[];
  return {
    ...head,
    versions: versions.map((v) => ({
      ...v,
      runs: (runsOf.all(v.pin) as { run_id: string }[]).map((r) => r.run_id),
    })),
    unpinned_runs: unpinned.map((r) => r.run_id),
  };
}

/** The agent classes that `name` names: a whole class `org/domain/env/name`, or a bare name. */
function agentsNamed(db: SqlDb, name: string): string[] {
  if (name.includes("/")) {
    return db.prepare("SELECT agent FROM provevi_agents WHERE agent = ?").all(name).map((r) =>
      (r as { agent: string }).agent
    );
  }
  return (db.prepare("SELECT agent FROM provevi_agents WHERE name = ? ORDER BY agent").all(name) as {
    agent: string;
  }[]).map((r) => r.agent);
}

/** The runs of an agent class, or of one version of it by its SHA-256 or the start of it. */
export function runsOfAgent(db: SqlDb, name: string, options: { version?: string } = {}): RunSummary[] {
  const out: RunSummary[] = [];
  const version = options.version?.toLowerCase();
  if (version !== undefined && !/^[0-9a-f]{1,64}$/.test(version)) {
    throw new ProveviError(
      `"${options.version}" is not an agent version: write its SHA-256 or the start of it`,
    );
  }
  const stmt = version === undefined
    ? db.prepare(`SELECT ${SUMMARY} FROM provevi_runs r WHERE r.agent = ? ORDER BY r.run_id`)
    : db.prepare(
      `SELECT ${SUMMARY} FROM provevi_runs r
       WHERE r.agent = ? AND r.agent_version >= ? AND r.agent_version < ? ORDER BY r.run_id`,
    );
  const versionsOf = db.prepare(
    `SELECT DISTINCT agent_version FROM provevi_runs
     WHERE agent = ? AND agent_version >= ? AND agent_version < ? ORDER BY agent_version`,
  );
  for (const agent of agentsNamed(db, name)) {
    if (version !== undefined) {
      // As git does with a short hash: a start that two versions share names neither.
      const found = (versionsOf.all(agent, version, `${version}g`) as { agent_version: string }[])
        .map((r) => r.agent_version);
      if (found.length > 1) {
        throw new ProveviError(
          `"${options.version}" starts ${found.length} versions of ${agent} (${
            found.map((v) => v.slice(0, 12)).join(", ")
          }); write more of the SHA-256`,
        );
      }
    }
    const rows = version === undefined ? stmt.all(agent) : stmt.all(agent, version, `${version}g`);
    out.push(...(rows as unknown as RunSummary[]));
  }
  return out.sort((a, b) => (a.run_id < b.run_id ? -1 : 1));
}

/** The agent classes, with their numbers of versions and runs. */
export function agents(db: SqlDb): AgentSummary[] {
  return db.prepare(
    `SELECT a.agent, a.org, a.domain, a.env, a.name, a.first_run,
       (SELECT count(*) FROM provevi_agent_versions v WHERE v.agent = a.agent) AS versions,
       (SELECT count(*) FROM provevi_runs r WHERE r.agent = a.agent) AS runs
     FROM provevi_agents a ORDER BY a.agent`,
  ).all() as unknown as AgentSummary[];
}

/** An agent class by its whole name or its bare name; null when no run used it. */
export function agent(db: SqlDb, name: string): AgentDetail | null {
  const names = agentsNamed(db, name);
  if (names.length === 0) return null;
  if (names.length > 1) {
    throw new ProveviError(
      `"${name}" names ${names.length} agent classes (${names.join(", ")}); pass org/domain/env/name`,
    );
  }
  const head = db.prepare(
    "SELECT agent, org, domain, env, name, first_run FROM provevi_agents WHERE agent = ?",
  )
    .get(names[0]!) as Omit<AgentSummary, "versions" | "runs">;
  const versions = db.prepare(
    `SELECT version, backend, model, tools, limits, first_run FROM provevi_agent_versions
     WHERE agent = ? ORDER BY first_run, version`,
  ).all(head.agent) as {
    version: string;
    backend: string | null;
    model: string | null;
    tools: string | null;
    limits: string | null;
    first_run: string;
  }[];
  const runsOf = db.prepare(
    "SELECT run_id FROM provevi_runs WHERE agent = ? AND agent_version = ? ORDER BY run_id",
  );
  return {
    ...head,
    versions: versions.map((v) => ({
      ...v,
      tools: v.tools === null ? null : jsonColumn(v.tools, `${versionKey(head.agent, v.version)}: tools`),
      limits: v.limits === null ? null : jsonColumn(v.limits, `${versionKey(head.agent, v.version)}: limits`),
      runs: (runsOf.all(head.agent, v.version) as { run_id: string }[]).map((r) => r.run_id),
    })),
  };
}

const versionKey = (agent: string, version: string) =>
  `provevi_agent_versions (agent ${agent}, version ${version})`;

/** A run's row and settings; null when the store has no such run. */
export function run(db: SqlDb, runId: string): RunDetail | null {
  const row = db.prepare("SELECT * FROM provevi_runs WHERE run_id = ?").get(runId) as
    | Omit<RunDetail, "params" | "events">
    | undefined;
  if (!row) return null;
  const params: Record<string, unknown> = {};
  for (
    const p of db.prepare("SELECT key, value FROM provevi_run_params WHERE run_id = ? ORDER BY key").all(
      runId,
    )
  ) {
    const { key, value } = p as { key: string; value: string };
    params[key] = jsonColumn(value, `provevi_run_params (run_id "${runId}", key ${key})`);
  }
  const events =
    (db.prepare("SELECT count(*) AS n FROM provevi_events WHERE run_id = ?").get(runId) as { n: number }).n;
  return { ...row, params, events };
}

/** A run's grants and refusals, in the order of its events. */
export function access(db: SqlDb, runId: string): AccessEntry[] {
  return linedRows<AccessEntry>(db, runId, {
    sql: `SELECT seq, decision, uri FROM (
       SELECT seq, 'granted' AS decision, uri FROM provevi_grants WHERE run_id = ?
       UNION ALL
       SELECT seq, 'denied' AS decision, uri FROM provevi_refusals WHERE run_id = ?)
     ORDER BY seq, uri`,
    params: [runId, runId],
  }, ["mode", "reason", "expires_at"]).map((r) => {
    // the view has no reason for a grant, no expiry for a refusal: a text of the data's, else none
    if (r.decision === "granted" && typeof r.reason !== "string") r.reason = null;
    if (r.decision === "denied" && typeof r.expires_at !== "string") r.expires_at = null;
    return {
      seq: r.seq,
      time: r.time,
      decision: r.decision,
      uri: r.uri,
      mode: r.mode,
      reason: r.reason,
      expires_at: r.expires_at,
    };
  });
}

/** The inputs a run staged, with their pinned URIs. */
export function inputs(db: SqlDb, runId: string): InputEntry[] {
  return linedRows<InputEntry>(db, runId, {
    sql: "SELECT seq, uri FROM provevi_inputs WHERE run_id = ? ORDER BY seq, uri",
    params: [runId],
  }, ["name", "sha256"]).map((r) => ({
    seq: r.seq,
    time: r.time,
    name: r.name,
    sha256: r.sha256,
    uri: r.uri,
  }));
}

const ASSESSMENT = "id, run_id, seq, span_id, experiment, name, value, rationale, source, created_at";

/** Assessment rows with their values parsed. */
function assessmentRows(rows: unknown[]): Assessment[] {
  return (rows as (Omit<Assessment, "value"> & { value: string })[]).map((r) => ({
    ...r,
    value: jsonColumn(
      r.value,
      `provevi_assessments (id ${r.id}, ${
        r.run_id !== null ? `run_id "${r.run_id}"` : `experiment "${r.experiment}"`
      }): value`,
    ),
  }));
}

/** The assessments of a run, oldest first. */
export function assessments(db: SqlDb, runId: string): Assessment[] {
  return assessmentRows(
    // asked for every run a build or an export reads: prepared once per connection
    preparedOnce(db, `SELECT ${ASSESSMENT} FROM provevi_assessments WHERE run_id = ? ORDER BY id`).all(runId),
  );
}

/**
 * The assessments of an experiment by URI or name, oldest first: with no selector, of the experiment as a whole
 * and of each version; pinned (`?at=commit:…`), of the whole and of that version.
 */
export function experimentAssessments(db: SqlDb, uri: string): Assessment[] {
  const base = uri.replace(/[?#].*$/, "");
  const names = experimentsNamed(db, base);
  if (names.length > 1) {
    throw new ProveviError(
      `"${uri}" names ${names.length} experiments (${names.join(", ")}); pass the whole URI`,
    );
  }
  if (names.length === 0) return [];
  const name = names[0]!;
  const rows = base === uri
    ? db.prepare(
      `SELECT ${ASSESSMENT} FROM provevi_assessments
       WHERE experiment = ? OR (experiment >= ? AND experiment < ?) ORDER BY id`,
    ).all(name, `${name}?`, `${name}@`)
    : db.prepare(`SELECT ${ASSESSMENT} FROM provevi_assessments WHERE experiment IN (?, ?) ORDER BY id`)
      .all(name, name + uri.slice(base.length));
  return assessmentRows(rows);
}

/**
 * The questions across runs in the postgres store: the sqlite store's queries, in PostgreSQL. Each is a
 * function of a {@linkcode RowSource} that returns plain data; {@linkcode PostgresStore} wraps them as
 * methods, and the shared questions contract holds both stores to the same answers.
 * @module
 */
import type { Assessment } from "../store/assess.ts";
import { ProveviError } from "../evidence/errors.ts";
import { parseJson } from "../evidence/json_depth.ts";
import type { RowSource } from "../store/row_check.ts";
import { eventRows } from "./_event_rows.ts";
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

type Db = RowSource;

function jsonColumn(text: string, where: string): unknown {
  try {
    // weighed, and no deeper than a reader walks: a value of the store's rows is printed, copied and compared
    // with a call a level (a tools column nested 100,000 deep crashed prove agent show)
    return parseJson(text, { weighed: true });
  } catch (error) {
    throw new ProveviError(`${where} is not JSON: the store's rows were changed; restore them from a copy`, {
      cause: error,
    });
  }
}

const SUMMARY =
  `r.run_id, r.agent, r.agent_version, r.experiment, r.experiment_pin, r.status, r.started_at, r.ended_at`;

/** The columns of a run's row, in the sqlite store's order. */
const RUN_COLUMNS =
  `run_id, folder, org, domain, env, actor, mode, agent, agent_version, experiment, experiment_pin,
   experiment_sha256, parent_run, status, started_at, ended_at, last_hash, manifest_sha256, sealed_at,
   bundle_uri, bundle_pinned`;

const as = <T>(rows: unknown): T => rows as T;

/** The runs that staged `uri`, by the URI itself or by a pinned version (`uri?at=…`). */
export async function runsReading(db: Db, uri: string): Promise<RunReading[]> {
  const rows = as<RunReading[]>(
    await db.all(
      `SELECT ${SUMMARY}, f.uri AS uri
       FROM provevi_event_refs f
       JOIN provevi_events e ON e.run_id = f.run_id AND e.seq = f.seq
       JOIN provevi_runs r ON r.run_id = f.run_id
       WHERE (f.uri = ? OR (f.uri >= ? AND f.uri < ?)) AND e.type = 'input_staged'
       ORDER BY r.run_id, e.seq`,
      uri,
      `${uri}?`,
      `${uri}@`,
    ),
  );
  const seen = new Set<string>();
  return rows.filter((r) => !seen.has(r.run_id) && seen.add(r.run_id));
}

async function experimentsNamed(db: Db, uri: string): Promise<string[]> {
  const exact = await db.all("SELECT experiment FROM provevi_experiments WHERE experiment = ?", uri);
  if (exact.length) return [uri];
  // The name is the URI's last part(s): a range on the reversed text would need an index of its own, and
  // experiments are few, so they are filtered here, as in the sqlite store.
  const all = as<{ experiment: string }[]>(
    await db.all("SELECT experiment FROM provevi_experiments ORDER BY experiment"),
  );
  return all.map((r) => r.experiment).filter((e) => e.endsWith(`/${uri}`));
}

/**
 * The runs that named an experiment, by URI or name; a pinned URI (`?at=`) gives that version's runs. The
 * experiments are named first (the one of that URI if there is one, else those whose last part(s) are it),
 * then their runs are read by `experiment = $1`: a value the planner can estimate, so that the runs come from
 * an index scan of provevi_runs_experiment_status. (One statement that joined them, or took `= ANY` of an array
 * it made, left the planner guessing at thousands of runs, and it read the whole table.)
 */
export async function runsOfExperiment(db: Db, uri: string): Promise<RunSummary[]> {
  if (uri.includes("?")) {
    return as<RunSummary[]>(
      await db.all(`SELECT ${SUMMARY} FROM provevi_runs r WHERE r.experiment_pin = ? ORDER BY r.run_id`, uri),
    );
  }
  const names = await experimentsNamed(db, uri);
  if (names.length === 0) return [];
  return as<RunSummary[]>(
    await db.all(
      `SELECT ${SUMMARY} FROM provevi_runs r WHERE r.experiment IN (${names.map(() => "?").join(", ")})
       ORDER BY r.run_id`,
      ...names,
    ),
  );
}

/** The experiments that runs named. */
export async function experiments(db: Db): Promise<ExperimentSummary[]> {
  return as<ExperimentSummary[]>(
    await db.all(
      `SELECT x.experiment, x.first_run,
         (SELECT count(*)::int FROM provevi_experiment_versions v WHERE v.experiment = x.experiment) AS versions,
         (SELECT count(*)::int FROM provevi_runs r WHERE r.experiment = x.experiment) AS runs
       FROM provevi_experiments x ORDER BY x.experiment`,
    ),
  );
}

/** An experiment by URI or name, with its versions and their runs; null when no run named it. */
export async function experiment(db: Db, uri: string): Promise<ExperimentDetail | null> {
  const names = await experimentsNamed(db, uri.replace(/[?#].*$/, ""));
  if (names.length === 0) return null;
  if (names.length > 1) {
    throw new ProveviError(
      `"${uri}" names ${names.length} experiments (${names.join(", ")}); pass the whole URI`,
    );
  }
  const name = names[0]!;
  const [head] = as<{ experiment: string; first_run: string }[]>(
    await db.all("SELECT experiment, first_run FROM provevi_experiments WHERE experiment = ?", name),
  );
  const versions = as<{ pin: string; sha256: string | null; first_run: string }[]>(
    await db.all(
      "SELECT pin, sha256, first_run FROM provevi_experiment_versions WHERE experiment = ? ORDER BY first_run, pin",
      name,
    ),
  );
  const unpinned = as<{ run_id: string }[]>(
    await db.all(
      "SELECT run_id FROM provevi_runs WHERE experiment = ? AND experiment_pin IS NULL ORDER BY run_id",
      name,
    ),
  );
  const out: ExperimentDetail = { ...head!, versions: [], unpinned_runs: unpinned.map((r) => r.run_id) };
  for (const v of versions) {
    const runs = as<{ run_id: string }[]>(
      await db.all("SELECT run_id FROM provevi_runs WHERE experiment_pin = ? ORDER BY run_id", v.pin),
    );
    out.versions.push({ ...v, runs: runs.map((r) => r.run_id) });
  }
  return {
    experiment: out.experiment,
    first_run: out.first_run,
    versions: out.versions,
    unpinned_runs: out.unpinned_runs,
  };
}

async function agentsNamed(db: Db, name: string): Promise<string[]> {
  const rows = name.includes("/")
    ? await db.all("SELECT agent FROM provevi_agents WHERE agent = ?", name)
    : await db.all("SELECT agent FROM provevi_agents WHERE name = ? ORDER BY agent", name);
  return as<{ agent: string }[]>(rows).map((r) => r.agent);
}

/** The runs of an agent class, or of one version of it by its SHA-256 or the start of it. */
export async function runsOfAgent(
  db: Db,
  name: string,
  options: { version?: string } = {},
): Promise<RunSummary[]> {
  const out: RunSummary[] = [];
  const version = options.version?.toLowerCase();
  if (version !== undefined && !/^[0-9a-f]{1,64}$/.test(version)) {
    throw new ProveviError(
      `"${options.version}" is not an agent version: write its SHA-256 or the start of it`,
    );
  }
  if (version === undefined) {
    // One query, so one round trip: the class of that whole name, or the classes of that bare name.
    return as<RunSummary[]>(
      await db.all(
        `SELECT ${SUMMARY} FROM provevi_runs r
         WHERE r.agent IN (SELECT agent FROM provevi_agents WHERE ${
          name.includes("/") ? "agent" : "name"
        } = ?)
         ORDER BY r.run_id`,
        name,
      ),
    );
  }
  for (const agent of await agentsNamed(db, name)) {
    if (version !== undefined) {
      const found = as<{ agent_version: string }[]>(
        await db.all(
          `SELECT DISTINCT agent_version FROM provevi_runs
           WHERE agent = ? AND agent_version >= ? AND agent_version < ? ORDER BY agent_version`,
          agent,
          version,
          `${version}g`,
        ),
      ).map((r) => r.agent_version);
      if (found.length > 1) {
        throw new ProveviError(
          `"${options.version}" starts ${found.length} versions of ${agent} (${
            found.map((v) => v.slice(0, 12)).join(", ")
          }); write more of the SHA-256`,
        );
      }
    }
    const rows = version === undefined
      ? await db.all(`SELECT ${SUMMARY} FROM provevi_runs r WHERE r.agent = ? ORDER BY r.run_id`, agent)
      : await db.all(
        `SELECT ${SUMMARY} FROM provevi_runs r
         WHERE r.agent = ? AND r.agent_version >= ? AND r.agent_version < ? ORDER BY r.run_id`,
        agent,
        version,
        `${version}g`,
      );
    out.push(...as<RunSummary[]>(rows));
  }
  return out.sort((a, b) => (a.run_id < b.run_id ? -1 : 1));
}

/** The agent classes, with their numbers of versions and runs. */
export async function agents(db: Db): Promise<AgentSummary[]> {
  return as<AgentSummary[]>(
    await db.all(
      `SELECT a.agent, a.org, a.domain, a.env, a.name, a.first_run,
         (SELECT count(*)::int FROM provevi_agent_versions v WHERE v.agent = a.agent) AS versions,
         (SELECT count(*)::int FROM provevi_runs r WHERE r.agent = a.agent) AS runs
       FROM provevi_agents a ORDER BY a.agent`,
    ),
  );
}

/** An agent class by its whole name or its bare name; null when no run used it. */
export async function agent(db: Db, name: string): Promise<AgentDetail | null> {
  const names = await agentsNamed(db, name);
  if (names.length === 0) return null;
  if (names.length > 1) {
    throw new ProveviError(
      `"${name}" names ${names.length} agent classes (${names.join(", ")}); pass org/domain/env/name`,
    );
  }
  const [head] = as<Omit<AgentSummary, "versions" | "runs">[]>(
    await db.all(
      "SELECT agent, org, domain, env, name, first_run FROM provevi_agents WHERE agent = ?",
      names[0]!,
    ),
  );
  const versions = as<{
    version: string;
    backend: string | null;
    model: string | null;
    tools: string | null;
    limits: string | null;
    first_run: string;
  }[]>(
    await db.all(
      `SELECT version, backend, model, tools, limits, first_run FROM provevi_agent_versions
       WHERE agent = ? ORDER BY first_run, version`,
      head!.agent,
    ),
  );
  const out: AgentDetail = { ...head!, versions: [] };
  for (const v of versions) {
    const runs = as<{ run_id: string }[]>(
      await db.all(
        "SELECT run_id FROM provevi_runs WHERE agent = ? AND agent_version = ? ORDER BY run_id",
        head!.agent,
        v.version,
      ),
    );
    out.versions.push({
      ...v,
      tools: v.tools === null ? null : jsonColumn(v.tools, `${versionKey(head!.agent, v.version)}: tools`),
      limits: v.limits === null
        ? null
        : jsonColumn(v.limits, `${versionKey(head!.agent, v.version)}: limits`),
      runs: runs.map((r) => r.run_id),
    });
  }
  return out;
}

const versionKey = (agent: string, version: string) =>
  `provevi_agent_versions (agent ${agent}, version ${version})`;

/** A run's row and settings; null when the store has no such run. */
export async function run(db: Db, runId: string): Promise<RunDetail | null> {
  const [row] = as<Omit<RunDetail, "params" | "events">[]>(
    await db.all(`SELECT ${RUN_COLUMNS} FROM provevi_runs WHERE run_id = ?`, runId),
  );
  if (!row) return null;
  const params: Record<string, unknown> = {};
  for (
    const p of as<{ key: string; value: string }[]>(
      await db.all("SELECT key, value FROM provevi_run_params WHERE run_id = ? ORDER BY key", runId),
    )
  ) {
    params[p.key] = jsonColumn(p.value, `provevi_run_params (run_id "${runId}", key ${p.key})`);
  }
  const [count] = as<{ n: number }[]>(
    await db.all("SELECT count(*)::int AS n FROM provevi_events WHERE run_id = ?", runId),
  );
  return { ...row, params, events: count!.n };
}

/** A run's grants and refusals, in the order of its events. */
export function access(db: Db, runId: string): Promise<AccessEntry[]> {
  return eventRows<AccessEntry>(db, runId, {
    refs: `SELECT seq, decision, uri FROM (
       SELECT seq, 'granted' AS decision, uri FROM provevi_grants WHERE run_id = ?
       UNION ALL
       SELECT seq, 'denied' AS decision, uri FROM provevi_refusals WHERE run_id = ?) v
     ORDER BY seq, uri`,
    refsParams: 2,
    event: `SELECT time, mode, NULL AS reason, expires_at FROM provevi_grants WHERE run_id = ? AND seq = ?
       UNION ALL
       SELECT time, mode, reason, NULL AS expires_at FROM provevi_refusals WHERE run_id = ? AND seq = ?`,
    eventParams: 4,
    columns: ["time", "mode", "reason", "expires_at"],
  }).then((rows) =>
    rows.map((r) => ({
      seq: r.seq,
      time: r.time,
      decision: r.decision,
      uri: r.uri,
      mode: r.mode,
      reason: r.reason,
      expires_at: r.expires_at,
    }))
  );
}

/** The inputs a run staged, with their pinned URIs. */
export function inputs(db: Db, runId: string): Promise<InputEntry[]> {
  return eventRows<InputEntry>(db, runId, {
    refs: "SELECT seq, uri FROM provevi_inputs WHERE run_id = ? ORDER BY seq, uri",
    refsParams: 1,
    event: "SELECT time, name, sha256 FROM provevi_inputs WHERE run_id = ? AND seq = ?",
    eventParams: 2,
    columns: ["time", "name", "sha256"],
  }).then((rows) =>
    rows.map((r) => ({ seq: r.seq, time: r.time, name: r.name, sha256: r.sha256, uri: r.uri }))
  );
}

const ASSESSMENT = "id, run_id, seq, span_id, experiment, name, value, rationale, source, created_at";

/** Assessment rows with their IDs as numbers and their values parsed. */
function assessmentRows(rows: unknown[]): Assessment[] {
  return as<(Omit<Assessment, "value"> & { value: string })[]>(rows).map((r) => ({
    ...r,
    id: Number(r.id),
    value: jsonColumn(
      r.value,
      `provevi_assessments (id ${r.id}, ${
        r.run_id !== null ? `run_id "${r.run_id}"` : `experiment "${r.experiment}"`
      }): value`,
    ),
  }));
}

/** The assessments of a run, oldest first. */
export async function assessments(db: Db, runId: string): Promise<Assessment[]> {
  return assessmentRows(
    await db.all(`SELECT ${ASSESSMENT} FROM provevi_assessments WHERE run_id = ? ORDER BY id`, runId),
  );
}

/**
 * The assessments of an experiment by URI or name, oldest first: with no selector, of the experiment as a whole
 * and of each version; pinned (`?at=commit:…`), of the whole and of that version.
 */
export async function experimentAssessments(db: Db, uri: string): Promise<Assessment[]> {
  const base = uri.replace(/[?#].*$/, "");
  const names = await experimentsNamed(db, base);
  if (names.length > 1) {
    throw new ProveviError(
      `"${uri}" names ${names.length} experiments (${names.join(", ")}); pass the whole URI`,
    );
  }
  if (names.length === 0) return [];
  const name = names[0]!;
  return assessmentRows(
    base === uri
      ? await db.all(
        `SELECT ${ASSESSMENT} FROM provevi_assessments
         WHERE experiment = ? OR (experiment >= ? AND experiment < ?) ORDER BY id`,
        name,
        `${name}?`,
        `${name}@`,
      )
      : await db.all(
        `SELECT ${ASSESSMENT} FROM provevi_assessments WHERE experiment IN (?, ?) ORDER BY id`,
        name,
        name + uri.slice(base.length),
      ),
  );
}

/**
 * The part of the check of a store's rows (`row_check.ts`) that compares what `run_created` implies: the run's
 * settings, its agent class and version, its experiment and version, and the rows that name it as their first
 * run. The rows are read as they come, bounded (`row_reading.ts`).
 * @module
 */
import type { EvidenceEvent } from "../evidence/event.ts";
import { problem } from "../evidence/problem.ts";
import { createdRows, type SqlValue } from "./store_rows.ts";
import {
  boundedRow,
  boundedRows,
  MAX_ROW_PROBLEMS,
  type RowProblems,
  type RowSource,
} from "./row_reading.ts";

const show = (v: unknown) => (v === null || v === undefined ? "null" : JSON.stringify(v));

/**
 * The run's settings, agent class and version, experiment and version against its `run_created`, and the rows
 * that name the run as their first run (`rows.settings_differ`).
 *
 * @param db The store's rows.
 * @param runId The run.
 * @param created The run's `run_created`, or null.
 * @param problems The check's problems.
 */
export async function settingsProblems(
  db: RowSource,
  runId: string,
  created: EvidenceEvent | null,
  problems: RowProblems,
): Promise<void> {
  const differs = (message: string) => problems.push(problem("rows.settings_differ", message));
  if (created) await createdRowProblems(db, { runId, created, differs, problems });
  await firstRunProblems(db, { runId, created, differs, problems });
}

interface Of {
  runId: string;
  differs: (message: string) => void;
  problems: RowProblems;
}

async function createdRowProblems(db: RowSource, of: Of & { created: EvidenceEvent }): Promise<void> {
  const { params, agent, experiment } = createdRows(of.created);
  await paramsRowProblems(db, of, params);
  if (of.problems.stopped) return;
  const get = rowGetter(db, of);
  const { differs } = of;
  if (agent) {
    const k = `provevi_agents (agent ${agent.agent})`;
    const a = await get("provevi_agents", ["org", "domain", "env", "name"], { agent: agent.agent }, k);
    if (a === undefined) differs(`${k} is missing`);
    else if (a !== null) {
      for (const c of ["org", "domain", "env", "name"] as const) {
        if (a[c] !== agent[c]) {
          differs(`${k}: column ${c} is ${show(a[c])}, but the run's events say ${show(agent[c])}`);
        }
      }
    }
    const kv = `provevi_agent_versions (agent ${agent.agent}, version ${agent.version})`;
    const v = await get("provevi_agent_versions", ["backend", "model", "tools", "limits"], {
      agent: agent.agent,
      version: agent.version,
    }, kv);
    if (v === undefined) differs(`${kv} is missing`);
    else if (v !== null) {
      for (const c of ["backend", "model", "tools", "limits"] as const) {
        if (v[c] !== agent[c]) {
          differs(`${kv}: column ${c} is ${show(v[c])}, but the run's events say ${show(agent[c])}`);
        }
      }
    }
  }
  if (experiment) {
    const k = `provevi_experiments (experiment ${experiment.experiment})`;
    if (
      await get("provevi_experiments", ["first_run"], { experiment: experiment.experiment }, k) === undefined
    ) {
      differs(`${k} is missing`);
    }
    if (experiment.pin) {
      const kv = `provevi_experiment_versions (experiment ${experiment.experiment}, pin ${experiment.pin})`;
      const v = await get("provevi_experiment_versions", ["sha256"], {
        experiment: experiment.experiment,
        pin: experiment.pin,
      }, kv);
      if (v === undefined) differs(`${kv} is missing`);
      else if (v !== null && v.sha256 !== experiment.sha256) {
        differs(`${kv}: sha256 is ${show(v.sha256)}, but the run's events say ${show(experiment.sha256)}`);
      }
    }
  }
}

/** One row by its key, its texts bounded: undefined when there is none, null when it is too wide to read. */
type GetRow = (
  table: string,
  columns: string[],
  keys: Record<string, SqlValue>,
  key: string,
) => Promise<Record<string, SqlValue> | null | undefined>;

function rowGetter(db: RowSource, { runId, problems }: Of): GetRow {
  return async (table, columns, keys, key) => {
    const before = problems.list.length;
    const row = await boundedRow(
      db,
      {
        table,
        columns,
        where: Object.keys(keys).map((k) => `${k} = ?`).join(" AND "),
        params: Object.values(keys),
        code: "rows.settings_differ",
        key: () => key,
      },
      problems,
      runId,
    );
    return row ?? (problems.list.length > before ? null : undefined);
  };
}

/** The run's settings rows against those its run_created gives. */
async function paramsRowProblems(
  db: RowSource,
  { runId, differs, problems }: Of,
  want: ReadonlyMap<string, string>,
): Promise<void> {
  const seen = new Set<string>();
  const rows = boundedRows(
    db,
    {
      table: "provevi_run_params",
      columns: ["key", "value"],
      texts: ["key", "value"],
      short: ["key"],
      where: "run_id = ?",
      params: [runId],
      order: "key",
      most: want.size + MAX_ROW_PROBLEMS,
      implied: "its run_created's settings",
      code: "rows.settings_differ",
      key: (r) => `provevi_run_params (run_id "${runId}", key ${r.key})`,
    },
    problems,
    runId,
  );
  for await (const row of rows) {
    const { key, value } = row as { key: string; value: string };
    const k = `provevi_run_params (run_id "${runId}", key ${key})`;
    if (!want.has(key)) differs(`${k} is not a setting its events give`);
    else {
      seen.add(key);
      if (want.get(key) !== value) differs(`${k}: value is ${value}, but its events say ${want.get(key)}`);
    }
  }
  if (problems.stopped) return;
  for (const key of want.keys()) {
    if (!seen.has(key)) differs(`provevi_run_params (run_id "${runId}", key ${key}) is missing`);
  }
}

/**
 * The rows of agent classes, experiments and their versions that name the run as their first run must be the
 * ones its events give: a forged row cannot borrow a real run as its first. A run is the first run of one of
 * each at most.
 */
async function firstRunProblems(
  db: RowSource,
  { runId, created, differs, problems }: Of & { created: EvidenceEvent | null },
): Promise<void> {
  const { agent, experiment } = createdRows(created);
  const says = `names run "${runId}" as its first run, but the run's events do not give it`;
  const tables: [
    string,
    string[],
    (r: Record<string, SqlValue>) => boolean,
    (r: Record<string, SqlValue>) => string,
  ][] = [
    ["provevi_agents", ["agent"], (r) => r.agent === agent?.agent, (r) => `agent ${r.agent}`],
    [
      "provevi_agent_versions",
      ["agent", "version"],
      (r) => r.agent === agent?.agent && r.version === agent?.version,
      (r) => `agent ${r.agent}, version ${r.version}`,
    ],
    [
      "provevi_experiments",
      ["experiment"],
      (r) => r.experiment === experiment?.experiment,
      (r) => `experiment ${r.experiment}`,
    ],
    [
      "provevi_experiment_versions",
      ["experiment", "pin"],
      (r) => r.experiment === experiment?.experiment && r.pin === experiment?.pin,
      (r) => `experiment ${r.experiment}, pin ${r.pin}`,
    ],
  ];
  for (const [table, columns, given, key] of tables) {
    const rows = boundedRows(
      db,
      {
        table,
        columns,
        texts: columns,
        short: columns,
        where: "first_run = ?",
        params: [runId],
        order: columns.join(", "),
        most: 1 + MAX_ROW_PROBLEMS,
        implied: "its run_created",
        code: "rows.settings_differ",
        key: (r) => `${table} (${key(r)})`,
      },
      problems,
      runId,
    );
    for await (const r of rows) if (!given(r)) differs(`${table} (${key(r)}) ${says}`);
  }
}

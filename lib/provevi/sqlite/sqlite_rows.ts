/**
 * Writing the rows of a run into the sqlite store: what a `run_created` event implies. The rows themselves
 * are defined store-neutrally in `store/store_rows.ts`.
 * @module
 */
import type { EvidenceEvent } from "../evidence/event.ts";
import {
  createdRows,
  EVENT_COLUMNS,
  eventRefs,
  eventRow,
  RUN_FIELD_COLUMNS,
  type SqlValue,
} from "../store/store_rows.ts";

/** The part of `node:sqlite`'s `DatabaseSync` that the row writers use. */
export interface SqlDb {
  prepare(sql: string): {
    run(...params: SqlValue[]): unknown;
    get(...params: SqlValue[]): unknown;
    all(...params: SqlValue[]): unknown[];
    iterate(...params: SqlValue[]): Iterable<unknown>;
  };
  exec(sql: string): void;
}

/**
 * Writes an event's rows: its `provevi_events` row, its URIs, and what a first `run_created` implies.
 *
 * @param db The open database, inside a transaction.
 * @param event The parsed event.
 * @param line Its canonical line.
 */
export function writeEventRows(db: SqlDb, event: EvidenceEvent, line: string): void {
  const row = eventRow(event, line);
  db.prepare(
    `INSERT INTO provevi_events (${EVENT_COLUMNS.join(", ")}, line)
     VALUES (${EVENT_COLUMNS.map(() => "?").join(", ")}, ?)`,
  ).run(...EVENT_COLUMNS.map((c) => row[c]), line);
  const refs = eventRefs(event);
  if (refs.length) {
    const ref = db.prepare("INSERT INTO provevi_event_refs (run_id, seq, n, uri) VALUES (?, ?, ?, ?)");
    refs.forEach((uri, n) => ref.run(event.run_id, event.seq, n, uri));
  }
  if (event.type === "run_created" && event.seq === 0) writeCreatedRows(db, event);
}

/**
 * Writes what a `run_created` event implies ({@linkcode createdRows}): the run's fields, its settings, its agent
 * class and version, and its experiment and version. A class or version that exists keeps its first run.
 *
 * @param db The open database, inside a transaction.
 * @param event The run's `run_created` event.
 */
export function writeCreatedRows(db: SqlDb, event: EvidenceEvent): void {
  const runId = event.run_id;
  const { fields, params, agent, experiment } = createdRows(event);
  db.prepare(
    `UPDATE provevi_runs SET ${RUN_FIELD_COLUMNS.map((c) => `${c} = ?`).join(", ")} WHERE run_id = ?`,
  ).run(...RUN_FIELD_COLUMNS.map((c) => fields[c]), runId);
  db.prepare("DELETE FROM provevi_run_params WHERE run_id = ?").run(runId);
  const param = db.prepare("INSERT INTO provevi_run_params (run_id, key, value) VALUES (?, ?, ?)");
  for (const [key, value] of params) param.run(runId, key, value);
  if (agent) {
    db.prepare(
      `INSERT OR IGNORE INTO provevi_agents (agent, org, domain, env, name, first_run)
       VALUES (?, ?, ?, ?, ?, ?)`,
    ).run(agent.agent, agent.org, agent.domain, agent.env, agent.name, runId);
    db.prepare(
      `INSERT OR IGNORE INTO provevi_agent_versions (agent, version, backend, model, tools, limits, first_run)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ).run(agent.agent, agent.version, agent.backend, agent.model, agent.tools, agent.limits, runId);
  }
  if (experiment) {
    db.prepare("INSERT OR IGNORE INTO provevi_experiments (experiment, first_run) VALUES (?, ?)")
      .run(experiment.experiment, runId);
    if (experiment.pin) {
      db.prepare(
        `INSERT OR IGNORE INTO provevi_experiment_versions (experiment, pin, sha256, first_run)
         VALUES (?, ?, ?, ?)`,
      ).run(experiment.experiment, experiment.pin, experiment.sha256, runId);
    }
  }
}

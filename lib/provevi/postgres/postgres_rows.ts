/**
 * Writing the rows of a run into the postgres store: the event's rows in one statement, and what a
 * `run_created` event implies. The rows themselves are defined store-neutrally in `store/store_rows.ts`.
 * @module
 */
import type postgres from "postgres";
import type { EvidenceEvent } from "../evidence/event.ts";
import {
  createdRows,
  EVENT_COLUMNS,
  eventRefs,
  eventRow,
  RUN_FIELD_COLUMNS,
  type SqlValue,
} from "../store/store_rows.ts";

/** A connection pool or a transaction of `npm:postgres`. */
export type PgSql = postgres.Sql | postgres.TransactionSql;

/** A parameter list for `sql.unsafe`. */
type Params = (string | number | null)[];

/** The placeholders `$from, $from+1, …` for `n` values. */
const places = (from: number, n: number) => Array.from({ length: n }, (_, i) => `$${from + i}`).join(", ");

/**
 * The statement that writes one event's rows, its line, its URIs and, for an ending event, the run's status:
 * one statement, so one round trip, committed whole or not at all.
 *
 * @param event The parsed event.
 * @param line Its canonical line.
 * @param end The run's new status and end, when the event changes them.
 * @returns The SQL text and its parameters.
 */
export function eventStatement(
  event: EvidenceEvent,
  line: string,
  end: { status: string; ended_at: string | null } | null,
): { text: string; params: Params } {
  const row = eventRow(event, line);
  const params: Params = [...EVENT_COLUMNS.map((c) => row[c] as SqlValue), line];
  const n = params.length;
  let text = `WITH e AS (INSERT INTO provevi_events (${EVENT_COLUMNS.join(", ")}, line) VALUES (${
    places(1, n)
  }))`;
  const refs = eventRefs(event);
  if (refs.length) {
    params.push(JSON.stringify(refs));
    text += `, r AS (INSERT INTO provevi_event_refs (run_id, seq, n, uri)
      SELECT $${EVENT_COLUMNS.indexOf("run_id") + 1}, $${
      EVENT_COLUMNS.indexOf("seq") + 1
    }, (t.n - 1)::int, t.uri
      FROM jsonb_array_elements_text($${params.length}::text::jsonb) WITH ORDINALITY AS t(uri, n))`;
  }
  if (end) {
    params.push(end.status, end.ended_at);
    text += `, u AS (UPDATE provevi_runs SET status = $${params.length - 1}, ended_at = $${params.length}
      WHERE run_id = $${EVENT_COLUMNS.indexOf("run_id") + 1})`;
  }
  return { text: `${text} SELECT 1`, params };
}

/**
 * Writes what a `run_created` event implies ({@linkcode createdRows}): the run's fields, its settings, its
 * agent class and version, and its experiment and version. A class or version that exists keeps its first run,
 * whichever writer came first.
 *
 * @param sql A transaction.
 * @param event The run's `run_created` event.
 */
export async function writeCreatedRowsPg(sql: PgSql, event: EvidenceEvent): Promise<void> {
  const runId = event.run_id;
  const { fields, params, agent, experiment } = createdRows(event);
  await sql.unsafe(
    `UPDATE provevi_runs SET ${RUN_FIELD_COLUMNS.map((c, i) => `${c} = $${i + 1}`).join(", ")}
     WHERE run_id = $${RUN_FIELD_COLUMNS.length + 1}`,
    [...RUN_FIELD_COLUMNS.map((c) => fields[c]), runId],
  );
  await sql.unsafe("DELETE FROM provevi_run_params WHERE run_id = $1", [runId]);
  for (const [key, value] of params) {
    await sql.unsafe("INSERT INTO provevi_run_params (run_id, key, value) VALUES ($1, $2, $3)", [
      runId,
      key,
      value,
    ]);
  }
  if (agent) {
    await sql.unsafe(
      `INSERT INTO provevi_agents (agent, org, domain, env, name, first_run) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT DO NOTHING`,
      [agent.agent, agent.org, agent.domain, agent.env, agent.name, runId],
    );
    await sql.unsafe(
      `INSERT INTO provevi_agent_versions (agent, version, backend, model, tools, limits, first_run)
       VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
      [agent.agent, agent.version, agent.backend, agent.model, agent.tools, agent.limits, runId],
    );
  }
  if (experiment) {
    await sql.unsafe(
      "INSERT INTO provevi_experiments (experiment, first_run) VALUES ($1, $2) ON CONFLICT DO NOTHING",
      [experiment.experiment, runId],
    );
    if (experiment.pin) {
      await sql.unsafe(
        `INSERT INTO provevi_experiment_versions (experiment, pin, sha256, first_run) VALUES ($1, $2, $3, $4)
         ON CONFLICT DO NOTHING`,
        [experiment.experiment, experiment.pin, experiment.sha256, runId],
      );
    }
  }
}

/**
 * A query written with `?` placeholders, as the shared check and the questions write them, in PostgreSQL's
 * `$1, $2, …`. The queries hold no `?` inside a string.
 *
 * @param text The query.
 * @returns The query with numbered placeholders.
 */
export function numbered(text: string): string {
  let i = 0;
  return text.replace(/\?/g, () => `$${++i}`);
}

/**
 * The postgres store's assessments as it writes them: a run, an event or a span that it holds, or an experiment
 * (or one version of it) that its runs named, checked, then one row of `provevi_assessments`.
 * @module
 */
import { ProveviError, RunNotFound } from "../evidence/errors.ts";
import { nowUtc } from "../evidence/event.ts";
import {
  type Assessment,
  assessmentTarget,
  type AssessmentTargetOf,
  assessmentValue,
  type AssessOptions,
  type AssessTarget,
  namedExperiment,
} from "../store/assess.ts";
import type { RowSource } from "../store/row_check.ts";
import { columnText, columnValue } from "../store/store_rows.ts";
import type { PgSql } from "./postgres_rows.ts";

/**
 * Writes one assessment.
 *
 * @param sql The store's connection, open to write.
 * @param rows The store's reader of rows, to check the target.
 * @param write The store, for errors, and what the assessment judges, its name, value and options.
 * @returns The assessment as stored (its texts as a column holds them).
 * @throws ProveviError when the run, event, span, experiment or version is not in the store, or the name or
 * value cannot be kept; RunNotFound for a run the store lacks.
 */
export async function writeAssessmentPg(
  sql: PgSql,
  rows: RowSource,
  write: {
    storeUri: string;
    judgement: { target: AssessTarget; name: string; value: unknown; options: AssessOptions };
  },
): Promise<Assessment> {
  const { name, value, options } = write.judgement;
  const t = await assessed(rows, write.storeUri, assessmentTarget(write.judgement.target));
  const json = assessmentValue(name, value);
  const created_at = nowUtc();
  const rationale = columnValue(options.rationale ?? null), source = columnValue(options.source ?? null);
  const [row] = await sql.unsafe(
    `INSERT INTO provevi_assessments (run_id, seq, span_id, experiment, name, value, rationale, source, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
    [t.run_id, t.seq, t.span_id, t.experiment, name, json, rationale, source, created_at].map(columnValue),
  );
  return {
    id: Number(row!.id),
    ...t,
    name: columnText(name),
    value: JSON.parse(json),
    rationale,
    source,
    created_at,
  };
}

/** The target as the store holds it: a run, event or span it has, or an experiment (or version) runs named. */
async function assessed(
  rows: RowSource,
  storeUri: string,
  t: AssessmentTargetOf,
): Promise<AssessmentTargetOf> {
  const found = async (text: string, ...params: (string | number | null)[]) =>
    (await rows.all(text, ...params)).length > 0;
  if (t.experiment !== null) {
    const written = columnText(t.experiment);
    const base = written.replace(/[?#].*$/, "");
    const known = (await rows.all("SELECT experiment FROM provevi_experiments ORDER BY experiment"))
      .map((r) => String(r.experiment));
    const experiment = namedExperiment(base, known, `store ${storeUri}`) + written.slice(base.length);
    if (
      written !== base &&
      !(await found("SELECT 1 AS found FROM provevi_experiment_versions WHERE pin = ?", experiment))
    ) {
      throw new ProveviError(
        `no run in store ${storeUri} used the version ${experiment}; prove experiment show lists its versions`,
      );
    }
    return { ...t, experiment };
  }
  if (!(await found("SELECT 1 AS found FROM provevi_runs WHERE run_id = ?", t.run_id))) {
    throw new RunNotFound(`no run "${t.run_id}" in store ${storeUri} to assess`);
  }
  if (
    t.seq !== null &&
    !(await found("SELECT 1 AS found FROM provevi_events WHERE run_id = ? AND seq = ?", t.run_id, t.seq))
  ) {
    throw new ProveviError(`run "${t.run_id}" has no event ${t.seq} in store ${storeUri}`);
  }
  if (
    t.span_id !== null &&
    !(await found(
      "SELECT 1 AS found FROM provevi_events WHERE span_id = ? AND run_id = ? LIMIT 1",
      t.span_id,
      t.run_id,
    ))
  ) {
    throw new ProveviError(`run "${t.run_id}" has no span ${t.span_id} in store ${storeUri}`);
  }
  return t;
}

/**
 * The sqlite store's assessments as it writes them: a run, an event or a span that it holds, or an experiment
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
import { columnText, columnValue } from "../store/store_rows.ts";
import { transaction } from "./sqlite_connection.ts";
import type { DatabaseSync } from "node:sqlite";

/**
 * Writes one assessment.
 *
 * @param db The store's connection, open to write.
 * @param storeUri The store, for errors.
 * @param judgement What it judges, its name, value and options.
 * @returns The assessment as stored (its texts as a column holds them).
 * @throws ProveviError when the run, event, span, experiment or version is not in the store, or the name or
 * value cannot be kept; RunNotFound for a run the store lacks.
 */
export function writeAssessment(
  db: DatabaseSync,
  storeUri: string,
  judgement: { target: AssessTarget; name: string; value: unknown; options: AssessOptions },
): Assessment {
  const { name, value, options } = judgement;
  const t = assessed(db, storeUri, assessmentTarget(judgement.target));
  const json = assessmentValue(name, value);
  const created_at = nowUtc();
  // Texts as a column holds them (columnText): the assessment returned is the one stored.
  const held = { name: columnText(name), rationale: columnValue(options.rationale ?? null) };
  const source = columnValue(options.source ?? null);
  const id = transaction(db, () =>
    Number(
      (db.prepare(
        `INSERT INTO provevi_assessments (run_id, seq, span_id, experiment, name, value, rationale, source, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        t.run_id,
        t.seq,
        t.span_id,
        t.experiment,
        held.name,
        json,
        held.rationale,
        source,
        created_at,
      ) as {
        lastInsertRowid: number | bigint;
      }).lastInsertRowid,
    ));
  return {
    id,
    ...t,
    name: held.name,
    value: JSON.parse(json),
    rationale: held.rationale,
    source,
    created_at,
  };
}

/** The target as the store holds it: a run, event or span it has, or an experiment (or version) runs named. */
function assessed(db: DatabaseSync, storeUri: string, t: AssessmentTargetOf): AssessmentTargetOf {
  if (t.experiment !== null) {
    const written = columnText(t.experiment);
    const base = written.replace(/[?#].*$/, "");
    const known = (db.prepare("SELECT experiment FROM provevi_experiments ORDER BY experiment").all() as {
      experiment: string;
    }[]).map((r) => r.experiment);
    const experiment = namedExperiment(base, known, `store ${storeUri}`) + written.slice(base.length);
    if (
      written !== base &&
      !db.prepare("SELECT 1 FROM provevi_experiment_versions WHERE pin = ?").get(experiment)
    ) {
      throw new ProveviError(
        `no run in store ${storeUri} used the version ${experiment}; prove experiment show lists its versions`,
      );
    }
    return { ...t, experiment };
  }
  if (!db.prepare("SELECT 1 FROM provevi_runs WHERE run_id = ?").get(t.run_id)) {
    throw new RunNotFound(`no run "${t.run_id}" in store ${storeUri} to assess`);
  }
  if (
    t.seq !== null &&
    !db.prepare("SELECT 1 FROM provevi_events WHERE run_id = ? AND seq = ?").get(t.run_id, t.seq)
  ) {
    throw new ProveviError(`run "${t.run_id}" has no event ${t.seq} in store ${storeUri}`);
  }
  if (
    t.span_id !== null &&
    !db.prepare("SELECT 1 FROM provevi_events WHERE span_id = ? AND run_id = ? LIMIT 1").get(
      t.span_id,
      t.run_id,
    )
  ) {
    throw new ProveviError(`run "${t.run_id}" has no span ${t.span_id} in store ${storeUri}`);
  }
  return t;
}

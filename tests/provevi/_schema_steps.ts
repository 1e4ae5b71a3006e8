/**
 * A store's schema taken back one step, as an older provevi left it, to test the step that upgrades it: the
 * statements that undo step 6 (the assessments of an experiment, the index of events by trace).
 * @module
 */

/** What version 6 held that step 7 changes, in SQLite: the assessments of runs only, and no index by trace. */
export const SQLITE_BACK_TO_6 = `
DROP INDEX provevi_events_trace;
DROP INDEX provevi_assessments_experiment;
CREATE TABLE provevi_assessments_v6 (
  id INTEGER PRIMARY KEY,
  run_id TEXT NOT NULL, seq INTEGER, span_id TEXT,
  name TEXT NOT NULL, value TEXT NOT NULL, rationale TEXT, source TEXT,
  created_at TEXT NOT NULL
);
INSERT INTO provevi_assessments_v6 (id, run_id, seq, span_id, name, value, rationale, source, created_at)
  SELECT id, run_id, seq, span_id, name, value, rationale, source, created_at FROM provevi_assessments;
DROP TABLE provevi_assessments;
ALTER TABLE provevi_assessments_v6 RENAME TO provevi_assessments;
CREATE INDEX provevi_assessments_run ON provevi_assessments (run_id);
UPDATE provevi_meta SET value = '6' WHERE key = 'schema_version';
`;

/** The same in PostgreSQL. */
export const POSTGRES_BACK_TO_6 = `
DROP INDEX provevi_events_trace;
DROP INDEX provevi_assessments_experiment;
ALTER TABLE provevi_assessments DROP CONSTRAINT provevi_assessments_experiment_whole;
ALTER TABLE provevi_assessments DROP CONSTRAINT provevi_assessments_target;
ALTER TABLE provevi_assessments DROP COLUMN experiment;
ALTER TABLE provevi_assessments ALTER COLUMN run_id SET NOT NULL;
UPDATE provevi_meta SET value = '6' WHERE key = 'schema_version';
`;

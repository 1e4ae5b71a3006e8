/**
 * The file store's assessments: a sealed run's judgements in its folder's `assessments.jsonl`, hash-chained from
 * the run's seal (the format is `evidence/assessments_file.ts`'s). An experiment's assessments need an index of
 * experiments, which the file store does not keep, so it refuses them.
 * @module
 */
import {
  appendAssessmentLine,
  type AssessmentLine,
  checkAssessmentsFile,
} from "../evidence/assessments_file.ts";
import { NeedsIndexedStore, ProveviError, RunNotFound } from "../evidence/errors.ts";
import { nowUtc } from "../evidence/event.ts";
import { manifestLastHash } from "../evidence/manifest.ts";
import type { RunRecord } from "../evidence/record.ts";
import { readEventsText } from "../evidence/read_events.ts";
import {
  type Assessment,
  assessmentTarget,
  assessmentValue,
  type AssessOptions,
  type AssessTarget,
} from "./assess.ts";

/** The seqs and span IDs of a run's events, which an assessment may judge. */
async function targetsOf(record: RunRecord): Promise<{ seqs: Set<number>; spans: Set<string> }> {
  const text = await record.eventsText().catch(() => null);
  const events = text === null ? [] : readEventsText(text).events;
  return {
    seqs: new Set(events.map((e) => e.seq)),
    spans: new Set(events.map((e) => e.span_id).filter((s): s is string => s !== null)),
  };
}

const asAssessment = (a: AssessmentLine): Assessment => ({
  id: a.id,
  run_id: a.run_id,
  seq: a.seq,
  span_id: a.span_id,
  experiment: null,
  name: a.name,
  value: a.value,
  rationale: a.rationale,
  source: a.source,
  created_at: a.created_at,
});

/**
 * Writes an assessment of a sealed run of the file store, or of one of its events or spans, to the run folder's
 * `assessments.jsonl`.
 *
 * @param readRun How the store reads a run.
 * @param target What it judges.
 * @param judgement The name, the value and the options.
 * @returns The assessment as written.
 * @throws NeedsIndexedStore for an experiment; RunNotFound for a run the store lacks; ProveviError for a run that
 * is not sealed, an event or span it lacks, or a bad name or value.
 */
export async function assessInFolder(
  readRun: (runId: string) => Promise<RunRecord>,
  target: AssessTarget,
  judgement: { name: string; value: unknown; options: AssessOptions },
): Promise<Assessment> {
  const t = assessmentTarget(target);
  if (t.run_id === null) {
    throw new NeedsIndexedStore(
      "an assessment of an experiment",
    );
  }
  const json = assessmentValue(judgement.name, judgement.value);
  const record = await readRun(t.run_id);
  if (record.folder === null) {
    throw new RunNotFound(`run "${t.run_id}" has no folder to keep its assessments in`);
  }
  const lastHash = manifestLastHash(await record.manifestText().catch(() => null));
  if (lastHash === null) {
    throw new ProveviError(
      `run "${t.run_id}" is not sealed: the file store chains a run's assessments from its seal; assess it once it ends`,
    );
  }
  const { seqs, spans } = await targetsOf(record);
  if (t.seq !== null && !seqs.has(t.seq)) throw new ProveviError(`run "${t.run_id}" has no event ${t.seq}`);
  if (t.span_id !== null && !spans.has(t.span_id)) {
    throw new ProveviError(`run "${t.run_id}" has no span ${t.span_id}: no event names it`);
  }
  const line = await appendAssessmentLine(record.folder, lastHash, {
    run_id: t.run_id,
    seq: t.seq,
    span_id: t.span_id,
    name: judgement.name,
    value: JSON.parse(json),
    rationale: judgement.options.rationale ?? null,
    source: judgement.options.source ?? null,
    created_at: nowUtc(),
  });
  return asAssessment(line);
}

/**
 * The assessments of a run of the file store, oldest first: the lines of its `assessments.jsonl` that read as
 * assessments of this run (`prove verify` reports the rest, and a chain that does not hold).
 *
 * @param record The run.
 * @returns Its assessments; none when its folder has no `assessments.jsonl`.
 * @example
 * ```ts
 * import { assessmentsInFolder, FileStore } from "../mod.ts";
 * await using store = new FileStore({ runs: "fixtures/runs" });
 * await assessmentsInFolder(await store.readRun("run-20261129T120000Z-0badc0de")); // []
 * ```
 */
export async function assessmentsInFolder(record: RunRecord): Promise<Assessment[]> {
  if (record.folder === null) return [];
  const { assessments } = await checkAssessmentsFile(record.folder, {
    runId: record.runId,
    lastHash: null,
    seqs: new Set(),
    spans: new Set(),
  });
  return assessments.filter((a) => a.run_id === record.runId).map(asAssessment);
}

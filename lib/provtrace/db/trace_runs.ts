/**
 * The runs a trace database holds, each with its source and the build that added it.
 * @module
 */
import type { DatabaseSync } from "node:sqlite";

/** One run of the trace database, as `provtrace runs` lists it. */
export interface TraceRunSummary {
  run_id: string;
  status: string;
  agent: string | null;
  model: string | null;
  experiment: string | null;
  /** The number of model calls, and of tool calls. */
  model_calls: number;
  tool_calls: number;
  /** The cost the run recorded (its last event's), a decimal text, or null. */
  cost: string | null;
  store_uri: string;
  last_hash: string;
  verified: boolean;
  /** The problems of a run added with `--allow-unverified`. */
  problems: string[];
  build_version: string;
  built_at: string;
}

/**
 * Lists the runs of a trace database, oldest first.
 *
 * @param db An open trace database.
 * @returns One summary per run.
 * @example
 * ```ts
 * import { openTraceDb, traceRuns } from "./mod.ts";
 * using trace = openTraceDb("/tmp/trace.db", { write: true });
 * console.log(traceRuns(trace.db));
 * ```
 */
export function traceRuns(db: DatabaseSync): TraceRunSummary[] {
  const rows = db.prepare(`
    SELECT s.run_id, r.status, r.agent, r.model, r.experiment, r.cost,
      (SELECT count(*) FROM trace_model_calls c WHERE c.run_id = s.run_id) AS model_calls,
      (SELECT count(*) FROM trace_tool_calls t WHERE t.run_id = s.run_id) AS tool_calls,
      s.store_uri, s.last_hash, s.verified, s.problems, s.build_version, s.built_at
    FROM trace_sources s JOIN trace_runs r ON r.run_id = s.run_id
    ORDER BY r.started_at, s.run_id`).all() as Record<string, string | number | null>[];
  return rows.map((r) => ({
    run_id: String(r.run_id),
    status: String(r.status),
    agent: r.agent === null ? null : String(r.agent),
    model: r.model === null ? null : String(r.model),
    experiment: r.experiment === null ? null : String(r.experiment),
    model_calls: Number(r.model_calls),
    tool_calls: Number(r.tool_calls),
    cost: r.cost === null ? null : String(r.cost),
    store_uri: String(r.store_uri),
    last_hash: String(r.last_hash),
    verified: r.verified === 1,
    problems: JSON.parse(String(r.problems)),
    build_version: String(r.build_version),
    built_at: String(r.built_at),
  }));
}

/**
 * The runs page's data: one page of a store's runs, newest first, with filters for status, agent, experiment
 * and time. A sqlite store answers with one indexed query and one count; the file store has no index, so it
 * reads each run's first and last event (fine for the few hundred runs a file store holds).
 * @module
 */
import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import type { EvidenceEvent } from "../evidence/event.ts";
import type { EvidenceStore } from "../store/store.ts";
import type { RunSummary } from "../store/store_questions.ts";

/** The filters and the page of {@linkcode runsPage}. */
export interface RunsQuery {
  /** `completed`, `failed`, `running` or `incomplete`. */
  status?: string;
  /** An agent class, `org/domain/env/name`, or its name alone. */
  agent?: string;
  /** An experiment URI; a pinned one (`?at=…`) names one version. */
  experiment?: string;
  /** Runs started at or after this UTC time (RFC 3339, or a prefix such as `2026-11-30`). */
  since?: string;
  /** Runs started before this UTC time. */
  until?: string;
  /** How many runs on a page (1 to 500; 50 by default). */
  limit?: number;
  /** How many runs to skip. */
  offset?: number;
}

/** One page of runs. */
export interface RunsPage {
  runs: RunSummary[];
  /** The number of runs that pass the filters. */
  total: number;
  limit: number;
  offset: number;
}

/** The SQL of a page, for the store and for the benchmark's reference query. */
export function runsPageSql(query: RunsQuery): { where: string; params: string[] } {
  const clauses: string[] = [];
  const params: string[] = [];
  if (query.status) {
    clauses.push("status = ?");
    params.push(query.status);
  }
  if (query.agent) {
    if (query.agent.split("/").length === 4) {
      clauses.push("agent = ?");
      params.push(query.agent);
    } else {
      clauses.push("agent IN (SELECT agent FROM provevi_agents WHERE name = ?)");
      params.push(query.agent);
    }
  }
  if (query.experiment) {
    clauses.push(query.experiment.includes("?at=") ? "experiment_pin = ?" : "experiment = ?");
    params.push(query.experiment);
  }
  if (query.since) {
    clauses.push("started_at >= ?");
    params.push(query.since);
  }
  if (query.until) {
    clauses.push("started_at < ?");
    params.push(query.until);
  }
  return { where: clauses.length ? `WHERE ${clauses.join(" AND ")}` : "", params };
}

/**
 * One page of a store's runs, newest first.
 *
 * @param store The store.
 * @param query The filters and the page.
 * @returns The runs of the page and the number that pass the filters.
 * @example
 * ```ts
 * import { runsPage } from "./runs_query.ts";
 * import { FileStore } from "../store/file_store.ts";
 * const page = await runsPage(new FileStore({ runs: "fixtures/runs" }), { status: "completed", limit: 20 });
 * ```
 */
export async function runsPage(store: EvidenceStore, query: RunsQuery = {}): Promise<RunsPage> {
  const limit = Math.min(Math.max(Math.trunc(query.limit ?? 50), 1), 500);
  const offset = Math.max(Math.trunc(query.offset ?? 0), 0);
  const db = (store as { db?: DatabaseSync }).db;
  if (db) {
    const { where, params } = runsPageSql(query);
    const runs = db.prepare(
      `SELECT run_id, agent, agent_version, experiment, experiment_pin, status, started_at, ended_at
       FROM provevi_runs ${where} ORDER BY run_id DESC LIMIT ? OFFSET ?`,
    ).all(...params, limit, offset) as unknown as RunSummary[];
    const total =
      (db.prepare(`SELECT count(*) AS n FROM provevi_runs ${where}`).get(...params) as { n: number })
        .n;
    return { runs, total, limit, offset };
  }
  const ids = (await store.runIds()).sort().reverse();
  const filtered = query.status || query.agent || query.experiment || query.since || query.until;
  if (!filtered) {
    const runs = await Promise.all(ids.slice(offset, offset + limit).map((id) => fileSummary(store, id)));
    return { runs, total: ids.length, limit, offset };
  }
  const all = await Promise.all(ids.map((id) => fileSummary(store, id)));
  const kept = all.filter((r) => passes(r, query));
  return { runs: kept.slice(offset, offset + limit), total: kept.length, limit, offset };
}

function passes(r: RunSummary, q: RunsQuery): boolean {
  if (q.status && r.status !== q.status) return false;
  if (q.agent && r.agent !== q.agent && !(r.agent ?? "").endsWith(`/${q.agent}`)) return false;
  if (q.experiment && (q.experiment.includes("?at=") ? r.experiment_pin : r.experiment) !== q.experiment) {
    return false;
  }
  if (q.since && (r.started_at ?? "") < q.since) return false;
  if (q.until && (r.started_at ?? "") >= q.until) return false;
  return true;
}

/** A run's summary from its folder: its first and last events and whether it was sealed. */
async function fileSummary(store: EvidenceStore, runId: string): Promise<RunSummary> {
  const summary: RunSummary = {
    run_id: runId,
    agent: null,
    agent_version: null,
    experiment: null,
    experiment_pin: null,
    status: "unreadable",
    started_at: null,
    ended_at: null,
  };
  try {
    const record = await store.readRun(runId);
    const text = await record.eventsText();
    if (text === null) return summary;
    const lines = text.split("\n").filter((l) => l !== "");
    const first = JSON.parse(lines[0] ?? "null") as EvidenceEvent | null;
    const last = JSON.parse(lines.at(-1) ?? "null") as EvidenceEvent | null;
    const d = first?.data ?? {};
    const str = (v: unknown) => (typeof v === "string" ? v : null);
    const name = str(d.agent);
    summary.agent = name && str(d.org) ? `${d.org}/${d.domain}/${d.env}/${name}` : name;
    summary.agent_version = str(d.agent_version);
    summary.experiment = str(d.experiment);
    summary.experiment_pin = str(d.experiment_pin);
    summary.started_at = first?.time ?? null;
    if (last?.type === "run_completed" || last?.type === "run_failed") {
      summary.status = last.type === "run_completed" ? "completed" : "failed";
      summary.ended_at = last.time;
    } else {
      const sealed = record.folder !== null &&
        await Deno.stat(join(record.folder, "evidence", "manifest.json")).then(() => true, () => false);
      summary.status = sealed ? "incomplete" : "running";
    }
  } catch { /* an unreadable run shows as such; its page says why */ }
  return summary;
}

/**
 * The check of a trace database against the evidence it came from: the file's own structure (its schema, rows
 * that belong to no run, and texts whose bytes are not the text read), then each run with {@linkcode checkTraceRun}: its store's last hash and chain,
 * its verification, and its rows compared with the rows its evidence gives.
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import type { Catalog } from "../../provcat/mod.ts";
import {
  openTraceDb,
  readRowsKey,
  storedTextProblems,
  TRACE_RUN_TABLES,
  TRACE_SCHEMA_VERSION,
  traceSchemaProblems,
} from "../db/mod.ts";
import { checkTraceRun, type TraceSourceCheck } from "./check_run.ts";
import { SourceStores, sourceWithEvidence, traceSources } from "./_source_stores.ts";
import { readAhead } from "./_read_ahead.ts";

/** The result of {@linkcode checkTrace}. */
export interface TraceCheck {
  /** True when the file's structure is whole and every run is as its source holds it. */
  ok: boolean;
  /** What is wrong with the file itself, one line each: its schema, rows of no run. */
  problems: string[];
  runs: TraceSourceCheck[];
}

/** How {@linkcode checkTrace} reads the sources. */
export interface CheckTraceOptions {
  /**
   * The runs root that runs are read from (the default one when absent): a run the file says was built from
   * another is refused, since the file does not choose the evidence it is checked against.
   */
  runs?: string;
  /** The store URIs that runs may be read from, as the build was given them; `file` alone by default. */
  stores?: readonly string[];
  /** The catalog that reads each run's committed bundle and experiment, as the build took it. */
  catalog?: Catalog | (() => Catalog | Promise<Catalog>);
  /**
   * The rows key's file: a run whose rows' MAC holds under it, over their digest and the store's manifest now,
   * is not built again. None by default; the CLI gives its default path.
   */
  keyFile?: string;
  /** Build every run again from its evidence and compare row by row, MAC or not (`--deep`). */
  deep?: boolean;
  /** Called after each run, for a progress line. */
  onProgress?: (done: number, total: number, runId: string) => void;
}

/**
 * Compares a trace database, and each of its runs, with the evidence it was built from.
 *
 * @param db The trace database's file.
 * @param options The runs root of a file store, the catalog, progress.
 * @returns `{ ok, problems, runs }`; it prints nothing.
 * @throws ProveviError when the database cannot be opened.
 * @example
 * ```ts
 * import { buildTrace, checkTrace } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const db = `${await Deno.makeTempDir()}/trace.db`;
 * await buildTrace({ store: "file", runs: "fixtures/runs", db });
 * const check = await checkTrace(db, { runs: "fixtures/runs" });
 * assert.equal(check.ok, true);
 * ```
 */
export async function checkTrace(db: string, options: CheckTraceOptions = {}): Promise<TraceCheck> {
  using trace = openTraceDb(db);
  const problems = [
    ...traceSchemaProblems(trace.db, TRACE_SCHEMA_VERSION),
    ...strayRows(trace.db),
    ...storedTextProblems(trace.db),
  ];
  const sources = traceSources(trace.db);
  const runs: TraceSourceCheck[] = [];
  const key = options.deep || options.keyFile === undefined ? null : await readRowsKey(options.keyFile);
  const each = { key, ...(options.catalog ? { catalog: options.catalog } : {}) };
  await using stores = new SourceStores(options);
  const take = readAhead(sources.length, (i) => sourceWithEvidence(stores, sources[i]!));
  for (const [i, s] of sources.entries()) {
    const { store, evidence } = await take(i);
    runs.push(
      typeof store === "string"
        ? {
          run_id: s.run_id,
          store_uri: s.store_uri,
          state: "unreadable",
          built_from: s.last_hash,
          now: null,
          where: null,
          verified: false,
          problem: store,
        }
        : await checkTraceRun(trace.db, s, store, { ...each, evidence: evidence! }),
    );
    options.onProgress?.(i + 1, sources.length, s.run_id);
  }
  return { ok: problems.length === 0 && runs.every((r) => r.state === "same"), problems, runs };
}

/** Rows whose run the file does not hold (no `trace_sources` row), and messages that no call links to. */
function strayRows(db: DatabaseSync): string[] {
  const out: string[] = [];
  for (const table of TRACE_RUN_TABLES) {
    if (table === "trace_sources") continue;
    const stray = db.prepare(
      `SELECT count(*) AS n, min(run_id) AS run FROM ${table} WHERE run_id NOT IN (SELECT run_id FROM trace_sources)`,
    ).get() as { n: number; run: string | null };
    if (stray.n > 0) {
      out.push(
        `${table} holds ${stray.n} row${
          stray.n === 1 ? "" : "s"
        } of runs the database does not hold, such as ${
          JSON.stringify(stray.run)
        }; build again into a new file`,
      );
    }
  }
  const loose = db.prepare(
    "SELECT count(*) AS n FROM trace_messages m WHERE NOT EXISTS (SELECT 1 FROM trace_call_messages c WHERE c.message_hash = m.hash)",
  ).get() as { n: number };
  if (loose.n > 0) {
    out.push(
      `trace_messages holds ${loose.n} message${
        loose.n === 1 ? "" : "s"
      } that no model call links to; build again into a new file`,
    );
  }
  return out;
}

/**
 * The build: each sealed run of a provevi store that the trace database lacks (or one run, again), checked
 * with provevi's `verifyRun` first, then written in one transaction with its source.
 * @module
 */
import type { DatabaseSync, StatementSync } from "node:sqlite";
import type { Catalog } from "../../provcat/mod.ts";
import {
  type Assessment,
  type EvidenceStore,
  NeedsIndexedStore,
  openStore,
  ProveviError,
  readEventsText,
  sha256Hex,
  verifyRun,
} from "../../provevi/mod.ts";
import { openTraceDb, TRACE_BUILD_VERSION, TRACE_RUN_TABLES } from "../db/mod.ts";
import { runRows, type TraceRow, type TraceRunRows } from "./run_rows.ts";

/** What {@linkcode buildTrace} builds from, and how. */
export interface TraceBuildOptions {
  /** The provevi store's URI, such as `file`, `sqlite:///evidence.db` or `postgresql://ada@db:5432/evidence`; it is opened only to read. */
  store: string;
  /** The trace database's file; made in WAL mode when it does not exist. */
  db: string;
  /** The runs root of the store. */
  runs?: string;
  /** Build only this run, again: its rows are replaced. */
  runId?: string;
  /** Add a run that does not verify, marked unverified with its problems. */
  allowUnverified?: boolean;
  /** The catalog that reads a run's committed bundle and experiment, as `verifyRun` takes it. */
  catalog?: Catalog | (() => Catalog | Promise<Catalog>);
  /** Called after each run, for a progress line. */
  onProgress?: (done: number, total: number, runId: string) => void;
}

/** One run the build added. */
export interface TraceBuiltRun {
  run_id: string;
  /** False when `allowUnverified` added a run that does not verify. */
  verified: boolean;
  /** The problems of a run added unverified. */
  problems: string[];
  /** The number of rows written for the run. */
  rows: number;
}

/** What a build did. */
export interface TraceBuildResult {
  /** The runs added (or built again). */
  added: TraceBuiltRun[];
  /** Runs the database held already. */
  present: string[];
  /** Runs not sealed yet: they have no last hash, so they wait for a later build. */
  open: string[];
  /** Runs refused, each with why. */
  refused: { run_id: string; problems: string[] }[];
}

/**
 * Builds the trace database from a store's sealed runs.
 *
 * @param options The store, the database file, and what to build.
 * @returns What was added, skipped and refused; it prints nothing.
 * @throws ProveviError for a store or database that cannot be opened, or a `runId` that the store lacks or
 * that is not sealed.
 * @example
 * ```ts
 * import { buildTrace } from "./build.ts";
 * const result = await buildTrace({ store: "file", runs: "fixtures/runs", db: "/tmp/trace.db" });
 * console.log(result.added.length, result.refused);
 * ```
 */
export async function buildTrace(options: TraceBuildOptions): Promise<TraceBuildResult> {
  await using store = await openStore(options.store, {
    readOnly: true,
    ...(options.runs === undefined ? {} : { runs: options.runs }),
  });
  using trace = openTraceDb(options.db, { write: true });
  const db = trace.db;
  const result: TraceBuildResult = { added: [], present: [], open: [], refused: [] };
  const have = new Set(
    (db.prepare("SELECT run_id FROM trace_sources").all() as { run_id: string }[]).map((r) => r.run_id),
  );
  let ids: string[];
  if (options.runId !== undefined) ids = [options.runId];
  else {
    ids = [];
    for (const id of await store.runIds()) {
      if (have.has(id)) result.present.push(id);
      else ids.push(id);
    }
  }
  const writer = new RowWriter(db);
  // Runs are read and verified a few at a time (each waits on the disk), and written one at a time, in order.
  const prepared: Promise<Prepared>[] = [];
  const prepare = (i: number) => {
    if (i < ids.length) prepared[i] = prepareRun(store, ids[i]!, options).catch((error) => ({ error }));
  };
  for (let i = 0; i < AT_ONCE; i++) prepare(i);
  let done = 0;
  for (let i = 0; i < ids.length; i++) {
    const runId = ids[i]!;
    const ready = await prepared[i]!;
    delete prepared[i];
    prepare(i + AT_ONCE);
    if ("error" in ready) {
      await Promise.allSettled(prepared.filter(Boolean));
      throw ready.error;
    }
    if (ready.kind === "open") {
      if (options.runId !== undefined) {
        throw new ProveviError(
          `run ${runId} is not sealed yet, so it has no last hash; build it once it ends`,
        );
      }
      result.open.push(runId);
      continue;
    }
    if (ready.kind === "refused") result.refused.push({ run_id: runId, problems: ready.problems });
    else {
      const count = writer.writeRun(runId, ready.source, ready.rows, have.has(runId));
      result.added.push({
        run_id: runId,
        verified: ready.problems.length === 0,
        problems: ready.problems,
        rows: count,
      });
    }
    options.onProgress?.(++done, ids.length, runId);
  }
  return result;
}

/** How many runs are read and verified at once. */
const AT_ONCE = 8;

/** A run read, verified and mapped to rows, not yet written; or why not. */
type Prepared =
  | { kind: "open" }
  | { kind: "refused"; problems: string[] }
  | { kind: "ready"; source: TraceRow; rows: TraceRunRows; problems: string[] }
  | { error: unknown };

async function prepareRun(
  store: EvidenceStore,
  runId: string,
  options: TraceBuildOptions,
): Promise<Prepared> {
  const record = await store.readRun(runId);
  if ((await record.manifestText()) === null) return { kind: "open" };
  const check = await verifyRun(record, {
    store,
    ...(options.catalog === undefined ? {} : { catalog: options.catalog }),
  });
  // The trace database keeps the verdict's words for a person; what it acts on is check.ok.
  const messages = check.problems.map((p) => p.message);
  if (!check.ok && !options.allowUnverified) return { kind: "refused", problems: messages };
  const refused = (problems: string[]): Prepared => ({ kind: "refused", problems });
  const text = await record.eventsText();
  const manifestText = await record.manifestText();
  if (text === null || manifestText === null) {
    return refused(["the run's evidence went missing during the build"]);
  }
  const read = readEventsText(text);
  let lastHash: string | null = null;
  try {
    lastHash = (JSON.parse(manifestText) as { last_hash?: string | null }).last_hash ?? null;
  } catch {
    // a manifest that is not JSON is one of the check's problems; only --allow-unverified reaches here
  }
  const lastLine = read.lines.at(-1);
  if (check.ok && (lastLine === undefined || sha256Hex(lastLine) !== lastHash)) {
    return refused([
      "the run changed during the build (its last line no longer has the manifest's last hash)",
    ]);
  }
  if (!read.events.length) return refused([...messages, "the run has no events to build rows from"]);
  let assessments: Assessment[] = [];
  const questions = store as Partial<{ assessments(id: string): Promise<Assessment[]> }>;
  if (typeof questions.assessments === "function") {
    try {
      assessments = await questions.assessments.call(store, record.runId);
    } catch (error) {
      if (!(error instanceof NeedsIndexedStore)) throw error; // the file store keeps no assessments
    }
  }
  let rows: TraceRunRows;
  try {
    rows = await runRows({
      events: read.events,
      lines: read.lines,
      payload: (sha) => record.payload(sha),
      assessments,
    });
  } catch (error) {
    if (error instanceof ProveviError) return refused([...messages, error.message]);
    throw error;
  }
  const source: TraceRow = {
    run_id: record.runId,
    store_uri: store.uri,
    runs_root: store.runsRoot,
    last_hash: lastHash ?? sha256Hex(lastLine ?? ""),
    build_version: TRACE_BUILD_VERSION,
    built_at: new Date().toISOString(),
    verified: check.ok ? 1 : 0,
    problems: JSON.stringify(messages),
  };
  return { kind: "ready", source, rows, problems: messages };
}

/** Writes a run's rows in one transaction, with a prepared statement per table and set of columns. */
class RowWriter {
  #db: DatabaseSync;
  #statements = new Map<string, StatementSync>();
  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  #insert(table: string, row: TraceRow, verb = "INSERT"): number {
    const columns = Object.keys(row);
    const key = `${verb} ${table} ${columns.join(",")}`;
    let statement = this.#statements.get(key);
    if (!statement) {
      statement = this.#db.prepare(
        `${verb} INTO ${table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`,
      );
      this.#statements.set(key, statement);
    }
    return Number(statement.run(...Object.values(row)).changes);
  }

  /** Writes the run's rows (replacing any it had) and its source; all or nothing. @returns The rows written. */
  writeRun(runId: string, source: TraceRow, rows: TraceRunRows, replace: boolean): number {
    const db = this.#db;
    db.exec("BEGIN IMMEDIATE");
    try {
      if (replace) {
        for (const table of TRACE_RUN_TABLES) db.prepare(`DELETE FROM ${table} WHERE run_id = ?`).run(runId);
      }
      let n = 0;
      this.#insert("trace_sources", source);
      this.#insert("trace_runs", rows.run);
      n += 2;
      for (
        const list of [
          ["trace_spans", rows.spans],
          ["trace_model_calls", rows.modelCalls],
          ["trace_call_messages", rows.callMessages],
          ["trace_tool_calls", rows.toolCalls],
          ["trace_access", rows.access],
          ["trace_assessments", rows.assessments],
        ] as const
      ) {
        for (const row of list[1]) this.#insert(list[0], row);
        n += list[1].length;
      }
      for (const m of rows.messages) {
        const p = m.part as { text?: string; tool_call_id?: string | null; tool_name?: string | null };
        n += this.#insert("trace_messages", {
          hash: m.hash,
          role: m.role,
          part_kind: m.part.kind,
          text: p.text ?? null,
          tool_call_id: p.tool_call_id ?? null,
          tool_name: p.tool_name ?? null,
          content: m.content,
        }, "INSERT OR IGNORE");
      }
      if (replace) {
        db.exec(
          "DELETE FROM trace_messages WHERE NOT EXISTS (SELECT 1 FROM trace_call_messages c WHERE c.message_hash = trace_messages.hash)",
        );
      }
      db.exec("COMMIT");
      return n;
    } catch (error) {
      if (db.isTransaction) db.exec("ROLLBACK");
      throw error;
    }
  }
}

/**
 * The postgres store: the evidence of many runs, from many processes and machines, in one PostgreSQL
 * database, with the run folders on the machine that ran each run (the store records where). Each event is a
 * row, committed only once its line is in the run's `events.jsonl`, and its line is taken back when the row
 * cannot be committed.
 * @module
 */
import type { Problem } from "../evidence/problem.ts";
import type { ReadEvents } from "../evidence/read_events.ts";
import type postgres from "postgres";
import { join } from "node:path";
import { EvidenceError, ProveviError, RunNotFound } from "../evidence/errors.ts";
import { FileRunRecord, FileRunWriter } from "../store/file_store.ts";
import { appendSpansFile, type SpansFile, type StoredSpan } from "../evidence/spans_file.ts";
import type { PayloadLayout } from "../evidence/manifest.ts";
import { runsRoot } from "../evidence/runs_root.ts";
import { checkRunId, checkRunIdToRead, type RunRecord } from "../evidence/record.ts";
import type { EvidenceStore, RunWriter } from "../store/store.ts";
import { columnValue, sealRowOfFolder, type SqlValue } from "../store/store_rows.ts";
import { missingRows } from "../store/complete_rows.ts";
import { checkStoreRows, type RowSource } from "../store/row_check.ts";
import { folderOrRefused, pathColumn } from "../store/row_reading.ts";
import type { Assessment, AssessOptions, AssessTarget } from "../store/assess.ts";
import type { TraceSpan } from "../evidence/run_spans.ts";
import { traceIdOf } from "../store/trace.ts";
import { traceOfRuns } from "../store/_trace_of_runs.ts";
import { writeAssessmentPg } from "./postgres_assess.ts";
import type * as Q from "../store/store_questions.ts";
import type { StoreQuestions } from "../store/store_questions.ts";
import { openPostgres, pgCode, pgMessage } from "./postgres_connection.ts";
import { postgresTarget, type PostgresTargetOptions } from "./postgres_uri.ts";
import { eventStatement, numbered, type PgSql, writeCreatedRowsPg } from "./postgres_rows.ts";
import { postgresSchemaProblems } from "./postgres_schema.ts";
import { eventLinesQuery, type EventLinesRow, eventsTextOfRows } from "../evidence/events_rows.ts";
import * as q from "./postgres_questions.ts";
import type { RowsLog } from "../log/rows_log.ts";
import { appendLogPg, postgresLog } from "./postgres_log.ts";
import { insertPayloadRows, updateSeal } from "./_seal_rows.ts";
import { PostgresRunWriter } from "./postgres_writer.ts";
import { logLeafOfFolder, writeProofFile } from "../store/store_log_files.ts";

/**
 * A run that the store holds, whose folder is on another machine: the folder it was made in, and the pinned
 * URI of its committed bundle (null when none), from which it can be verified here (`findRunOrBundle`).
 * @example
 * ```ts
 * import { RunElsewhere, RunNotFound } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const error = new RunElsewhere("run r1 was made on another machine", {
 *   runId: "r1",
 *   folder: "/srv/runs/r1",
 *   bundle: null,
 * });
 * assert.ok(error instanceof RunNotFound);
 * assert.equal(error.name, "RunElsewhere");
 * assert.equal(error.folder, "/srv/runs/r1");
 * ```
 */
export class RunElsewhere extends RunNotFound {
  /** The run's ID. */
  readonly runId: string;
  /** The run folder on the machine that ran it. */
  readonly folder: string;
  /** The pinned URI of its committed bundle, or null. */
  readonly bundle: string | null;

  /**
   * @param message What happened and how to verify the run here.
   * @param where The run, its folder and its bundle.
   */
  constructor(message: string, where: { runId: string; folder: string; bundle: string | null }) {
    super(message);
    this.name = "RunElsewhere";
    this.runId = where.runId;
    this.folder = where.folder;
    this.bundle = where.bundle;
  }
}

/** How a {@linkcode PostgresStore} opens. */
export interface PostgresStoreOptions extends PostgresTargetOptions {
  /** Bring the schema up to date and write (true, the default); false only reads. */
  create?: boolean;
  /** The runs root, where run folders are made on this machine. */
  runs?: string;
  /** Connections in the pool; 4 by default. */
  max?: number;
}

/** Rows fetched as arrays, as plain objects keyed by their columns' names. */
function objectRows(
  rows: readonly unknown[][] & { columns?: readonly { name: string }[] },
): Record<string, SqlValue>[] {
  const names = (rows.columns ?? []).map((c) => c.name);
  const out: Record<string, SqlValue>[] = [];
  for (const values of rows) {
    const row: Record<string, SqlValue> = {};
    names.forEach((name, j) => row[name] = values[j] as SqlValue);
    out.push(row);
  }
  return out;
}

/** The store's rows as the shared check and the questions read them (`?` placeholders). */
function rowSource(sql: PgSql): RowSource {
  return {
    // As arrays (`.values()`), each row made into one plain object here: the driver's own row objects,
    // copied again into plain ones, were most of a 1,000-run answer's time.
    // Each text as a column holds it (columnText): a question asked with a NUL finds what was written with one.
    all: async (text: string, ...params: SqlValue[]) =>
      objectRows(await sql.unsafe(numbered(text), params.map(columnValue), { prepare: true }).values()),
    // as they come: a cursor of a batch of rows at a time, closed when the reading stops part way
    each: (text: string, ...params: SqlValue[]) => cursorRows(sql, text, params, CURSOR_ROWS),
    // rows that may each hold 32 MiB of text: one at a time, so that a batch never holds many of them
    eachWide: (text: string, ...params: SqlValue[]) => cursorRows(sql, text, params, 1),
  };
}

/** The rows of a query through a cursor of `batch` rows at a time. */
function cursorRows(sql: PgSql, text: string, params: SqlValue[], batch: number) {
  return flatRows(
    sql.unsafe(numbered(text), params.map(columnValue), { prepare: true }).cursor(batch) as AsyncIterable<
      Record<string, SqlValue>[]
    >,
  );
}

/** The rows a cursor of {@linkcode rowSource} fetches at a time (each up to 64 KiB of text, as read as they come). */
const CURSOR_ROWS = 512;

/**
 * The postgres store. Open it with {@linkcode PostgresStore.open} (or `openStore("postgresql://…")`); many
 * processes on many machines can write one database at once, each run's rows by its own writer.
 *
 * @example
 * ```ts
 * import { PostgresStore, ProveviError } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * // A URI that names no database is refused before any connection is tried.
 * await assert.rejects(PostgresStore.open("postgresql://", { runs: "/tmp/runs" }), ProveviError);
 * ```
 */
export class PostgresStore implements EvidenceStore, StoreQuestions {
  /** The store URI, without any password. */
  readonly uri: string;
  readonly runsRoot: string;
  /** True when the store only reads. */
  readonly readOnly: boolean;
  /** The log of the store's sealed runs, in its tables: each seal appends its run in the seal's transaction. */
  readonly log: RowsLog;
  #sql: postgres.Sql | null;
  /** The span index of each run this store opened, open to append until its seal. */
  readonly #spans = new Map<string, SpansFile>();

  private constructor(sql: postgres.Sql, uri: string, runs: string, readOnly: boolean) {
    this.#sql = sql;
    this.uri = uri;
    this.runsRoot = runs;
    this.readOnly = readOnly;
    this.log = postgresLog(() => this.sql, { uri, readOnly });
  }

  /**
   * Connects and checks the database; to write, it also makes or upgrades the schema.
   *
   * @param uri A store URI, `postgresql://user@host:port/database`; the password from the URI, PGPASSWORD
   * or ~/.pgpass.
   * @param options Whether to write, the runs root, the pool's size.
   * @returns The open store; close it when done.
   * @throws ProveviError naming the server and database (never the password) when it cannot be used.
   */
  static async open(uri: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
    const target = postgresTarget(uri, options);
    const readOnly = options.create === false;
    const sql = await openPostgres(target, { readOnly, ...(options.max ? { max: options.max } : {}) });
    return new PostgresStore(sql, target.uri, runsRoot(options.runs), readOnly);
  }

  /** The connection pool (`npm:postgres`), for queries of one's own. */
  get sql(): postgres.Sql {
    if (!this.#sql) throw new ProveviError(`store "${this.uri}" is closed`);
    return this.#sql;
  }

  #writable(what: string): postgres.Sql {
    if (this.readOnly) {
      throw new ProveviError(
        `cannot ${what}: store "${this.uri}" was opened only to read; open it with create: true to write`,
      );
    }
    return this.sql;
  }

  #fail(what: string, error: unknown): EvidenceError {
    return new EvidenceError(`cannot ${what} in ${this.uri}: ${pgMessage(error)}`, { cause: error });
  }

  async #all(text: string, ...params: SqlValue[]): Promise<Record<string, SqlValue>[]> {
    return await rowSource(this.sql).all(text, ...params);
  }

  /** Opens a new run: its row and its folder on this machine. */
  async openRun(
    runId: string,
    options: { folder?: string; payloads?: PayloadLayout } = {},
  ): Promise<RunWriter> {
    checkRunId(runId);
    const sql = this.#writable(`open run "${runId}"`);
    const folder = options.folder ?? join(this.runsRoot, runId);
    const exists = () =>
      new ProveviError(`run "${runId}" exists already in store ${this.uri}; a run ID is used once`);
    if ((await this.#all("SELECT 1 AS found FROM provevi_runs WHERE run_id = ?", runId)).length) {
      throw exists();
    }
    const file = await FileRunWriter.create(runId, folder, { payloads: options.payloads });
    try {
      await sql.unsafe("INSERT INTO provevi_runs (run_id, folder, status) VALUES ($1, $2, 'running')", [
        runId,
        folder,
      ]);
    } catch (error) {
      await file.seal().catch(() => {}); // close the file; the folder stays for a look
      if (pgCode(error) === "23505") throw Object.assign(exists(), { cause: error });
      throw this.#fail(`record run "${runId}"`, error);
    }
    this.#spans.set(runId, file.spans);
    return new PostgresRunWriter(sql, file, { uri: this.uri });
  }

  /**
   * Appends spans of a run to `<run folder>/spans.jsonl`, the folder that the run's row names; a run this store
   * opened, to the file its writer keeps open until the seal, with no query.
   * @throws RunNotFound when the store has no such run; ProveviError when it is open read-only.
   */
  async addSpans(runId: string, spans: readonly StoredSpan[]): Promise<void> {
    this.#writable(`add spans to run "${runId}"`);
    const open = this.#spans.get(runId);
    if (open) return open.append(spans);
    const [row] = await this.#all(`SELECT ${pathColumn("folder")} FROM provevi_runs WHERE run_id = ?`, runId);
    if (!row) {
      throw new RunNotFound(`cannot add spans: no run "${runId}" in store ${this.uri}; open it first`);
    }
    await appendSpansFile(folderOrRefused(row.folder, runId, this.uri), spans);
  }

  /** Reads a run at the folder the store records. */
  async readRun(runId: string): Promise<RunRecord> {
    checkRunIdToRead(runId);
    const [row] = await this.#all(
      `SELECT ${pathColumn("folder")}, bundle_pinned, manifest_sha256 FROM provevi_runs WHERE run_id = ?`,
      runId,
    );
    if (!row) throw new RunNotFound(`no run "${runId}" in store ${this.uri}`);
    const folder = folderOrRefused(row.folder, runId, this.uri);
    if (row.manifest_sha256 === null) await this.#completeFromFolder(runId, folder);
    try {
      if ((await Deno.lstat(folder)).isSymlink) {
        throw new RunNotFound(
          `the folder of run "${runId}", ${folder}, is a link; pass the run folder's path`,
        );
      }
    } catch (error) {
      if (error instanceof RunNotFound) throw error;
      if (error instanceof Deno.errors.NotFound) {
        const how = row.bundle_pinned === null
          ? "it has no committed bundle: copy its folder here and verify the copy (prove verify FOLDER)"
          : `its bundle is ${row.bundle_pinned}: give the catalog config that reads it (--config FILE) to verify the bundle here`;
        throw new RunElsewhere(
          `run "${runId}" is in store ${this.uri}, but its folder ${folder} is not on this machine; ${how}`,
          { runId, folder, bundle: row.bundle_pinned === null ? null : String(row.bundle_pinned) },
        );
      }
    }
    return new FileRunRecord(runId, folder);
  }

  /**
   * Completes the rows of a run whose folder was sealed after its rows last changed: the server was away (a
   * restart during a write or at the seal), or its writer stopped between the two (see {@linkcode missingRows}):
   * the events, their URIs and what `run_created` implies, the payloads and the seal's columns, in one
   * transaction, and only while the run's row is still unsealed and holds the rows that were compared. When the
   * rows cannot be written, the check says so.
   */
  async #completeFromFolder(runId: string, folder: string): Promise<void> {
    // Even a store opened only to read completes the rows (`prove verify --store` after a restart): the rows are
    // the index of what the folder already holds, and a user who may only read is told by the check.
    if ((await sealRowOfFolder(folder)) === null) return; // still being written: not read
    try {
      const rows = await missingRows(runId, folder, rowSource(this.sql));
      if (rows === null) return;
      const leaf = await logLeafOfFolder(folder, rows.seal.manifest_sha256);
      const logged = await this.sql.begin(async (tx) => {
        const [still] = await tx.unsafe(
          `SELECT (SELECT count(*) FROM provevi_events WHERE run_id = $1)::int AS n FROM provevi_runs
           WHERE run_id = $1 AND manifest_sha256 IS NULL FOR UPDATE`,
          [runId],
        );
        if (still === undefined || Number(still.n) !== rows.from) return null; // completed meanwhile
        for (const { event, line } of rows.events) {
          const { text, params } = eventStatement(event, line, null);
          await tx.unsafe(text, params);
          if (event.type === "run_created" && event.seq === 0) await writeCreatedRowsPg(tx, event);
        }
        await insertPayloadRows(tx, runId, rows.payloads);
        await updateSeal(tx, runId, rows.seal);
        // The run's seal is in its folder: its leaf goes in the log with its rows (docs/log.md).
        return leaf === null ? null : await appendLogPg(tx, [leaf], this.uri);
      });
      if (logged !== null) await writeProofFile(folder, logged);
    } catch { /* a user who may only read, or the server away: the check reports the rows */ }
  }

  /**
   * The run's events as its rows hold them, in the form of `events.jsonl` (each line and a newline, by seq): what
   * `prove show` prints, with or without the run's folder on this machine.
   * @returns The text, or null when the store holds no run of that ID.
   */
  async eventsText(runId: string): Promise<string | null> {
    if (!(await this.#all("SELECT 1 AS found FROM provevi_runs WHERE run_id = ?", runId)).length) return null;
    // a batch of lines a row, a line past the bound refused by its size before it is sent (events_rows.ts)
    const rows = this.sql.unsafe(eventLinesQuery("postgres"), [runId]).cursor(1) as AsyncIterable<
      EventLinesRow[]
    >;
    return await eventsTextOfRows(`${this.uri} run ${runId}`, flatRows(rows));
  }

  /** The run IDs in the store, oldest first (run IDs begin with their time). */
  async runIds(): Promise<string[]> {
    return (await this.#all("SELECT run_id FROM provevi_runs ORDER BY run_id")).map((r) => String(r.run_id));
  }

  /**
   * Records where a run's bundle was committed, as its `bundle.json` says; the check compares the two.
   * @throws RunNotFound when the store has no such run.
   */
  async recordBundle(runId: string, bundle: { uri: string; pinned: string | null }): Promise<void> {
    const sql = this.#writable(`record the bundle of run "${runId}"`);
    const result = await sql.unsafe(
      "UPDATE provevi_runs SET bundle_uri = $1, bundle_pinned = $2 WHERE run_id = $3",
      [bundle.uri, bundle.pinned, runId].map(columnValue),
    );
    if (result.count === 0) throw new RunNotFound(`no run "${runId}" in store ${this.uri}`);
  }

  /**
   * Deletes a run's rows, for a copy that failed part way (`exportRun` calls it), as the sqlite store does.
   * @throws ProveviError when the store only reads.
   */
  async discardRun(runId: string): Promise<void> {
    const sql = this.#writable(`discard run "${runId}"`);
    await sql.begin(async (tx) => {
      for (const table of ["events", "event_refs", "payloads", "run_params", "assessments", "runs"]) {
        await tx.unsafe(`DELETE FROM provevi_${table} WHERE run_id = $1`, [runId]);
      }
      const firsts: [string, string][] = [
        ["provevi_agents", "r.agent = t.agent"],
        ["provevi_agent_versions", "r.agent = t.agent AND r.agent_version = t.version"],
        ["provevi_experiments", "r.experiment = t.experiment"],
        ["provevi_experiment_versions", "r.experiment = t.experiment AND r.experiment_pin = t.pin"],
      ];
      for (const [table, same] of firsts) {
        await tx.unsafe(
          `UPDATE ${table} AS t SET first_run = (SELECT min(r.run_id) FROM provevi_runs r WHERE ${same})
           WHERE t.first_run = $1 AND EXISTS (SELECT 1 FROM provevi_runs r WHERE ${same})`,
          [runId],
        );
        await tx.unsafe(`DELETE FROM ${table} WHERE first_run = $1`, [runId]);
      }
    });
  }

  /**
   * Checks a run's rows against its lines, files and events, and the schema; `verifyRun` calls it. The rows
   * are compared with the run folder that the store records, or with `options.folder` (the folder of a
   * committed bundle, on a machine other than the one that ran the run). A run whose folder was sealed while
   * its rows were not has them completed from the folder first, as {@linkcode readRun} does.
   * @returns The problems (codes `rows.schema`, `rows.run_differs`, `rows.event_differs`, …), each naming the table and the row's key.
   */
  async checkRun(
    runId: string,
    options: { folder?: string | null; bundle?: string | null; read?: ReadEvents | null } = {},
  ): Promise<Problem[]> {
    const [row] = await this.#all(
      `SELECT ${pathColumn("folder")}, manifest_sha256 FROM provevi_runs WHERE run_id = ?`,
      runId,
    );
    // Rows are completed from the folder the run's row records, never from a copy a caller gives.
    if (
      row?.manifest_sha256 === null && row.folder !== null &&
      (options.folder ?? String(row.folder)) === String(row.folder)
    ) {
      await this.#completeFromFolder(runId, String(row.folder));
    }
    const schema = await postgresSchemaProblems(this.sql);
    return await checkStoreRows(rowSource(this.sql), runId, {
      schema,
      folder: options.folder ?? null,
      bundle: options.bundle ?? null,
      read: options.read ?? null,
    });
  }

  /**
   * Writes an assessment of a run, an event (`RUN#SEQ`) or a span, or of an experiment (its URI or name; pinned,
   * one version of it).
   * @returns The assessment as stored.
   * @throws ProveviError when the run, event, span, experiment or version is not in the store.
   */
  async assess(
    target: AssessTarget,
    name: string,
    value: unknown,
    options: AssessOptions = {},
  ): Promise<Assessment> {
    const sql = this.#writable("write an assessment");
    return await writeAssessmentPg(sql, rowSource(this.sql), {
      storeUri: this.uri,
      judgement: { target, name, value, options },
    });
  }

  /** The assessments of a run, its events and its spans, oldest first. */
  assessments(runId: string): Promise<Assessment[]> {
    return q.assessments(rowSource(this.sql), runId);
  }

  /**
   * The assessments of an experiment by its URI or name: of the experiment as a whole and of each version, or,
   * pinned, of the whole and of that version. Oldest first; none when no run named it.
   */
  experimentAssessments(uri: string): Promise<Assessment[]> {
    return q.experimentAssessments(rowSource(this.sql), uri);
  }

  /** The spans of a trace, across the runs whose events carry its ID (an index of step 7 finds them). */
  async trace(traceId: string): Promise<TraceSpan[]> {
    const id = traceIdOf(traceId);
    const rows = await this.#all(
      "SELECT DISTINCT run_id FROM provevi_events WHERE trace_id = ? ORDER BY run_id",
      id,
    );
    return await traceOfRuns(this, rows.map((r) => String(r.run_id)), id);
  }
  /** The runs that staged `uri` as an input, by its URI or a pinned version of it. */
  runsReading(uri: string): Promise<Q.RunReading[]> {
    return q.runsReading(rowSource(this.sql), uri);
  }
  /** The runs that named an experiment, by its URI or name; a pinned URI gives one version's runs. */
  runsOfExperiment(uri: string): Promise<Q.RunSummary[]> {
    return q.runsOfExperiment(rowSource(this.sql), uri);
  }
  /** The experiments that runs named, with their numbers of versions and runs. */
  experiments(): Promise<Q.ExperimentSummary[]> {
    return q.experiments(rowSource(this.sql));
  }
  /** An experiment with each version that runs reported and the runs of each, or null. */
  experiment(uri: string): Promise<Q.ExperimentDetail | null> {
    return q.experiment(rowSource(this.sql), uri);
  }
  /** The runs of an agent class, or of one version of it (by its SHA-256 or the start of it). */
  runsOfAgent(name: string, options: { version?: string } = {}): Promise<Q.RunSummary[]> {
    return q.runsOfAgent(rowSource(this.sql), name, options);
  }
  /** The agent classes, with their numbers of versions and runs. */
  agents(): Promise<Q.AgentSummary[]> {
    return q.agents(rowSource(this.sql));
  }
  /** An agent class with each version, its settings and its runs, or null. */
  agent(name: string): Promise<Q.AgentDetail | null> {
    return q.agent(rowSource(this.sql), name);
  }
  /** The run's row with its settings as params, or null. */
  run(runId: string): Promise<Q.RunDetail | null> {
    return q.run(rowSource(this.sql), runId);
  }
  /** The grants and refusals of a run, in order. */
  access(runId: string): Promise<Q.AccessEntry[]> {
    return q.access(rowSource(this.sql), runId);
  }
  /** The inputs that a run staged, with their pinned URIs. */
  inputs(runId: string): Promise<Q.InputEntry[]> {
    return q.inputs(rowSource(this.sql), runId);
  }

  /** Closes the pool; a second close does nothing. */
  async close(): Promise<void> {
    const sql = this.#sql;
    this.#sql = null;
    await sql?.end({ timeout: 5 });
  }

  /** Closes the store at the end of an `await using` block. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/** The rows of a cursor's batches, one at a time. */
async function* flatRows<T>(batches: AsyncIterable<readonly T[]>): AsyncGenerator<T> {
  for await (const batch of batches) yield* batch;
}

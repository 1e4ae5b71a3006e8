/**
 * The sqlite store: the evidence of many runs in one SQLite file (through the built-in `node:sqlite`), with
 * the same run folders as the file store beside it. Each event is a row, committed only once its line is in
 * the run's `events.jsonl`.
 * @module
 */
import type { Problem } from "../evidence/problem.ts";
import type { ReadEvents } from "../evidence/read_events.ts";
import type { DatabaseSync, StatementSync } from "node:sqlite";
import { join } from "node:path";
import { EvidenceError, ProveviError, RunNotFound } from "../evidence/errors.ts";
import type { EvidenceEvent } from "../evidence/event.ts";
import { FileRunRecord, FileRunWriter } from "../store/file_store.ts";
import { appendSpansFile, type SpansFile, type StoredSpan } from "../evidence/spans_file.ts";
import { type Manifest, manifestText, type PayloadLayout } from "../evidence/manifest.ts";
import { runsRoot } from "../evidence/runs_root.ts";
import { checkRunId, checkRunIdToRead, type RunRecord } from "../evidence/record.ts";
import type { EvidenceStore, RunWriter, SealInfo } from "../store/store.ts";
import { openDatabase, transaction } from "./sqlite_connection.ts";
import { writeEventRows } from "./sqlite_rows.ts";
import { eventLinesQuery, eventsTextOfRows } from "../evidence/events_rows.ts";
import { columnText, columnValue, runEnd, sealRow, sealRowOfFolder } from "../store/store_rows.ts";
import { missingRows } from "../store/complete_rows.ts";
import { folderOrRefused, pathColumn } from "../store/row_reading.ts";
import { isSqliteUri, sqlitePath, sqliteUri } from "../store/store_uri.ts";
import { checkRunRows, sqliteRowSource } from "./sqlite_check.ts";
import * as q from "./sqlite_questions.ts";
import type * as Q from "../store/store_questions.ts";
import type { Assessment, AssessOptions, AssessTarget } from "../store/assess.ts";
import { writeAssessment } from "./sqlite_assess.ts";
import type { TraceSpan } from "../evidence/run_spans.ts";
import { traceIdOf } from "../store/trace.ts";
import { traceOfRuns } from "../store/_trace_of_runs.ts";
import type { StoreQuestions } from "../store/store_questions.ts";
import type { RowsLog } from "../log/rows_log.ts";
import { leafOfSeal } from "../log/run_leaf.ts";
import { appendLogIn, durableTransaction, sqliteLog } from "./sqlite_log.ts";
import { logLeafOfFolder, writeProofFile } from "../store/store_log_files.ts";

/** Each connection's statement that reads a run's folder: a store's connection is closed and gone together. */
const runRowStatements = new WeakMap<DatabaseSync, StatementSync>();

/** How a {@linkcode SqliteStore} opens its file. */
export interface SqliteStoreOptions {
  /** Make the file, or bring it up to date, and write (true, the default); false only reads. */
  create?: boolean;
  /** The runs root, where run folders are made. */
  runs?: string;
  /** The store URI to name in errors; made from the path by default. */
  uri?: string;
}

/** Where a run's bundle was committed, as `bundle.json` holds it. */
export interface BundlePlace {
  /** The logical URI, such as `run://acme/demo/dev/<run_id>`. */
  uri: string;
  /** The URI pinned to the commit. */
  pinned: string;
}

/**
 * The sqlite store. Many runs can write one file at once, from threads or processes; a writer waits up to a
 * minute for another. `create: false` opens the file only to read.
 *
 * @example
 * ```ts
 * import { SqliteStore } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * await using store = new SqliteStore(`${dir}/evidence.db`, { runs: `${dir}/runs` });
 * assert.deepEqual(await store.runsOfAgent("revenue-question"), []);
 * ```
 */
export class SqliteStore implements EvidenceStore, StoreQuestions {
  readonly uri: string;
  readonly runsRoot: string;
  /** The SQLite file's absolute path. */
  readonly path: string;
  /** True when the store only reads. */
  readonly readOnly: boolean;
  /** The log of the store's sealed runs, in its tables: each seal appends its run in the seal's transaction. */
  readonly log: RowsLog;
  #db: DatabaseSync | null;
  /** The span index of each run this store opened, open to append until its seal. */
  readonly #spans = new Map<string, SpansFile>();

  /**
   * Opens the file.
   * @param path The SQLite file (relative to the current folder) or a `sqlite:` store URI.
   * @param options Whether to write, the runs root, the URI to name in errors.
   * @throws ProveviError naming the file and the fix when it cannot be used.
   */
  constructor(path: string, options: SqliteStoreOptions = {}) {
    this.path = isSqliteUri(path) ? sqlitePath(path) : sqlitePath(sqliteUri(path));
    this.uri = options.uri ?? sqliteUri(this.path);
    this.runsRoot = runsRoot(options.runs);
    this.readOnly = options.create === false;
    this.#db = openDatabase(this.path, { uri: this.uri, readOnly: this.readOnly });
    this.log = sqliteLog(() => this.db, { uri: this.uri, readOnly: this.readOnly });
  }

  /** The open connection. */
  get db(): DatabaseSync {
    if (!this.#db) throw new ProveviError(`store "${this.uri}" is closed`);
    return this.#db;
  }

  /** The run's folder and manifest hash, by a statement prepared once per connection (read for every run). */
  /** The run's folder (null when longer than a path, not read) and its seal's hash. */
  #runRow(runId: string): { folder: string | null; manifest_sha256: string | null } | undefined {
    const db = this.db;
    let statement = runRowStatements.get(db);
    if (statement === undefined) {
      statement = db.prepare(
        `SELECT ${pathColumn("folder")}, manifest_sha256 FROM provevi_runs WHERE run_id = ?`,
      );
      runRowStatements.set(db, statement);
    }
    return statement.get(runId) as { folder: string | null; manifest_sha256: string | null } | undefined;
  }

  #writable(what: string): DatabaseSync {
    if (this.readOnly) {
      throw new ProveviError(
        `cannot ${what}: store "${this.uri}" was opened only to read; open it with create: true to write`,
      );
    }
    return this.db;
  }

  /** Opens a new run: its row and its folder. */
  async openRun(
    runId: string,
    options: { folder?: string; payloads?: PayloadLayout } = {},
  ): Promise<RunWriter> {
    checkRunId(runId);
    const db = this.#writable(`open run "${runId}"`);
    const folder = options.folder ?? join(this.runsRoot, runId);
    if (db.prepare("SELECT 1 FROM provevi_runs WHERE run_id = ?").get(runId)) {
      throw new ProveviError(`run "${runId}" exists already in store ${this.uri}; a run ID is used once`);
    }
    const file = await FileRunWriter.create(runId, folder, { payloads: options.payloads ?? "pack" });
    try {
      transaction(db, () => {
        db.prepare("INSERT INTO provevi_runs (run_id, folder, status) VALUES (?, ?, 'running')")
          .run(runId, folder);
      });
    } catch (error) {
      await file.seal().catch(() => {}); // close the file; the folder stays for a look
      if (/UNIQUE/.test((error as Error).message)) {
        throw new ProveviError(`run "${runId}" exists already in store ${this.uri}; a run ID is used once`, {
          cause: error,
        });
      }
      throw new EvidenceError(`cannot record run "${runId}" in ${this.uri}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    this.#spans.set(runId, file.spans);
    return new SqliteRunWriter(db, file, { uri: this.uri });
  }

  /**
   * Appends spans of a run to `<run folder>/spans.jsonl`, the folder that the run's row names: an index beside
   * the evidence, never a row, so the schema and its checks stay as they are. A run this store opened appends
   * to the file its writer keeps open until the seal.
   *
   * @throws RunNotFound when the store has no such run; ProveviError when it is open read-only.
   */
  async addSpans(runId: string, spans: readonly StoredSpan[]): Promise<void> {
    const db = this.#writable(`add spans to run "${runId}"`);
    const open = this.#spans.get(runId);
    if (open) return open.append(spans);
    const row = db.prepare(`SELECT ${pathColumn("folder")} FROM provevi_runs WHERE run_id = ?`).get(runId) as
      | { folder: string | null }
      | undefined;
    if (!row) {
      throw new RunNotFound(`cannot add spans: no run "${runId}" in store ${this.uri}; open it first`);
    }
    await appendSpansFile(folderOrRefused(row.folder, runId, this.uri), spans);
  }

  /** Reads a run at the folder the store records. */
  async readRun(runId: string): Promise<RunRecord> {
    checkRunIdToRead(runId);
    const found = this.#runRow(runId);
    if (!found) throw new RunNotFound(`no run "${runId}" in store ${this.uri}`);
    const row = { ...found, folder: folderOrRefused(found.folder, runId, this.uri) };
    if (row.manifest_sha256 === null) await this.#completeFromFolder(runId, row.folder);
    try {
      // A look that takes microseconds: an asynchronous one waits for a file thread, which on a busy machine
      // costs more than the look, and a check of thousands of runs (provtrace's exports) reads each.
      if (Deno.lstatSync(row.folder).isSymlink) {
        throw new RunNotFound(
          `the folder of run "${runId}", ${row.folder}, is a link; pass the run folder's path`,
        );
      }
    } catch (error) {
      if (error instanceof RunNotFound) throw error;
      // A missing folder is the checks' to report.
    }
    return new FileRunRecord(runId, row.folder);
  }

  /**
   * Completes the rows of a run whose folder was sealed after its rows last changed: its writer stopped between
   * the two, or could not write a row (see {@linkcode missingRows}): the events, their URIs and what
   * `run_created` implies, the payloads and the seal's columns, in one transaction, and only while the run's
   * row is still unsealed and holds the rows that were compared. A store that only reads, or is busy, leaves the
   * rows as they are, and the check says so.
   */
  async #completeFromFolder(runId: string, folder: string): Promise<void> {
    if (this.readOnly || (await sealRowOfFolder(folder)) === null) return; // still being written: not read
    const db = this.db;
    const rows = await missingRows(runId, folder, sqliteRowSource(db));
    if (rows === null) return;
    const leaf = await logLeafOfFolder(folder, rows.seal.manifest_sha256);
    let logged: ReturnType<typeof appendLogIn> | null = null;
    try {
      durableTransaction(db, () => {
        const still = db.prepare(
          `SELECT (SELECT count(*) FROM provevi_events WHERE run_id = ?1) AS n FROM provevi_runs
           WHERE run_id = ?1 AND manifest_sha256 IS NULL`,
        ).get(runId) as { n: number } | undefined;
        if (still === undefined || Number(still.n) !== rows.from) return; // completed meanwhile
        for (const { event, line } of rows.events) writeEventRows(db, event, line);
        const payload = db.prepare(
          "INSERT OR IGNORE INTO provevi_payloads (run_id, sha256, size, place) VALUES (?, ?, ?, ?)",
        );
        for (const p of rows.payloads) payload.run(runId, p.sha256, p.size, p.place);
        const seal = rows.seal;
        db.prepare(
          `UPDATE provevi_runs SET last_hash = ?, manifest_sha256 = ?, sealed_at = ?, status = ?, ended_at = ?
           WHERE run_id = ?`,
        ).run(seal.last_hash, seal.manifest_sha256, seal.sealed_at, seal.status, seal.ended_at, runId);
        // The run's seal is in its folder: its leaf goes in the log with its rows (docs/log.md).
        if (leaf !== null) logged = appendLogIn(db, [leaf], this.uri);
      });
    } catch { /* busy: the check reports the rows */ }
    if (logged !== null) await writeProofFile(folder, logged);
  }

  /**
   * The run's events as its rows hold them, in the form of `events.jsonl` (each line and a newline, by seq): what
   * `prove show` prints, with or without the run's folder.
   * @returns The text, or null when the store holds no run of that ID.
   */
  eventsText(runId: string): Promise<string | null> {
    if (!this.db.prepare("SELECT 1 FROM provevi_runs WHERE run_id = ?").get(runId)) {
      return Promise.resolve(null);
    }
    // a batch of lines a row, a line past the bound refused by its size (events_rows.ts)
    const rows = this.db.prepare(eventLinesQuery("sqlite")).iterate(runId);
    return eventsTextOfRows(`${this.uri} run ${runId}`, rows);
  }

  /** The run IDs in the store, oldest first (run IDs begin with their time). */
  runIds(): Promise<string[]> {
    const rows = this.db.prepare("SELECT run_id FROM provevi_runs ORDER BY run_id").all() as {
      run_id: string;
    }[];
    return Promise.resolve(rows.map((r) => r.run_id));
  }

  /**
   * Records where a run's bundle was committed, as its `bundle.json` says; the check compares the two.
   * @throws RunNotFound when the store has no such run.
   */
  recordBundle(runId: string, bundle: BundlePlace): Promise<void> {
    const db = this.#writable(`record the bundle of run "${runId}"`);
    const changed = transaction(
      db,
      () =>
        db.prepare("UPDATE provevi_runs SET bundle_uri = ?, bundle_pinned = ? WHERE run_id = ?")
          .run(columnValue(bundle.uri), columnValue(bundle.pinned), runId) as { changes: number | bigint },
    );
    if (Number(changed.changes) === 0) throw new RunNotFound(`no run "${runId}" in store ${this.uri}`);
    return Promise.resolve();
  }

  /**
   * Deletes a run's rows, for a copy that failed part way (`exportRun` calls it): its events, URIs, payloads,
   * settings and assessments, and each agent class, experiment or version that it was the first run of. Such
   * a row passes to the earliest other run of it, or goes when there is none. The run folder is the caller's.
   * @throws ProveviError when the store only reads.
   */
  discardRun(runId: string): Promise<void> {
    const db = this.#writable(`discard run "${runId}"`);
    transaction(db, () => {
      for (const table of ["events", "event_refs", "payloads", "run_params", "assessments", "runs"]) {
        db.prepare(`DELETE FROM provevi_${table} WHERE run_id = ?`).run(runId);
      }
      const firsts: [string, string, string][] = [
        ["provevi_agents", "agent", "r.agent = t.agent"],
        ["provevi_agent_versions", "agent, version", "r.agent = t.agent AND r.agent_version = t.version"],
        ["provevi_experiments", "experiment", "r.experiment = t.experiment"],
        [
          "provevi_experiment_versions",
          "experiment, pin",
          "r.experiment = t.experiment AND r.experiment_pin = t.pin",
        ],
      ];
      for (const [table, _key, same] of firsts) {
        db.prepare(
          `UPDATE ${table} AS t SET first_run = (SELECT min(r.run_id) FROM provevi_runs r WHERE ${same})
           WHERE t.first_run = ? AND EXISTS (SELECT 1 FROM provevi_runs r WHERE ${same})`,
        ).run(runId);
        db.prepare(`DELETE FROM ${table} WHERE first_run = ?`).run(runId);
      }
    });
    return Promise.resolve();
  }

  /**
   * Checks a run's rows against its lines, files and events, and the schema; `verifyRun` calls it. A run whose
   * folder was sealed while its rows were not has them completed from the folder first, as {@linkcode readRun}
   * does.
   * @param options `folder`: the run folder to compare with, instead of the one the store records; `bundle`: the
   * pinned bundle that folder was taken from, when it has no `bundle.json`.
   * @returns The problems (codes `rows.schema`, `rows.run_differs`, `rows.event_differs`, …), each naming the table and the row's key.
   */
  async checkRun(
    runId: string,
    options: { folder?: string | null; bundle?: string | null; read?: ReadEvents | null } = {},
  ): Promise<Problem[]> {
    const row = this.#runRow(runId);
    // Rows are completed from the folder the run's row records, never from a copy a caller gives.
    if (
      row?.manifest_sha256 === null && row.folder !== null && (options.folder ?? row.folder) === row.folder
    ) {
      await this.#completeFromFolder(runId, row.folder);
    }
    return await checkRunRows(this.db, runId, options);
  }

  /**
   * Writes an assessment of a run, an event (`RUN#SEQ`) or a span, or of an experiment (its URI or name; pinned,
   * one version of it).
   * @returns The assessment as stored.
   * @throws ProveviError when the run, event, span, experiment or version is not in the store.
   */
  assess(
    target: AssessTarget,
    name: string,
    value: unknown,
    options: AssessOptions = {},
  ): Promise<Assessment> {
    try {
      return Promise.resolve(this.#assess(target, name, value, options));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  #assess(target: AssessTarget, name: string, value: unknown, options: AssessOptions): Assessment {
    return writeAssessment(this.#writable("write an assessment"), this.uri, { target, name, value, options });
  }

  /** The assessments of a run, its events and its spans, oldest first. */
  assessments(runId: string): Promise<Assessment[]> {
    return Promise.resolve(plain(q.assessments(this.db, columnText(runId))));
  }

  /**
   * The assessments of an experiment by its URI or name: of the experiment as a whole and of each version, or,
   * pinned, of the whole and of that version. Oldest first; none when no run named it.
   */
  experimentAssessments(uri: string): Promise<Assessment[]> {
    try {
      return Promise.resolve(plain(q.experimentAssessments(this.db, columnText(uri))));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** The spans of a trace, across the runs whose events carry its ID (an index of step 7 finds them). */
  async trace(traceId: string): Promise<TraceSpan[]> {
    const id = traceIdOf(traceId);
    const runs = (this.db.prepare(
      "SELECT DISTINCT run_id FROM provevi_events WHERE trace_id = ? ORDER BY run_id",
    ).all(id) as { run_id: string }[]).map((r) => r.run_id);
    return await traceOfRuns(this, runs, id);
  }

  /** The runs that staged `uri` as an input, by its URI or a pinned version of it. */
  runsReading(uri: string): Promise<Q.RunReading[]> {
    return Promise.resolve(plain(q.runsReading(this.db, columnText(uri))));
  }
  /** The runs that named an experiment, by its URI or name; a pinned URI gives one version's runs. */
  runsOfExperiment(uri: string): Promise<Q.RunSummary[]> {
    return Promise.resolve(plain(q.runsOfExperiment(this.db, columnText(uri))));
  }
  /** The experiments that runs named, with their numbers of versions and runs. */
  experiments(): Promise<Q.ExperimentSummary[]> {
    return Promise.resolve(plain(q.experiments(this.db)));
  }
  /** An experiment with each version that runs reported and the runs of each, or null. */
  experiment(uri: string): Promise<Q.ExperimentDetail | null> {
    return Promise.resolve(plain(q.experiment(this.db, columnText(uri))));
  }
  /** The runs of an agent class, or of one version of it (by its SHA-256 or the start of it). */
  runsOfAgent(name: string, options: { version?: string } = {}): Promise<Q.RunSummary[]> {
    return Promise.resolve(plain(q.runsOfAgent(this.db, columnText(name), columnsOfOptions(options))));
  }
  /** The agent classes, with their numbers of versions and runs. */
  agents(): Promise<Q.AgentSummary[]> {
    return Promise.resolve(plain(q.agents(this.db)));
  }
  /** An agent class with each version, its settings and its runs, or null. */
  agent(name: string): Promise<Q.AgentDetail | null> {
    return Promise.resolve(plain(q.agent(this.db, columnText(name))));
  }
  /** The run's row with its settings as params, or null. */
  run(runId: string): Promise<Q.RunDetail | null> {
    return Promise.resolve(plain(q.run(this.db, columnText(runId))));
  }
  /** The grants and refusals of a run, in order. */
  access(runId: string): Promise<Q.AccessEntry[]> {
    return Promise.resolve(plain(q.access(this.db, columnText(runId))));
  }
  /** The inputs that a run staged, with their pinned URIs. */
  inputs(runId: string): Promise<Q.InputEntry[]> {
    return Promise.resolve(plain(q.inputs(this.db, columnText(runId))));
  }

  /** Closes the connection; a second close does nothing. */
  close(): Promise<void> {
    this.#db?.close();
    this.#db = null;
    return Promise.resolve();
  }

  /** Closes the store at the end of an `await using` block. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/**
 * Writes one run through the sqlite store: the file store's writer, wrapped so that each row is committed
 * only once its line is in `events.jsonl`, and each line is taken back when its row cannot be committed.
 */
export class SqliteRunWriter implements RunWriter {
  readonly #db: DatabaseSync;
  readonly #file: FileRunWriter;
  readonly #uri: string;
  #status = "running";

  /**
   * @param db The store's connection.
   * @param file The run's file writer.
   * @param options `uri`: the store's URI, for errors.
   */
  constructor(db: DatabaseSync, file: FileRunWriter, options: { uri?: string } = {}) {
    this.#db = db;
    this.#file = file;
    this.#uri = options.uri ?? "the sqlite store";
  }

  /** The run's ID. */
  get runId(): string {
    return this.#file.runId;
  }
  /** The run folder. */
  get folder(): string {
    return this.#file.folder;
  }

  /** Gives the run up unsealed: its folder's writer closes, and its rows are the caller's to discard. */
  abandon(): Promise<void> {
    return this.#file.abandon();
  }

  /** Appends the line and commits the event's rows, both or neither. */
  append(line: string, event: EvidenceEvent): Promise<void> {
    try {
      this.appendSync(line, event);
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** The synchronous form of {@linkcode append}. */
  appendSync(line: string, event: EvidenceEvent): void {
    if (event.run_id !== this.runId) {
      throw new EvidenceError(`an event of run "${event.run_id}" cannot go in run "${this.runId}"`);
    }
    const db = this.#db;
    const previous = this.#file.last;
    let appended = false;
    const end = runEnd(event, false);
    try {
      transaction(db, () => {
        writeEventRows(db, event, line);
        if (end.status !== this.#status) {
          db.prepare("UPDATE provevi_runs SET status = ?, ended_at = ? WHERE run_id = ?")
            .run(end.status, end.ended_at, this.runId);
        }
        this.#file.appendSync(line, event);
        appended = true;
      }, () => {
        if (appended) this.#file.unappendLast(line, previous);
        appended = false;
      });
    } catch (error) {
      if (error instanceof EvidenceError) throw error;
      throw new EvidenceError(
        `cannot write event ${event.seq} of run "${this.runId}": ${(error as Error).message}`,
        { cause: error },
      );
    }
    this.#status = end.status;
  }

  /** Stores the payload in the run folder and records its hash, size and place. */
  async putPayload(bytes: Uint8Array): Promise<string> {
    const sha256 = await this.#file.putPayload(bytes);
    try {
      transaction(this.#db, () => {
        this.#db.prepare(
          "INSERT OR IGNORE INTO provevi_payloads (run_id, sha256, size, place) VALUES (?, ?, ?, ?)",
        ).run(this.runId, sha256, bytes.length, this.#file.placeOf(sha256));
      });
    } catch (error) {
      throw new EvidenceError(
        `cannot record payload ${sha256} of run "${this.runId}": ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
    return sha256;
  }

  /**
   * Seals the run folder, then records the last hash, the manifest's hash, the seal time and the status, and
   * appends the run to the store's log, in one transaction whose commit is fsynced: the run is in the log when
   * the seal returns. Then the run's proof, `log.tlog-proof`, is written into its folder.
   */
  async seal(info: SealInfo = {}): Promise<Manifest> {
    const manifest = await this.#file.seal(info);
    const text = manifestText(manifest);
    const seal = sealRow(text, manifest, this.#file.last.event);
    const leaf = leafOfSeal(text, this.#file.attestation);
    let logged: ReturnType<typeof appendLogIn>;
    try {
      logged = durableTransaction(this.#db, () => {
        this.#db.prepare(
          `UPDATE provevi_runs SET last_hash = ?, manifest_sha256 = ?, sealed_at = ?, status = ?, ended_at = ?
           WHERE run_id = ?`,
        ).run(seal.last_hash, seal.manifest_sha256, seal.sealed_at, seal.status, seal.ended_at, this.runId);
        return appendLogIn(this.#db, [leaf], this.#uri);
      });
    } catch (error) {
      throw new EvidenceError(`cannot record the seal of run "${this.runId}": ${(error as Error).message}`, {
        cause: error,
      });
    }
    await writeProofFile(this.folder, logged);
    return manifest;
  }
}

/** A version asked for, as a column holds it. */
function columnsOfOptions(options: { version?: string }): { version?: string } {
  return options.version === undefined ? {} : { version: columnText(options.version) };
}

/** Rows from `node:sqlite` have no prototype; callers get plain objects. */
function plain<T>(value: T): T {
  if (Array.isArray(value)) return value.map(plain) as T;
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = plain(v);
    return out as T;
  }
  return value;
}

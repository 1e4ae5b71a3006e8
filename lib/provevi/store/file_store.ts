/**
 * The file store: each run's evidence as files in its run folder, `evidence/events.jsonl`,
 * `evidence/payloads.pack` (small payloads), `evidence/payloads/<sha256>` (large ones) and
 * `evidence/manifest.json`. A run's files are written by `file_run_writer.ts` and read by `file_run_record.ts`.
 * @module
 */
import { join } from "node:path";
import { NeedsIndexedStore, RunNotFound } from "../evidence/errors.ts";
import type { Assessment, AssessOptions, AssessTarget } from "./assess.ts";
import { assessInFolder, assessmentsInFolder } from "./file_assessments.ts";
import type { TraceSpan } from "../evidence/run_spans.ts";
import { traceIdOf } from "./trace.ts";
import { traceOfRuns } from "./_trace_of_runs.ts";
import type { StoreQuestions } from "./store_questions.ts";
import type * as Q from "./store_questions.ts";
import type { PayloadLayout } from "../evidence/manifest.ts";
import { runsRoot } from "../evidence/runs_root.ts";
import { checkRunId, checkRunIdToRead, type RunRecord } from "../evidence/record.ts";
import type { EvidenceStore, RunWriter } from "./store.ts";
import type { SpansFile, StoredSpan } from "../evidence/spans_file.ts";
import { FileLog } from "../log/file_log.ts";
import { FileRunRecord } from "./file_run_record.ts";
import { FileRunWriter } from "./file_run_writer.ts";

export { evidencePaths, FileRunRecord, readEventsFileText, readEvidenceText } from "./file_run_record.ts";
export { FileRunWriter } from "./file_run_writer.ts";

/**
 * The file store. It keeps no index of runs, so questions across runs need a sqlite store.
 *
 * @example
 * ```ts
 * import { FileStore } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * await using store = new FileStore({ runs: "fixtures/runs" });
 * assert.deepEqual(await store.runIds(), ["run-20261129T120000Z-0badc0de"]);
 * ```
 */
export class FileStore implements EvidenceStore, StoreQuestions {
  readonly uri = "file";
  readonly runsRoot: string;
  /** The log of the store's sealed runs, in `<runs root>/.log/`: each seal appends its run. */
  readonly log: FileLog;
  /** The span index of each run this store opened. */
  readonly #spans = new Map<string, SpansFile>();

  /** @param options `runs`: the runs root; by default as {@linkcode runsRoot} finds it. */
  constructor(options: { runs?: string } = {}) {
    this.runsRoot = runsRoot(options.runs);
    this.log = new FileLog(this.runsRoot);
  }

  /**
   * Opens a new run folder's evidence to write.
   *
   * @param runId The run's ID.
   * @param options `folder`: the run folder; `payloads`: where its payloads go (`pack` by default: small ones in
   * `payloads.pack`, format 2; `files`: each a file, format 1, as a copy of a run of that format keeps them).
   */
  async openRun(
    runId: string,
    options: { folder?: string; payloads?: PayloadLayout } = {},
  ): Promise<RunWriter> {
    checkRunId(runId);
    const folder = options.folder ?? join(this.runsRoot, runId);
    const writer = await FileRunWriter.create(runId, folder, { log: this.log, payloads: options.payloads });
    this.#spans.set(runId, writer.spans);
    return writer;
  }

  /** The spans file of a run this store opened. */
  #spansOf(runId: string) {
    const file = this.#spans.get(runId);
    if (file === undefined) {
      throw new RunNotFound(`cannot add spans to run "${runId}": this store did not open it; open it first`);
    }
    return file;
  }

  /**
   * Appends spans of a run this store opened to `<run folder>/spans.jsonl`: an index, outside `evidence/`.
   *
   * @throws RunNotFound when this store did not open the run; EvidenceError when the file cannot take them.
   */
  addSpans(runId: string, spans: readonly StoredSpan[]): Promise<void> {
    try {
      this.#spansOf(runId).append(spans);
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Reads a run under the runs root. */
  async readRun(runId: string): Promise<RunRecord> {
    checkRunIdToRead(runId);
    const folder = join(this.runsRoot, runId);
    let info: Deno.FileInfo;
    try {
      info = await Deno.lstat(folder);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) {
        throw new RunNotFound(`no run "${runId}" under the runs root ${this.runsRoot}`);
      }
      throw error;
    }
    if (info.isSymlink) {
      throw new RunNotFound(
        `"${runId}" under the runs root ${this.runsRoot} is a link; pass the run folder's path`,
      );
    }
    return new FileRunRecord(runId, folder);
  }

  /** The run IDs under the runs root that hold evidence, oldest first (run IDs begin with their time). */
  async runIds(): Promise<string[]> {
    const ids: string[] = [];
    try {
      for await (const entry of Deno.readDir(this.runsRoot)) {
        if (!entry.isDirectory) continue;
        try {
          await Deno.stat(join(this.runsRoot, entry.name, "evidence"));
          ids.push(entry.name);
        } catch { /* not a run folder */ }
      }
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return [];
      throw error;
    }
    return ids.sort();
  }

  /** The file store has no index: use a sqlite store. */
  runsReading(_uri: string): Promise<Q.RunReading[]> {
    return Promise.reject(new NeedsIndexedStore("prove runs --reading"));
  }
  /** The file store has no index: use a sqlite store. */
  runsOfExperiment(_uri: string): Promise<Q.RunSummary[]> {
    return Promise.reject(new NeedsIndexedStore("prove runs --experiment"));
  }
  /** The file store has no index: use a sqlite store. */
  experiments(): Promise<Q.ExperimentSummary[]> {
    return Promise.reject(new NeedsIndexedStore("prove experiments"));
  }
  /** The file store has no index: use a sqlite store. */
  experiment(_uri: string): Promise<Q.ExperimentDetail | null> {
    return Promise.reject(new NeedsIndexedStore("prove experiment show"));
  }
  /** The file store has no index: use a sqlite store. */
  runsOfAgent(_name: string, _options?: { version?: string }): Promise<Q.RunSummary[]> {
    return Promise.reject(new NeedsIndexedStore("prove runs --agent"));
  }
  /** The file store has no index: use a sqlite store. */
  agents(): Promise<Q.AgentSummary[]> {
    return Promise.reject(new NeedsIndexedStore("prove agents"));
  }
  /** The file store has no index: use a sqlite store. */
  agent(_name: string): Promise<Q.AgentDetail | null> {
    return Promise.reject(new NeedsIndexedStore("prove agent show"));
  }
  /** The file store has no index: use a sqlite store. */
  run(_runId: string): Promise<Q.RunDetail | null> {
    return Promise.reject(new NeedsIndexedStore("a run's row"));
  }
  /** The file store has no index: use a sqlite store. */
  access(_runId: string): Promise<Q.AccessEntry[]> {
    return Promise.reject(new NeedsIndexedStore("prove access"));
  }
  /** The file store has no index: use a sqlite store. */
  inputs(_runId: string): Promise<Q.InputEntry[]> {
    return Promise.reject(new NeedsIndexedStore("a run's inputs"));
  }
  /**
   * Writes an assessment of a sealed run, or of one of its events or spans, to the run folder's
   * `assessments.jsonl`, hash-chained from its seal. An experiment's need an indexed store.
   */
  assess(
    target: AssessTarget,
    name: string,
    value: unknown,
    options: AssessOptions = {},
  ): Promise<Assessment> {
    return assessInFolder((id) => this.readRun(id), target, { name, value, options });
  }
  /** The assessments of a run, from its folder's `assessments.jsonl`, oldest first. */
  async assessments(runId: string): Promise<Assessment[]> {
    return await assessmentsInFolder(await this.readRun(runId));
  }
  /** The file store keeps no experiment's assessments: use a sqlite store. */
  experimentAssessments(_uri: string): Promise<Assessment[]> {
    return Promise.reject(new NeedsIndexedStore("an experiment's assessments"));
  }
  /** The spans of a trace: the file store has no index, so it reads each run's span index and events. */
  async trace(traceId: string): Promise<TraceSpan[]> {
    const id = traceIdOf(traceId);
    return await traceOfRuns(this, await this.runIds(), id, { scan: true });
  }

  /** Closes the log's run index, if it is open. */
  close(): Promise<void> {
    this.log.close();
    return Promise.resolve();
  }

  /** Closes the store at the end of an `await using` block. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

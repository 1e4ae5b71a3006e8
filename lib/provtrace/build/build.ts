/**
 * The build: each sealed run of a provevi store that the trace database lacks (or one run, again), checked
 * with provevi's `verifyRun` first, then written with its source, all or nothing, in batches of runs that
 * commit together.
 * @module
 */
import type { Catalog } from "../../provcat/mod.ts";
import type { DatabaseSync } from "node:sqlite";
import type { EvidenceStore } from "../../provevi/mod.ts";
import { ProveviError } from "../../provevi/evidence/mod.ts";
import { openStore } from "../../provevi/runs/mod.ts";
import { openTraceDb, readRowsKey } from "../db/mod.ts";
import { RowWriter } from "./_row_writer.ts";
import { catalogOpener, type SourceRun, sourceRun } from "./_source_run.ts";
import { SOURCE_WORKERS, SourceWorkers } from "./_source_workers.ts";

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
  /**
   * The catalog to open where `catalog` is not given: a config file (else `PROVCAT_CONFIG`, else `provcat.yaml`)
   * and a tenant, as `Catalog.open` takes them, opened for each run that needs one. Unlike a `catalog`, it can
   * be sent to the workers that prepare a large build's runs on the machine's other core.
   */
  catalogConfig?: { configPath?: string; tenant?: string };
  /** Called after each run, for a progress line. */
  onProgress?: (done: number, total: number, runId: string) => void;
  /**
   * The rows key's file (`readRowsKey`), made when missing: each run's rows are sealed with it, so `check` and
   * the exports trust them without building the run again. None by default; the CLI gives its default path.
   */
  keyFile?: string;
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
 * import { buildTrace } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const db = `${await Deno.makeTempDir()}/trace.db`;
 * const result = await buildTrace({ store: "file", runs: "fixtures/runs", db });
 * assert.deepEqual(result.added.map((r) => r.run_id), ["run-20261129T120000Z-0badc0de"]);
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
  const key = options.keyFile === undefined ? null : await readRowsKey(options.keyFile, { create: true });
  const batch = new Batch(db, new RowWriter(db, { key }));
  try {
    await addRuns(store, { ids, have, options, batch, result });
    batch.commit();
  } catch (error) {
    batch.keep(); // the runs written before the failure stay written
    throw error;
  }
  return result;
}

/** Reads, verifies and writes the runs `ids`, in order, into `result`. */
async function addRuns(
  store: EvidenceStore,
  job: {
    ids: string[];
    have: Set<string>;
    options: TraceBuildOptions;
    batch: Batch;
    result: TraceBuildResult;
  },
): Promise<void> {
  const { ids, have, options, batch, result } = job;
  // Runs are read and verified a few at a time (each waits on the disk), and written one at a time, in order;
  // with workers, they are prepared there, on the machine's other core, while this thread writes.
  await using workers = useWorkers(options, ids.length)
    ? SourceWorkers.start(SOURCE_WORKERS.count, {
      uri: options.store,
      ...(options.runs === undefined ? {} : { runs: options.runs }),
      allowUnverified: options.allowUnverified === true,
      ...(options.catalogConfig === undefined ? {} : { catalog: options.catalogConfig }),
    })
    : null;
  const catalog = options.catalog ??
    (options.catalogConfig === undefined ? undefined : catalogOpener(options.catalogConfig));
  const here = (i: number): Promise<Prepared> =>
    sourceRun(store, ids[i]!, {
      ...(catalog === undefined ? {} : { catalog }),
      ...(options.allowUnverified ? { allowUnverified: true } : {}),
    }).catch((error) => ({ error }));
  const prepared: Promise<Prepared>[] = [];
  const prepare = (i: number) => {
    if (i < ids.length) {
      // A run no worker prepared (it failed there) is prepared here, and fails here as it would have.
      prepared[i] = workers === null ? here(i) : workers.prepare(i, ids[i]!).then((run) => run ?? here(i));
    }
  };
  const ahead = workers === null ? AT_ONCE : WORKER_AHEAD;
  for (let i = 0; i < ahead; i++) prepare(i);
  let done = 0;
  for (let i = 0; i < ids.length; i++) {
    const runId = ids[i]!;
    const ready = await prepared[i]!;
    delete prepared[i];
    prepare(i + ahead);
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
      const count = batch.writeRun(runId, {
        source: ready.source,
        rows: ready.rows,
        replace: have.has(runId),
        manifestSha256: ready.manifestSha256,
      });
      result.added.push({
        run_id: runId,
        verified: ready.problems.length === 0,
        problems: ready.problems,
        rows: count,
      });
    }
    options.onProgress?.(++done, ids.length, runId);
  }
}

/**
 * Runs written in batches: each run is all or nothing (a savepoint), and a batch of runs is one commit, so a
 * build does not pay a commit (and the rewrite of the tables' shared pages) for each small run. A build that
 * stops part way keeps the batches committed; the runs of the batch it was writing are added by the next build.
 */
class Batch {
  #db: DatabaseSync;
  #writer: RowWriter;
  #rows = 0;
  #began = 0;

  constructor(db: DatabaseSync, writer: RowWriter) {
    this.#db = db;
    this.#writer = writer;
  }

  /** Writes one run in the open batch (opening one), and commits the batch once it is large or old enough. */
  writeRun(runId: string, run: Parameters<RowWriter["writeRun"]>[1]): number {
    if (!this.#db.isTransaction) {
      this.#db.exec("BEGIN IMMEDIATE");
      this.#rows = 0;
      this.#began = performance.now();
    }
    const count = this.#writer.writeRun(runId, run);
    this.#rows += count;
    if (this.#rows >= BATCH_ROWS || performance.now() - this.#began >= BATCH_MS) this.commit();
    return count;
  }

  /** Commits the open batch, if any. */
  commit(): void {
    if (this.#db.isTransaction) this.#db.exec("COMMIT");
  }

  /** Commits what the batch holds after a failure elsewhere; if even that fails, the batch is dropped. */
  keep(): void {
    try {
      this.commit();
    } catch {
      if (this.#db.isTransaction) this.#db.exec("ROLLBACK");
    }
  }
}

/** A batch is committed once it holds this many rows… */
const BATCH_ROWS = 10_000;
/** …or once it has been open this long (ms), so a build of large runs still commits often. */
const BATCH_MS = 1_000;

/** How many runs are read and verified at once. */
const AT_ONCE = 8;

/** How many runs the workers are sent ahead of the one being written (the most held in memory at once). */
const WORKER_AHEAD = 8;

/**
 * Whether the build's runs are prepared by workers: each opens the store by its URI, so not when the store was
 * opened otherwise, nor with a catalog (an object or function the workers cannot be sent), nor for one run or a
 * few (the workers' start would cost more than they save).
 */
function useWorkers(options: TraceBuildOptions, count: number): boolean {
  return SOURCE_WORKERS.count > 0 && count >= SOURCE_WORKERS.minRuns && options.runId === undefined &&
    options.catalog === undefined &&
    typeof options.store === "string";
}

/** A run read, verified and mapped to rows, not yet written; or why not. */
type Prepared = SourceRun | { error: unknown };

/**
 * `copyRun(store, runId, policy)`: the copy of a sealed run in MLflow, for MLflow's viewer
 * (provevi-reference.txt, "Copy a run into MLflow"). The evidence stays the record; the copy is rebuilt from it
 * each time, and a second copy replaces the first.
 * @module
 */
import { dirname, join, resolve } from "node:path";
import { NeedsIndexedStore, ProveviError } from "../evidence/errors.ts";
import { checkRunIdToRead } from "../evidence/record.ts";
import { readEventsText } from "../evidence/read_events.ts";
import { verify } from "../evidence/verify.ts";
import type { EvidenceStore } from "../store/store.ts";
import type { Assessment } from "../store/assess.ts";
import type { EvidenceEvent } from "../evidence/event.ts";
import { experimentOfRun } from "../store/store_rows.ts";
import { isSqliteUri, sqlitePath } from "../store/store_uri.ts";
import { shownEndpoint, tryNormalEndpoint } from "../telemetry/endpoint.ts";
import type { Destination } from "../telemetry/policy_types.ts";
import type { TelemetryPolicy } from "../telemetry/policy.ts";
import { type CopyContent, copyContent } from "./copy_content.ts";
import { takeCopyLock } from "./copy_lock.ts";
import { MlflowClient } from "./mlflow_client.ts";
import { purgeDeletedRuns, startMlflowServer } from "./mlflow_server.ts";
import { refuseRedirects } from "./refuse_redirects.ts";
import { copyEnviron } from "./copy_environ.ts";
import type { Environ } from "../telemetry/otlp_target.ts";
import { writeCopy } from "./write_copy.ts";

/** Options of {@linkcode copyRun}. */
export interface CopyRunOptions {
  /** The variables (`MLFLOW_TRACKING_URI`, the refused ones, `PATH`); the process's by default. */
  environ?: Environ;
  /** The `mlflow` program for a database or the store's own file; else `mlflow` on the `PATH`. */
  mlflow?: string;
  /** How long to wait for another copy from the same store, in milliseconds (30 s by default). */
  lockWait?: number;
  /** Cancels the copy; a cancelled copy is cleaned up as a failed one. */
  signal?: AbortSignal;
  /** Told of each stage, for progress on a terminal. */
  onProgress?: (stage: string) => void;
}

/** What a copy made. */
export interface CopyResult {
  runId: string;
  /** The place as shown: the tracking server's URL, the database URL without its password, or the file. */
  place: string;
  destination: string;
  level: Destination["receives"];
  experimentId: string;
  experimentName: string;
  mlflowRunId: string;
  /** MLflow's trace ID, `tr-<provrun's trace ID>`. */
  traceId: string;
  spans: number;
  assessments: number;
  /**
   * The MLflow runs of earlier copies of the run that this copy deleted: in a database for good (with their
   * params, metrics and tags), on a tracking server marked deleted.
   */
  deleted: string[];
  /** Why the earlier copies in a database stay only marked deleted, when `mlflow gc` failed; else null. */
  purgeProblem: string | null;
}

/**
 * Copies a sealed run into MLflow, at the place that `MLFLOW_TRACKING_URI` names (a tracking server, or a
 * database through an MLflow server started for the copy) or, with it unset, into the sqlite store's own file,
 * if the policy approves that place; the matching destination gives the level.
 *
 * Guards, in order: the run ID; the place and the policy; the variables that would redirect the copy; the
 * run's chain (a run that does not verify is refused); one copy at a time per store. The copy's MLflow run has
 * the tag `provevi.copy.unfinished` until it is whole; a failed copy deletes what it wrote, and the next copy
 * deletes earlier copies (and a killed copy's leftovers) and writes the run again.
 *
 * @param store The store that holds the run.
 * @param runId The run's ID.
 * @param policy The telemetry policy.
 * @param options The variables, the `mlflow` program, a cancel signal.
 * @returns What was copied where.
 * @throws ProveviError for each guard, and MlflowError when MLflow cannot be reached or refuses.
 * @example
 * ```ts
 * import { copyRun, FileStore, ProveviError, TelemetryPolicy } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const policy = await TelemetryPolicy.load("fixtures/policies/live-viewer.yaml");
 * await using store = new FileStore({ runs: "fixtures/runs" });
 * // The first guard: a run ID that names no run is refused before MLflow is asked anything.
 * await assert.rejects(copyRun(store, "../elsewhere", policy), ProveviError);
 * ```
 */
export async function copyRun(
  store: EvidenceStore,
  runId: string,
  policy: TelemetryPolicy,
  options: CopyRunOptions = {},
): Promise<CopyResult> {
  checkRunIdToRead(runId);
  const environ = options.environ ?? copyEnviron();
  const url = environ.MLFLOW_TRACKING_URI?.trim() || null;
  const destination = policy.matchDestination("mlflow", url);
  if (destination === null) {
    throw new ProveviError(
      url === null
        ? `the telemetry policy approves no mlflow destination for the store's own file (MLFLOW_TRACKING_URI is unset)`
        : `the telemetry policy approves no mlflow destination for MLFLOW_TRACKING_URI ${
          tryNormalEndpoint(url) ?? shownEndpoint(url)
        }`,
    );
  }
  if (url === null && !isSqliteUri(store.uri)) {
    throw new ProveviError(
      `the store ${store.uri} has no file of its own for MLflow's tables: copy from a sqlite store, or set MLFLOW_TRACKING_URI to an MLflow server or database`,
    );
  }
  refuseRedirects(url, environ);

  const record = await store.readRun(runId);
  const check = await verify(record);
  if (!check.ok) {
    throw new ProveviError(
      `run ${runId} does not verify (${check.problems[0]?.message ?? "unknown problem"}${
        check.problems.length > 1 ? `, and ${check.problems.length - 1} more` : ""
      }); the copy in MLflow takes only a run whose evidence verifies: see prove verify ${runId}`,
    );
  }
  const events = readEventsText((await record.eventsText())!).events;
  const assessments = await assessmentsOf(store, runId);
  const content = await copyContent(events, {
    level: destination.receives,
    destination,
    policy,
    record,
    assessments,
    experimentAssessments: await experimentAssessmentsOf(store, events[0]),
  });

  options.onProgress?.("waiting for the store's copy lock");
  using _lock = await takeCopyLock(store, options.lockWait === undefined ? {} : { wait: options.lockWait });
  if (url !== null && /^https?:/i.test(url)) {
    const client = clientFor(url, environ, options.signal);
    return await finish(content, client, destination, shownEndpoint(url), options);
  }
  return await copyIntoDatabase(url ?? `sqlite:///${resolve(sqlitePath(store.uri))}`, {
    content,
    destination,
    environ,
    options,
    artifacts: url === null
      ? join(dirname(resolve(sqlitePath(store.uri))), "mlflow-artifacts")
      : join(store.runsRoot, ".mlflow-artifacts"),
  });
}

/**
 * The copy into a database: through an MLflow server started on it, which is asked to delete the earlier
 * copies for good (with MLflow's own gc; a tracking server's owner runs gc for theirs).
 */
async function copyIntoDatabase(
  backend: string,
  copy: {
    content: CopyContent;
    destination: Destination;
    environ: Environ;
    options: CopyRunOptions;
    artifacts: string;
  },
): Promise<CopyResult> {
  const { options, environ } = copy;
  options.onProgress?.("starting MLflow's server");
  await using server = await startMlflowServer(backend, {
    environ,
    artifacts: copy.artifacts,
    ...(options.mlflow ? { program: options.mlflow } : {}),
  });
  const client = clientFor(server.url, {}, options.signal);
  const result = await finish(copy.content, client, copy.destination, shownEndpoint(backend), options);
  if (result.deleted.length) {
    options.onProgress?.("deleting the earlier copies for good");
    try {
      await purgeDeletedRuns(backend, result.deleted, {
        environ,
        server: server.url,
        ...(options.mlflow ? { program: options.mlflow } : {}),
      });
    } catch (error) {
      if (!(error instanceof ProveviError)) throw error;
      result.purgeProblem = error.message;
    }
  }
  return result;
}

async function finish(
  content: CopyContent,
  client: MlflowClient,
  destination: Destination,
  place: string,
  options: CopyRunOptions,
): Promise<CopyResult> {
  const written = await writeCopy(
    client,
    content,
    options.onProgress ? { onProgress: options.onProgress } : {},
  );
  return {
    runId: content.runId,
    place,
    destination: destination.name,
    level: destination.receives,
    experimentId: written.experimentId,
    experimentName: content.experiment,
    mlflowRunId: written.mlflowRunId,
    traceId: written.traceId,
    spans: content.spans.length,
    assessments: content.assessments.length,
    deleted: written.deleted,
    purgeProblem: null,
  };
}

function clientFor(url: string, environ: Environ, signal: AbortSignal | undefined): MlflowClient {
  return new MlflowClient(url, {
    ...(environ.MLFLOW_TRACKING_TOKEN ? { token: environ.MLFLOW_TRACKING_TOKEN } : {}),
    ...(environ.MLFLOW_TRACKING_USERNAME !== undefined && environ.MLFLOW_TRACKING_PASSWORD !== undefined
      ? { username: environ.MLFLOW_TRACKING_USERNAME, password: environ.MLFLOW_TRACKING_PASSWORD }
      : {}),
    ...(signal ? { signal } : {}),
  });
}

/** The assessments of the run's experiment, as a whole and of each version; none from a store without them. */
async function experimentAssessmentsOf(
  store: EvidenceStore,
  created: EvidenceEvent | undefined,
): Promise<Assessment[]> {
  const experiment = created?.type === "run_created" ? experimentOfRun(created)?.experiment : undefined;
  const questions = store as EvidenceStore & {
    experimentAssessments?: (uri: string) => Promise<Assessment[]>;
  };
  if (experiment === undefined || typeof questions.experimentAssessments !== "function") return [];
  try {
    return await questions.experimentAssessments(experiment);
  } catch (error) {
    if (error instanceof NeedsIndexedStore) return []; // the file store keeps no experiment's assessments
    throw error;
  }
}

async function assessmentsOf(store: EvidenceStore, runId: string): Promise<Assessment[]> {
  const questions = store as EvidenceStore & { assessments?: (id: string) => Promise<Assessment[]> };
  if (typeof questions.assessments !== "function") return [];
  try {
    return await questions.assessments(runId);
  } catch (error) {
    if (error instanceof NeedsIndexedStore) return []; // a store of its own that keeps none
    throw error;
  }
}

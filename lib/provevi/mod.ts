/**
 * provevi: the evidence of agent runs. The event format and hash chain, the stores, and every check.
 *
 * This is the evidence's public API (`@mahacata/prove/lib/provevi`): open a store ({@linkcode openStore}),
 * find a run and check it whole ({@linkcode findRun}, {@linkcode verifyRun}), list runs and ask across them
 * ({@linkcode listRuns}, {@linkcode questionsOf}), copy a run to another store or to MLflow
 * ({@linkcode exportRun}, {@linkcode copyRun}), replay its feed, serve its viewer, and the types of their
 * results and the errors a caller catches. The machinery (the chain's helpers, rows, schemas, the receiver)
 * stays in the subsystem folders, which the commands and tests import by path.
 *
 * @example
 * ```ts
 * import { findRun, verifyRun } from "@mahacata/prove/lib/provevi";
 * import assert from "node:assert/strict";
 *
 * const check = await verifyRun(await findRun("fixtures/runs/run-20261129T120000Z-0badc0de"));
 * assert.equal(check.ok, true);
 * assert.deepEqual(check.problems, []);
 * ```
 * @module
 */

// The errors a caller catches.
export {
  EvidenceError,
  EvidenceReadError,
  NeedsIndexedStore,
  ProveviError,
  RunNotFound,
  TelemetryPolicyError,
} from "./evidence/mod.ts";

// The evidence format: an event, a manifest, a run as the checks read it, a check and its problems.
export {
  type Check,
  type CodeInfo,
  type Confidence,
  EVENT_TYPES,
  type EventType,
  type EvidenceEvent,
  type Json,
  type LostEvent,
  type Manifest,
  type PayloadEntry,
  type Problem,
  PROBLEM_CODES,
  type ProblemCode,
  type ProblemWhere,
  type RunRecord,
  runsRoot,
  type RunStatus,
  storedPayloads,
} from "./evidence/mod.ts";

// Signing a run's seal and trusting a signature.
export {
  generateKeyPair,
  type PrivateKeyFile,
  type PublicKeyFile,
  readSigningKey,
  readTrustedKey,
  type SigningKey,
  type TrustedKey,
  writeKeyPair,
} from "./evidence/mod.ts";

// The stores.
export {
  type AccessEntry,
  type AgentDetail,
  type AgentSummary,
  type AgentVersion,
  type Assessment,
  type AssessOptions,
  type AssessTarget,
  type EvidenceStore,
  type ExperimentDetail,
  type ExperimentSummary,
  FileStore,
  type InputEntry,
  questionsOf,
  type RunDetail,
  type RunReading,
  type RunSummary,
  type RunWriter,
  type SealInfo,
  type StoreQuestions,
} from "./store/mod.ts";
export { SqliteStore, type SqliteStoreOptions } from "./sqlite/mod.ts";
export { PostgresStore, type PostgresStoreOptions, RunElsewhere } from "./postgres/mod.ts";

// A run wherever it is kept: open, find, check, list, copy, bundles.
export {
  type BundleRecord,
  commitBundle,
  type ExportOptions,
  exportRun,
  findRun,
  findRunOrBundle,
  listRuns,
  type ListRunsOptions,
  openStore,
  type OpenStoreOptions,
  RUN_LIST_STATUSES,
  type RunCheck,
  type RunList,
  type RunListStatus,
  type RunRow,
  verifyRun,
  type VerifyRunOptions,
} from "./runs/mod.ts";

// The log of all runs: a run's proof, the audit of a store's log, and the trust policy that `verifyRun`'s
// `log` option takes. The log's hashing, tiles, notes and witnesses stay in log/mod.ts.
export {
  type CosignatureVerifier,
  type InLog,
  type LogAudit,
  logVerifier,
  type NoteVerifier,
  type TrustPolicy,
  witnessVerifier,
} from "./log/mod.ts";
export { auditStoreLog, runProof, waitForRun } from "./runs/mod.ts";

// The difference between two runs: where they first diverge, and each difference.
export { type DiffOptions, diffRuns, type DiffSide, type Divergence, type RunDiff } from "./diff/mod.ts";

// Experiments.
export {
  type Experiment,
  ExperimentError,
  type PinnedExperiment,
  readExperiment,
  writeExperiment,
} from "./experiments/mod.ts";

// The telemetry policy.
export { type Level, TelemetryPolicy } from "./telemetry/mod.ts";

// The live feed and its replay.
export {
  answerOf,
  type EventItem,
  type FeedDoneItem,
  type FeedEventItem,
  type FeedItem,
  type FeedStatus,
  type FeedTextItem,
  payloadOf,
  replay,
  type ReplayOptions,
  ReplayRefused,
  shownAt,
} from "./live/mod.ts";

// The viewer that `prove ui` serves, and its pages' data.
export {
  compareRuns,
  type CompareSide,
  type RunView,
  runView,
  type RunViewOptions,
  serveViewer,
  type ServeViewerOptions,
  type Viewer,
  type ViewerHandler,
  viewerHandler,
  type ViewerOptions,
} from "./viewer/mod.ts";
// The limits of the viewer's door (and every other door of the toolkit), and what it tells of a refusal.
export { type DoorLimits, type DoorRefusal } from "./guard/mod.ts";

// What a run's model calls cost: the price table a run pins (prove cost recomputes it).
export { type ModelPrice, PRICE_KINDS, PriceTable } from "./cost/mod.ts";

// The copy in MLflow.
export { type CopyResult, copyRun, type CopyRunOptions, MlflowError } from "./mlflow/mod.ts";

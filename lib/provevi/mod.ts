/**
 * provevi: the evidence of agent runs. The event format and hash chain, the stores, and every check.
 *
 * @example
 * ```ts
 * import { findRun, verifyRun } from "./mod.ts";
 * const check = await verifyRun(await findRun("fixtures/runs/run-20261129T120000Z-0badc0de"));
 * console.log(check.ok, check.problems);
 * ```
 * @module
 */
export * from "./evidence/mod.ts";
export * from "./store/mod.ts";
export * from "./runs/mod.ts";
export * from "./diff/mod.ts";
export * from "./experiments/mod.ts";
export * from "./telemetry/mod.ts";
export * from "./live/mod.ts";
export * from "./viewer/mod.ts";
export * from "./receiver/mod.ts";
export * from "./sqlite/mod.ts";
export * from "./postgres/mod.ts";
export * from "./cost/mod.ts";
// The log of all runs: what a user of the library needs (a store's log, proofs, the check with a trust policy, the
// witness); its hashing, tiles, notes and planning stay inside (lib/provevi/log/mod.ts).
export {
  type AppendResult,
  type AuditedStore,
  auditLog,
  checkCheckpoint,
  type Checkpoint,
  type CheckpointRefusal,
  checkRunInLog,
  type CosignatureVerifier,
  cosignLatest,
  FileLog,
  type InLog,
  LEAF_FORMAT,
  leafBytes,
  leafHash,
  leafOfSeal,
  type LogAudit,
  type LogKey,
  type LogStorage,
  logVerifier,
  type Note,
  type NoteSignature,
  type NoteSigner,
  type NoteVerifier,
  parseCheckpoint,
  parseNote,
  parseTlogProof,
  PROOF_FILE,
  proofProvesRun,
  proveConsistency,
  proveRun,
  readRunLogFiles,
  RowsLog,
  type RunLeaf,
  type RunSeal,
  serveWitness,
  type TlogProof,
  tlogProofText,
  type TrustedCheckpoint,
  type TrustPolicy,
  verifyConsistency,
  verifyInclusion,
  Witness,
  type WitnessAnswer,
  type WitnessOptions,
  type WitnessReply,
  type WitnessServer,
  witnessVerifier,
} from "./log/mod.ts";
export {
  type CopyContent,
  copyContent,
  copyEnviron,
  type CopyResult,
  copyRun,
  type CopyRunOptions,
  experimentName,
  MLFLOW_VERSION,
  MlflowError,
  type MlflowServer,
  type MlflowViewer,
  type MlflowViewerOptions,
  openMlflowViewer,
  redirectingVariables,
  REFUSED_VARIABLES,
  refuseRedirects,
  RUN_ID_TAG,
  startMlflowServer,
  UNFINISHED_TAG,
} from "./mlflow/mod.ts";

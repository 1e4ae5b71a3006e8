/**
 * provrun: the runtime. A run file becomes a recorded, verified run: run context, recorder, broker, resolver,
 * stager, backends (call, and the tool-calling agent with its sandbox, tools folder and MCP servers), capture of
 * model calls and tool calls, the permission check, outputter and bundle.
 *
 * This is the runtime's public API (`@mahacata/prove/lib/provrun`): the run file ({@linkcode RunFile}),
 * {@linkcode runFile} with its options and outcome, {@linkcode runAgent} for an agent held as data, the parts a caller attaches to a run
 * ({@linkcode RunPart}), the check of the process's permissions, and the errors a run's outcome names. The
 * backends, the sandbox and the run's telemetry stay in the subsystem folders.
 *
 * @example
 * ```ts
 * import { RunFile, runFile } from "@mahacata/prove/lib/provrun";
 * import assert from "node:assert/strict";
 *
 * const runs = await Deno.makeTempDir();
 * const file = RunFile.parse(`
 * run: { org: acme, domain: demo, env: dev }
 * agent: { name: hello, backend: call, model: "test:", script: { model: echo-1, turns: [{ text: Hello. }] } }
 * prompt: Say hello.
 * `);
 * const outcome = await runFile(file, { runs });
 * assert.equal(outcome.status, "completed");
 * ```
 * @module
 */

// A run file, and running it.
export {
  type AgentSpec,
  type InputSpec,
  type McpSpec,
  RunFile,
  type RunFileData,
  type RunSection,
} from "./run/mod.ts";
export {
  type AgentTask,
  checkPermissions,
  type PermissionNeed,
  permissionNeeds,
  runAgent,
  type RunCatalog,
  runFile,
  type RunOptions,
  type RunOutcome,
} from "./runner/mod.ts";
export type { MlflowCopyOutcome, OutgoingSpan, SpanRedactor } from "./telemetry/mod.ts";

// An app built on the OpenAI Agents SDK, recorded in process from the SDK's spans.
export { type AgentsSdkAgent, runAgentsSdk } from "./runner/mod.ts";
export { type AgentsSdkApp, HooksChanged, ProvrunTracingProcessor } from "./backends/mod.ts";

// The parts a caller attaches to a run, and what they see of it.
export type {
  BackendSetup,
  EvidenceMode,
  PartRun,
  PartUsage,
  RunContext,
  RunPart,
  SealedRun,
  ToolCall,
  ToolReturn,
  ToolWrap,
} from "./run/mod.ts";
export { EvidenceRecorder } from "./run/mod.ts";
export type { Backend, BackendJob, BackendResult, BackendStatus, BackendUpdate } from "./backends/mod.ts";

// Replay, fork and resume a recorded run: its model answers and tool results served from its evidence.
export {
  type ComparedOutcome,
  type ForkChange,
  type ForkOptions,
  forkRun,
  ReplayDiverged,
  replayRun,
  type ReplayRunOptions,
  type ResumeOutcome,
  resumeRun,
  ResumeStopped,
  RunNotReplayable,
  type ServedDivergence,
  type ServedOutcome,
  type ServeOptions,
} from "./replay/mod.ts";

// The errors of a run: what `RunOutcome.error.name` names, and what `runFile` throws before a run starts.
export {
  AccessDenied,
  CancelledError,
  CatalogMissing,
  InputChanged,
  LinkFound,
  ModelKeyMissing,
  OutputMissing,
  OutputTooLarge,
  PathRefused,
  PayloadTooLarge,
  PermissionMissing,
  RunFileError,
  StagingError,
  ToolFailed,
  ToolSetError,
  ToolTimeout,
} from "./run/mod.ts";
export { TelemetryRefused } from "./telemetry/mod.ts";

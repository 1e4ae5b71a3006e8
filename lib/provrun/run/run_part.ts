/**
 * A part of a run: what the run's core calls at named points, so that telemetry, the live feed, the copy in
 * MLflow, signing, the bundle and the run's limits (and later a model gateway, replay and a log of runs) attach
 * to a small core instead of being woven into it, as Hono composes its middleware around one request path.
 *
 * The core calls the hooks in this order, each part in the order given (the ones that tear down, in the
 * reverse order):
 *
 * 1. before the run folder exists, the part is made: a part that refuses (a key that cannot be read, a policy
 *    the run file would widen) throws its user error then, and no run folder is made;
 * 2. `beforeStart(run)`: the run folder exists, before its first event;
 * 3. `facts()`, into `run_created`'s data; then `afterCreated(run)`, for what a part writes at the start;
 * 4. while the run works: `onEvent`, `onText`, `onReply`, `onUsage`; `prepareBackend` and `modelFor` before
 *    the backend starts, and `wrapTool` where it runs its tools;
 * 5. `beforeLastEvent(run)`, before `run_completed` or `run_failed`; then `endFacts()`, into that event's data;
 * 6. `beforeSeal(run)` (reverse order), then the seal with the `signingKey` of the first part that has one;
 * 7. `afterSeal(sealed)`, when the seal made a manifest: an error fails the run's outcome, not its evidence;
 * 8. `close()` (reverse order), always: also when the run is refused before it starts.
 * @module
 */
import type { Tracer, TracerProvider } from "@opentelemetry/api";
import type { LanguageModelV4 } from "@ai-sdk/provider";
import type { EvidenceEvent, Json, Manifest, SigningKey } from "../../provevi/mod.ts";
import type { RunContext } from "./run_context.ts";
import type { AgentSpec, RunFile } from "./run_file.ts";

/** A run as its parts see it once it has a folder. */
export interface PartRun {
  /** The run's context: its ID, folder, recorder and signal. */
  readonly ctx: RunContext;
  /** The run file. */
  readonly file: RunFile;
  /** The run's URI, `run://<org>/<domain>/<env>/<run_id>`. */
  readonly uri: string;
  /** Stops the run: it ends with `run_failed`, the error being `reason` (a `CancelledError` for a limit). */
  abort(reason: unknown): void;
}

/** A run that was sealed, as `afterSeal` gets it. */
export interface SealedRun {
  readonly runId: string;
  readonly folder: string;
  readonly uri: string;
  readonly manifest: Manifest;
}

/** One call of one of the agent's tools, as `wrapTool` sees it. */
export interface ToolCall {
  /** The tool's name. */
  readonly tool: string;
  /** The model's ID of the call. */
  readonly callId: string;
  /** The arguments, checked against the tool's schema. */
  readonly args: unknown;
}

/** The run and the event of its evidence that a part served a model call's answer or a tool's result from. */
export interface ServedFrom {
  /** The run whose evidence holds it. */
  run_id: string;
  /** The `seq` of its event there. */
  seq: number;
}

/**
 * The key under which a model's result (or the error it throws) names what it was served from: a model that a
 * part serves from a run's evidence (replay, fork, resume) sets it, and the capture records it in the call's
 * `model_called` as `data.served_from`. A symbol, so no provider's answer can claim it.
 */
export const SERVED_FROM: unique symbol = Symbol("provrun.served_from");

/** What a tool call gives: its value, and what the tool wrote to its console. */
export interface ToolReturn {
  value: unknown;
  console: string;
  /** Where a part served the result from, without running the tool (`tool_called`'s `data.served_from`). */
  served?: ServedFrom;
}

/**
 * A tool as a run's evidence records it (`sandbox_started`'s `data.tools`): what a replay offers the model in
 * place of the sandbox's and the MCP servers' tools.
 */
export interface RecordedTool {
  name: string;
  description: string;
  input_schema: { [key: string]: unknown };
  kind: "builtin" | "folder" | "mcp" | "output";
  executed_by: string;
  sandboxed: boolean;
  idempotent?: boolean;
}

/** A hook around a tool call: runs it (or gives a value without it), inside the call's recorded step. */
export type ToolWrap = (call: ToolCall, run: () => Promise<ToolReturn>) => Promise<ToolReturn>;

/** What a run's backend starts with, which a part may change before the model is made (`prepareBackend`). */
export interface BackendSetup {
  /** The agent spec the backend runs (the run file's, which `run_created` records). */
  agent: AgentSpec;
  /** Reads the variables the backend and the model read (API keys); `Deno.env` when undefined. */
  env: ((name: string) => string | undefined) | undefined;
  /** Facts that the backend's `sandbox_started` records (a model gateway's address and the key's variable). */
  facts?: { [key: string]: Json };
  /**
   * True when a part records each model call at the boundary (a model gateway): the backend's capture then only
   * observes the calls (text, usage) and records none of its own, so that no call is recorded twice.
   */
  modelCallsRecorded?: boolean;
  /**
   * The description of a tool the model was offered, by its name (else by the name the model gave the call with
   * this ID), or null: a model gateway reads them from an agent program's requests, so that the spans of the
   * program's tool calls carry them.
   */
  toolDescription?: (name: string, callId?: string) => string | null;
  /**
   * The tools to offer as a run recorded them, in place of the sandbox and the MCP servers, which are then not
   * started (a replay): no tool runs, and each call goes to the parts' `wrapTool`, which must answer it.
   */
  servedTools?: readonly RecordedTool[] | undefined;
}

/** The token counts of one model call, for a part that counts them. */
export interface PartUsage {
  input: number;
  output: number;
}

/**
 * A part of a run, attached to the run's core at named points; every hook is optional.
 *
 * @example
 * ```ts
 * import type { RunPart } from "./run_part.ts";
 * // Counts the model calls of a run: pass it as `runFile(file, { parts: [counter] })`.
 * let calls = 0;
 * const counter: RunPart = {
 *   name: "counter",
 *   onEvent: (event) => void (event.type === "model_called" && calls++),
 * };
 * ```
 */
export interface RunPart {
  /** The part's name, such as `telemetry`. */
  readonly name: string;
  /** The run's tracer and tracer provider, when this part owns them (the telemetry); the first one counts. */
  readonly tracing?: { readonly tracer: Tracer; readonly provider: TracerProvider };
  /** The key that signs the seal; the first part's that has one counts. */
  readonly signingKey?: SigningKey;
  /**
   * The cost of a model call from the data of its `model_called` (the run's price table), or null when the table
   * does not list the model; the first part's that has it counts.
   */
  readonly price?: (data: { [key: string]: Json }) => string | null;
  /**
   * True when the part serves every model call and every tool call of the run from a run's evidence (a replay):
   * the run reaches no provider and starts no tool, so it needs neither the model's key nor the permissions of
   * the provider's host, the sandbox and the MCP servers, and none is asked for.
   */
  readonly servesAll?: boolean;
  /** The run folder exists; the run has written nothing yet. */
  beforeStart?(run: PartRun): Promise<void> | void;
  /** Facts that `run_created` records in its data. */
  facts?(): { [key: string]: Json };
  /** After `run_created`: the events a part writes at the start of the run. */
  afterCreated?(run: PartRun): Promise<void>;
  /** Each event, as it is written. */
  onEvent?(event: EvidenceEvent): void;
  /** Each piece of the model's text, as it streams. */
  onText?(piece: string): void;
  /** A whole reply of the model that did not stream, before its `model_called`. */
  onReply?(reply: Json): void;
  /** The tokens of each model call, after its `model_called`. */
  onUsage?(usage: PartUsage): void;
  /**
   * Changes what the backend starts with: a model gateway points the provider at itself (`agent.provider`) and
   * gives a token of the run in place of the key (`env`). The parts change it in turn, the first part first.
   */
  prepareBackend?(setup: BackendSetup, run: PartRun): Promise<BackendSetup>;
  /**
   * The model the run's backend calls, in place of the route's provider (replay serves recorded answers);
   * null to leave it to the route. The capture still records every request it answers.
   */
  modelFor?(agent: AgentSpec, run: PartRun): Promise<LanguageModelV4 | null>;
  /** Runs one tool call, inside its recorded step: call `run` for the tool itself, or give a value without it. */
  wrapTool?(call: ToolCall, run: () => Promise<ToolReturn>): Promise<ToolReturn>;
  /** Before the run's last event (`run_completed` or `run_failed`). */
  beforeLastEvent?(run: PartRun): Promise<void>;
  /** Facts that the run's last event (`run_completed` or `run_failed`) records in its data. */
  endFacts?(): { [key: string]: Json };
  /** After the run's last event, before the seal. */
  beforeSeal?(run: PartRun): Promise<void>;
  /** After the seal. A part that throws fails the run's outcome; the evidence is sealed already. */
  afterSeal?(sealed: SealedRun): Promise<void>;
  /** Releases what the part holds; called once, whether the run started or not. */
  close?(): Promise<void>;
}

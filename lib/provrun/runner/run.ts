/**
 * `runFile`: a run file becomes a recorded, verified run. It checks what the run needs before anything is written
 * (the process's permissions, the model's key), opens the run's parts (signing, telemetry, the cost, the model
 * gateway, the live feed, the bundle, the copy in MLflow, the limits, and the caller's own), and hands them to
 * the run's core
 * (`run_core.ts`), which records the run and calls them at their points.
 * @module
 */
import type { EvidenceStore, FeedItem, Manifest } from "../../provevi/mod.ts";
import { openStore } from "../../provevi/runs/mod.ts";
import type { Catalog } from "../../provcat/mod.ts";
import type { Backend } from "../backends/backend.ts";
import { checkModelKey } from "../backends/models.ts";
import { errorMessage, errorName } from "../run/recorder.ts";
import { newRunId } from "../run/run_context.ts";
import type { RunFile } from "../run/run_file.ts";
import type { RunPart } from "../run/run_part.ts";
import type { TelemetryPolicy } from "../../provevi/telemetry/policy.ts";
import { TelemetryPart } from "../telemetry/telemetry_part.ts";
import { declaredNames } from "../telemetry/declared_names.ts";
import type { SpanRedactor } from "../telemetry/senders.ts";
import { LiveFeedPart } from "../telemetry/live_feed_part.ts";
import { MlflowCopyPart } from "../telemetry/mlflow_copy_part.ts";
import type { MlflowCopyOutcome } from "../telemetry/mlflow_copy.ts";
import { DEFAULT_TOOLS } from "../sandbox/tools.ts";
import { checkPermissions } from "./permissions.ts";
import { BundlePart } from "./bundle_part.ts";
import { LimitsPart } from "./limits_part.ts";
import { signingPart } from "./signing_part.ts";
import { RunParts } from "./run_parts.ts";
import { runCore } from "./run_core.ts";
import { CostPart } from "./cost_part.ts";
import { GatewayPart, type GatewayPartOptions } from "../gateway/gateway_part.ts";

/** The catalog a run resolves its inputs through, pins its experiment with and commits its bundle to. */
export type RunCatalog = Catalog;

/** Options of {@linkcode runFile}. */
export interface RunOptions {
  /** The catalog that resolves the inputs and takes the bundle. */
  catalog?: RunCatalog;
  /** The store; else the run file's `run.store`, else the file store. */
  store?: EvidenceStore;
  /** The runs root of a store that this call opens. */
  runs?: string;
  /** Cancels the run: it ends with `run_failed`, error `CancelledError`, sealed. */
  signal?: AbortSignal;
  /** Called with each event as it is written (progress); the event itself comes third. */
  onEvent?: (type: string, seq: number, event: { data: Record<string, unknown>; time: string }) => void;
  /** Called once the run has its ID and folder, before its first event, so a run cut short can be found. */
  onStart?: (run: { runId: string; folder: string }) => void;
  /** Reads variables (API keys); `Deno.env` by default. */
  env?: (name: string) => string | undefined;
  /** The backend to use instead of the run file's, for tests. */
  backend?: Backend;
  /** The private key file that signs the seal, instead of the run file's `run.sign_key`. */
  signKey?: string;
  /** The time the run starts, for its ID. */
  now?: Date;
  /** The telemetry policy; else the file that PROVRUN_TELEMETRY_POLICY names; else one that approves nothing. */
  policy?: TelemetryPolicy;
  /** The variables the run's telemetry reads (OTEL_*, MLFLOW_TRACKING_URI, proxies); the process's by default. */
  environ?: Readonly<Record<string, string | undefined>>;
  /**
   * Refuse a run whose process may connect to a destination host that a variable names and the policy does
   * not list (true by default). provrun never sends there either way; false only drops the extra guard.
   */
  guardNet?: boolean;
  /**
   * The redaction hook: called with each span that leaves for an OTLP or Logfire destination (after the
   * policy's cut), it may drop or replace attributes of what is sent; it never changes what the run records.
   */
  redact?: SpanRedactor;
  /** Called with each item of the run's live feed, at the level of the policy's live destination. */
  onFeed?: (item: FeedItem) => void;
  /** Called with each piece of the model's text as it streams, for the caller's own progress line. */
  onText?: (piece: string) => void;
  /** More parts of the run, attached after the built-in ones (see {@linkcode RunPart}). */
  parts?: readonly RunPart[];
  /** The model gateway's `fetch` and timeouts, for tests (the gateway serves agent programs and `agent.gateway`). */
  gateway?: GatewayPartOptions;
}

/** The outcome of a run. */
export interface RunOutcome {
  runId: string;
  folder: string;
  status: "completed" | "failed";
  /** The error that failed the run. */
  error?: { name: string; message: string };
  manifest: Manifest | null;
  /** The committed bundle, when the run file asked for one. */
  bundle: { uri: string; pinned: string | null } | null;
  /** The model's final answer, when there is one. */
  text: string | null;
  /**
   * The copy in MLflow at the seal, when the policy approves an MLflow place: it runs beside the result and
   * never rejects; await it to see how it ended. Null when no place is approved.
   */
  mlflowCopy?: Promise<MlflowCopyOutcome> | null;
}

/**
 * Runs a run file: the library entry of `provr run`.
 *
 * @param file The run file.
 * @param options The catalog, the store, a cancel signal.
 * @returns The outcome; a failed run is an outcome, not an exception.
 * @throws ProveviError only when the run cannot start, and then before its run folder exists: the store cannot
 *   be opened, the process's permissions do not cover what the run needs (PermissionMissing, naming the flag),
 *   the model's API key is not set (ModelKeyMissing), the signing key cannot be read, the run file's telemetry
 *   section would widen the policy (TelemetryPolicyError), or the process may reach a destination host the
 *   policy does not list (TelemetryRefused); also when the run folder cannot be made.
 * @example
 * ```ts
 * import { findRun, RunFile, runFile, verifyRun } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const runs = await Deno.makeTempDir();
 * const { runId, folder } = await runFile(RunFile.parse(`
 * run: { org: acme, domain: demo, env: dev }
 * agent: { name: hello, backend: call, model: "test:", script: { model: echo-1, turns: [{ text: Hello. }] } }
 * prompt: Say hello.
 * `), { runs });
 * assert.equal((await verifyRun(await findRun(folder))).ok, true);
 * assert.match(runId, /^run-/);
 * ```
 */
export async function runFile(file: RunFile, options: RunOptions = {}): Promise<RunOutcome> {
  const spec = file.data;
  const ownStore = options.store === undefined;
  const store = options.store ??
    await openStore(spec.run.store ?? "file", options.runs === undefined ? {} : { runs: options.runs });
  try {
    return await runWithStore(file, store, options);
  } finally {
    if (ownStore) await store.close();
  }
}

/** The built-in parts of a run, and the outcomes the runner reads from them. */
interface OpenParts {
  parts: RunParts;
  bundle: BundlePart;
  mlflow: MlflowCopyPart;
}

async function runWithStore(file: RunFile, store: EvidenceStore, options: RunOptions): Promise<RunOutcome> {
  const runId = newRunId(options.now);
  const { parts, bundle, mlflow } = await openParts(file, { runId, store, options });
  try {
    const core = await runCore(file, {
      runId,
      store,
      parts,
      catalog: options.catalog,
      env: options.env,
      backend: options.backend,
    });
    const { failure, manifest } = core;
    return {
      runId,
      folder: core.folder,
      status: failure === null && manifest?.status === "completed" ? "completed" : "failed",
      ...(mlflow.copy ? { mlflowCopy: mlflow.copy } : {}),
      ...(failure !== null ? { error: { name: errorName(failure), message: errorMessage(failure) } } : {}),
      manifest,
      bundle: bundle.bundle,
      text: core.text,
    };
  } finally {
    await parts.close();
  }
}

/**
 * Checks what the run needs and opens its parts, in the order their hooks are called, before the run folder
 * exists. A refusal (a permission the process lacks, a key that is not set, a signing key that cannot be read, a
 * telemetry policy the run file would widen, a destination host the policy does not list) throws, and closes the
 * parts opened before it and the caller's parts.
 */
async function openParts(
  file: RunFile,
  run: { runId: string; store: EvidenceStore; options: RunOptions },
): Promise<OpenParts> {
  const { runId, store, options } = run;
  const opened: RunPart[] = [callerPart(options)];
  const more = options.parts ?? [];
  try {
    // A replay serves every answer and result from the evidence: no provider is asked and no tool starts.
    const served = more.some((p) => p.servesAll);
    await checkPermissions(file, { runs: store.runsRoot, served });
    if (!served) checkModelKey(file.data.agent, options.env);
    opened.push(await signingPart(file, options.signKey));
    const telemetry = await TelemetryPart.open(runId, file, {
      store,
      ...(options.policy ? { policy: options.policy } : {}),
      ...(options.environ ? { environ: options.environ } : {}),
      ...(options.guardNet === undefined ? {} : { guardNet: options.guardNet }),
      ...(options.redact ? { redact: options.redact } : {}),
      // names below bodies (harden)
      declared: declaredNames(file.data.agent, DEFAULT_TOOLS, {
        agentId: `${file.data.run.org}/${file.data.run.domain}/${file.data.run.env}/${file.data.agent.name}`,
      }),
    });
    opened.push(telemetry);
    const cost = await CostPart.open(file, options.catalog);
    // A part that gives the run its model (a replay, a fork, a resume) answers the model calls itself, and the
    // capture records them with what they were served from: no gateway then, which would leave them unrecorded.
    const ownModel = more.some((p) => p.modelFor);
    opened.push(cost, ...(ownModel ? [] : [new GatewayPart(cost.price, options.gateway)]));
    const bundle = new BundlePart(file.data.run.bundle ?? false, {
      ...(options.catalog ? { catalog: options.catalog } : {}),
      store,
    });
    const mlflow = new MlflowCopyPart(telemetry.policy, store, options.environ);
    opened.push(
      new LiveFeedPart(telemetry.policy.liveLevel(), options.onFeed ? { onItem: options.onFeed } : {}),
      bundle,
      mlflow,
      new LimitsPart(file.data.agent.limits, options.signal),
    );
    return { parts: new RunParts([...opened, ...more]), bundle, mlflow };
  } catch (error) {
    await new RunParts([...opened, ...more]).close();
    throw error;
  }
}

/** The caller's own hooks: where the run is, each event, and the model's text as it streams. */
function callerPart(options: RunOptions): RunPart {
  return {
    name: "caller",
    beforeStart: (run) => options.onStart?.({ runId: run.ctx.runId, folder: run.ctx.folder }),
    onEvent: (e) => options.onEvent?.(e.type, e.seq, e),
    onText: (piece) => options.onText?.(piece),
  };
}

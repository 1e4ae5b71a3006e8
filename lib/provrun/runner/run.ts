/**
 * `runFile`: a run file becomes a recorded, verified run. It makes the run ID, asks the broker for each input,
 * pins and snapshots it through the catalog, stages it, runs the backend, checks the inputs again, hashes the
 * outputs, writes `run_completed` or `run_failed`, seals the evidence and commits the bundle.
 * @module
 */
import { join, resolve } from "node:path";
import type { Json } from "../../provevi/evidence/event.ts";
import {
  agentVersion,
  type EvidenceStore,
  type Manifest,
  openStore,
  readSigningKey,
  type SigningKey,
  writerProcess,
} from "../../provevi/mod.ts";
import { commitBundle } from "../../provevi/runs/bundle.ts";
import { type PinnedExperiment, readExperiment } from "../../provevi/experiments/experiment.ts";
import type { Catalog, Snapshot } from "../../provcat/mod.ts";
import { StubBroker } from "../run/broker.ts";
import type { Backend } from "../backends/backend.ts";
import { AgentBackend } from "../backends/agent_backend.ts";
import { CallBackend } from "../backends/call_backend.ts";
import { programBackend, UNCALLED_MODEL } from "./program_backends.ts";
import { captureModel } from "../backends/capture.ts";
import {
  AccessDenied,
  CancelledError,
  InputChanged,
  LinkFound,
  OutputMissing,
  OutputTooLarge,
} from "../run/errors.ts";
import { modelOf } from "../backends/models.ts";
import { checkPermissions } from "./permissions.ts";
import {
  collectOutputs,
  DEFAULT_OUTPUT_BYTES,
  DEFAULT_OUTPUTS_BYTES,
  findLinks,
  linkProblem,
  outputSizeProblem,
} from "../run/outputter.ts";
import { errorMessage, errorName, EvidenceRecorder } from "../run/recorder.ts";
import { newRunId, type RunContext, withRun } from "../run/run_context.ts";
import type { RunFile } from "../run/run_file.ts";
import { InProcessStager, type StagedInput } from "../run/stager.ts";
import { ProvcatResolver } from "../run/resolver.ts";
import { TelemetryPolicy } from "../../provevi/telemetry/policy.ts";
import { RunTelemetry } from "../telemetry/run_telemetry.ts";
import { declaredNames } from "../telemetry/declared_names.ts";
import { DEFAULT_TOOLS } from "../sandbox/tools.ts";
import { processEnviron } from "../telemetry/telemetry_env.ts";
import { LiveFeed } from "../telemetry/live_feed.ts";
import type { FeedItem } from "../../provevi/live/feed.ts";
import { type MlflowCopyOutcome, prepareMlflowCopy, startMlflowCopy } from "../telemetry/mlflow_copy.ts";
import { problemData } from "../../provevi/telemetry/telemetry_events.ts";

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
  /** Called with each item of the run's live feed, at the level of the policy's live destination. */
  onFeed?: (item: FeedItem) => void;
  /** Called with each piece of the model's text as it streams, for the caller's own progress line. */
  onText?: (piece: string) => void;
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
 * @throws ProveviError only when the run cannot start: the store or the run folder cannot be opened, the run
 *   file's telemetry section would widen the policy (TelemetryPolicyError), the process may reach a
 *   destination host the policy does not list (TelemetryRefused), or its permissions do not cover what the
 *   run needs (PermissionMissing, naming the flag).
 * @example
 * ```ts
 * import { RunFile, runFile } from "../mod.ts";
 * const outcome = await runFile(await RunFile.load("fixtures/tour/run.yaml"), {});
 * console.log(outcome.runId, outcome.status);
 * ```
 */
export async function runFile(file: RunFile, options: RunOptions = {}): Promise<RunOutcome> {
  const spec = file.data;
  const ownStore = options.store === undefined;
  const store = options.store ??
    await openStore(spec.run.store ?? "file", options.runs === undefined ? {} : { runs: options.runs });
  try {
    await checkPermissions(file, { runs: store.runsRoot });
    return await runWithStore(file, store, options);
  } finally {
    if (ownStore) await store.close();
  }
}

async function runWithStore(file: RunFile, store: EvidenceStore, options: RunOptions): Promise<RunOutcome> {
  const spec = file.data;
  // signing: the key is read before the run starts, so a bad key file fails the command, not the run
  const signPath = options.signKey ??
    (spec.run.sign_key ? resolve(file.folder, spec.run.sign_key) : undefined);
  const signingKey: SigningKey | null = signPath === undefined ? null : await readSigningKey(signPath);
  const runId = newRunId(options.now);
  // telemetry: the policy, the run's own tracer provider; refuses before the run folder exists
  const telemetry = await openRunTelemetry(runId, file, store, options);
  const writer = await store.openRun(runId);
  const folder = writer.folder;
  options.onStart?.({ runId, folder });
  for (const sub of ["input", "output", "scratch"]) await Deno.mkdir(join(folder, sub), { recursive: true });
  const actor = spec.run.actor ?? envOr(options, "USER") ?? envOr(options, "LOGNAME") ?? "unknown";
  const mode = spec.run.mode ?? (spec.run.env === "dev" ? "lenient" : "strict");
  const recorder = new EvidenceRecorder(writer, { actor, mode, tracer: telemetry.tracer }); // telemetry
  const live = await LiveFeed.open(runId, folder, telemetry.policy.liveLevel(), { // live feed
    ...(options.onFeed ? { onItem: options.onFeed } : {}),
  });
  recorder.onEvent = (e) => {
    options.onEvent?.(e.type, e.seq, e);
    live.event(e); // live feed
  };
  const controller = new AbortController();
  const onAbort = () => controller.abort(new CancelledError("the run was cancelled"));
  options.signal?.addEventListener("abort", onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  const limits = spec.agent.limits ?? {};
  const timer = limits.seconds !== undefined
    ? setTimeout(
      () => controller.abort(new CancelledError(`the run passed its limit of ${limits.seconds} seconds`)),
      limits.seconds * 1000,
    )
    : null;
  const ctx: RunContext = {
    runId,
    org: spec.run.org,
    domain: spec.run.domain,
    env: spec.run.env,
    actor,
    mode,
    folder,
    recorder,
    signal: controller.signal,
    tracerProvider: telemetry.provider, // telemetry
    spanRows: store, // agent programs' span receiver
  };
  const runUri = `run://${ctx.org}/${ctx.domain}/${ctx.env}/${runId}`;
  const mlflow = prepareMlflowCopy(telemetry.policy, store, options.environ); // the copy in MLflow at the seal
  recorder.startRoot(`invoke_agent ${spec.agent.name}`, {
    "gen_ai.operation.name": "invoke_agent",
    "gen_ai.agent.name": spec.agent.name,
    "gen_ai.request.model": spec.agent.model,
  });
  let text: string | null = null;
  let failure: unknown = null;
  let tokens = 0;
  // Steps 6 and 7 of the plan run for a failed run too, once each: what it staged is checked again, and what it
  // wrote is recorded, so that the record of a failed run still verifies and shows what the run left.
  let stager: InProcessStager | null = null;
  let inputsVerified = false;
  let outputsRecorded = false;
  const verifyInputs = async () => {
    if (inputsVerified || stager === null) return [];
    inputsVerified = true;
    const checks = await stager.verify();
    for (const check of checks) {
      await recorder.record({
        type: "input_verified",
        component: "InProcessStager",
        refs: [check.pinned],
        data: { name: check.name, sha256: check.sha256, expected: check.expected, ok: check.ok },
      });
    }
    return checks;
  };
  const recordOutputs = async (ended: boolean) => {
    if (outputsRecorded) return;
    outputsRecorded = true;
    const outputs = await collectOutputs(folder);
    for (const out of outputs) {
      await recorder.record({
        type: "output_artifact_created",
        component: "Outputter",
        refs: [`${runUri}/output/${out.path}`],
        data: { path: out.path, sha256: out.sha256, size: out.size },
      });
    } // Links planted in input/ or output/ (harden): the run fails, naming them, after its outputs are recorded.
    const links = [...await findLinks(folder, "input"), ...await findLinks(folder, "output")];
    if (links.length) throw new LinkFound(linkProblem(links));
    const tooLarge = outputSizeProblem(outputs, {
      one: spec.agent.limits?.output_bytes ?? DEFAULT_OUTPUT_BYTES,
      total: spec.agent.limits?.outputs_bytes ?? DEFAULT_OUTPUTS_BYTES,
    });
    if (tooLarge) throw new OutputTooLarge(tooLarge);
    // A declared output the run did not write is never passed over: lenient mode notes it, strict mode fails.
    const written = new Set(outputs.map((o) => o.path));
    const missing = (spec.outputs ?? []).filter((name) => !written.has(name));
    if (missing.length && ended) {
      const what = `the run did not write its declared output${missing.length > 1 ? "s" : ""} ${
        missing.map((m) => `output/${m}`).join(", ")
      }`;
      if (mode === "strict") throw new OutputMissing(what);
      await recorder.record({
        type: "note_added",
        component: "Outputter",
        data: { missing_outputs: missing },
      });
    }
  };
  try {
    await withRun(ctx, async () => {
      let experiment: PinnedExperiment | null = null;
      let experimentError: unknown = null;
      if (spec.experiment) {
        try {
          if (!options.catalog) throw new Error(`no catalog to pin the experiment ${spec.experiment}`);
          experiment = await readExperiment(options.catalog, spec.experiment);
        } catch (error) {
          experimentError = error;
        }
      }
      await recorder.record({
        type: "run_created",
        component: "RunContext",
        refs: experiment ? [runUri, experiment.pin] : [runUri],
        payload: await recorder.payload(file.text),
        data: {
          ...runCreatedData(file, ctx),
          store: store.uri, // the store the run is written to (`--store` or run.store), without a password
          signing_key: signingKey?.keyid ?? null, // the verifier requires its signature when set
          experiment_pin: experiment?.pin ?? null,
          experiment_sha256: experiment?.sha256 ?? null,
          ...telemetry.facts, // telemetry
        },
      });
      await telemetry.start(recorder); // telemetry: blocked attempts and problems, after run_created
      if (mlflow.problem) { // the copy in MLflow at the seal: one its variables would refuse
        await recorder.record({
          type: "telemetry_problem",
          component: "RunContext",
          data: problemData(mlflow.problem),
        });
      }
      if (experimentError) throw experimentError;
      const staged = await resolveInputs(ctx, spec.inputs ?? [], options.catalog, controller.signal);
      stager = staged.stager;
      const program = programBackend(spec.agent, options.env); // an agent program makes its own model calls
      const model = program ? UNCALLED_MODEL : captureModel(
        await modelOf(spec.agent, {
          folder: file.folder,
          ...(options.env ? { env: options.env } : {}),
          responseBytes: spec.agent.limits?.model_bytes, // harden: a model's answer is cut past its limit
        }),
        recorder,
        {
          component: spec.agent.backend === "call" ? "CallBackend" : "AgentBackend",
          onText: (piece) => {
            live.text(piece); // live feed
            options.onText?.(piece);
          },
          onReply: (reply) => live.answer(reply), // live feed
          onUsage: (u) => {
            tokens += u.input + u.output;
            if (limits.tokens !== undefined && tokens > limits.tokens) {
              controller.abort(
                new CancelledError(`the run passed its limit of ${limits.tokens} tokens (${tokens})`),
              );
            }
          },
        },
      );
      const backend = options.backend ?? program ??
        (spec.agent.backend === "agent" ? new AgentBackend() : new CallBackend());
      await backend.start({
        ctx,
        agent: spec.agent,
        prompt: spec.prompt,
        inputs: staged.inputs,
        outputs: spec.outputs ?? [],
        model,
        folder: file.folder,
        sessionId: spec.run.session_id ?? null,
      });
      const result = await backend.result();
      if (result.status === "failed") {
        throw controller.signal.aborted ? controller.signal.reason : result.error;
      }
      text = result.text;
      if (controller.signal.aborted) throw controller.signal.reason;
      const checks = await verifyInputs();
      const changed = checks.filter((c) => !c.ok).map((c) => c.name);
      if (changed.length) throw new InputChanged(changed);
      await recordOutputs(true);
      await telemetry.beforeLastEvent(); // telemetry
      await recorder.record({
        type: "run_completed",
        component: "RunContext",
        refs: [runUri],
        data: { status: "completed" },
      });
    });
  } catch (error) {
    failure = controller.signal.aborted && !(error instanceof Error && error.name === "EvidenceError")
      ? controller.signal.reason
      : error;
    if (!recorder.broken) {
      await verifyInputs().catch(() => {});
      await recordOutputs(false).catch(() => {});
      await telemetry.beforeLastEvent().catch(() => {}); // telemetry
      await recorder.record({
        type: "run_failed",
        component: "RunContext",
        refs: [runUri],
        data: { error: errorName(failure), message: errorMessage(failure) },
      }).catch(() => {});
    }
  } finally {
    if (timer !== null) clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
    recorder.endRoot(failure ?? undefined);
  }
  await live.close(); // live feed
  await telemetry.close(); // telemetry: spans flushed to the store and the approved destination at the seal
  let manifest: Manifest | null = null;
  try {
    // signing: the seal, as an in-toto statement in a DSSE envelope, fsynced with the manifest
    manifest = await recorder.seal(signingKey ?? undefined);
  } catch (error) {
    failure ??= error;
  }
  let bundle: RunOutcome["bundle"] = null;
  if (manifest && spec.run.bundle) {
    try {
      if (!options.catalog) {
        throw new Error(`the run file asks for a bundle, and no catalog was given to commit it to`);
      }
      bundle = await commitBundle(options.catalog, folder, runUri);
      const place = store as EvidenceStore & {
        recordBundle?: (id: string, b: { uri: string; pinned: string | null }) => Promise<void>;
      };
      await place.recordBundle?.(runId, bundle);
    } catch (error) {
      failure ??= error;
    }
  }
  const mlflowCopy = manifest && mlflow.environ // the copy in MLflow, beside the result
    ? startMlflowCopy(runId, store, { policy: telemetry.policy, environ: mlflow.environ })
    : null;
  return {
    runId,
    folder,
    status: failure === null && manifest?.status === "completed" ? "completed" : "failed",
    ...(mlflowCopy ? { mlflowCopy } : {}),
    ...(failure !== null ? { error: { name: errorName(failure), message: errorMessage(failure) } } : {}),
    manifest,
    bundle,
    text,
  };
}

/** The run's telemetry: `RunOptions.policy` or the environment's, narrowed by the run file's section. */
async function openRunTelemetry(
  runId: string,
  file: RunFile,
  store: EvidenceStore,
  options: RunOptions,
): Promise<RunTelemetry> {
  const { environ, unreadable } = options.environ
    ? { environ: options.environ, unreadable: [] }
    : processEnviron();
  const policy = options.policy ?? await TelemetryPolicy.fromEnvironment({ environ });
  return await RunTelemetry.open({
    runId,
    policy,
    section: file.data.telemetry,
    environ,
    unreadable,
    store,
    ...(options.guardNet === undefined ? {} : { guardNet: options.guardNet }),
    declared: declaredNames(file.data.agent, DEFAULT_TOOLS), // names below bodies (harden)
  });
}

function envOr(options: RunOptions, name: string): string | undefined {
  try {
    return (options.env ?? ((n: string) => Deno.env.get(n)))(name);
  } catch {
    return undefined;
  }
}

function runCreatedData(file: RunFile, ctx: RunContext): { [key: string]: Json } {
  const spec = file.data;
  return {
    org: ctx.org,
    domain: ctx.domain,
    env: ctx.env,
    actor: ctx.actor,
    mode: ctx.mode,
    agent: spec.agent.name,
    agent_version: agentVersion(spec.agent as unknown as { [key: string]: Json }),
    backend: spec.agent.backend,
    model: spec.agent.model,
    spec: spec.agent as unknown as Json,
    inputs: (spec.inputs ?? []).map((i) => i.uri),
    parent_run: spec.run.parent_run ?? null,
    session_id: spec.run.session_id ?? null,
    experiment: spec.experiment ?? null,
    writer: writerProcess() as unknown as Json, // so that a reader tells "cut" from "running"
    bundle: spec.run.bundle ?? false, // the verifier requires bundle.json when this is true
  };
}

async function resolveInputs(
  ctx: RunContext,
  inputs: { uri: string; as?: string }[],
  catalog: RunCatalog | undefined,
  signal: AbortSignal,
): Promise<{ inputs: StagedInput[]; stager: InProcessStager }> {
  const { recorder } = ctx;
  const broker = new StubBroker(inputs.map((i) => i.uri), { env: ctx.env });
  const stager = new InProcessStager(ctx.folder);
  const resolver = catalog ? new ProvcatResolver(catalog, recorder) : null;
  const snapshots: { snap: Snapshot; name: string; uri: string }[] = [];
  for (const input of inputs) {
    signal.throwIfAborted();
    await recorder.record({
      type: "access_requested",
      component: "StubBroker",
      refs: [input.uri],
      data: { mode: "mounted_snapshot" },
    });
    const grant = broker.request(input.uri);
    if (!grant.granted) {
      await recorder.record({
        type: "access_denied",
        component: "StubBroker",
        refs: [input.uri],
        data: { mode: grant.mode, reason: grant.reason ?? "denied" },
      });
      throw new AccessDenied(input.uri, grant.reason ?? "denied");
    }
    await recorder.record({
      type: "access_granted",
      component: "StubBroker",
      refs: [input.uri],
      data: { mode: grant.mode, expires_at: grant.expires_at ?? null },
    });
    if (!resolver) {
      throw new Error(`no catalog to resolve ${input.uri}: pass a catalog, or add a provcat.yaml`);
    }
    const snap = await resolver.resolve(input.uri);
    snapshots.push({ snap, name: input.as ?? lastSegment(input.uri), uri: input.uri });
  }
  const staged: StagedInput[] = [];
  for (const { snap, name, uri } of snapshots) {
    await recorder.step(
      "input_staged",
      { component: "InProcessStager", spanName: "provrun.stage" },
      async () => {
        const s = await stager.stage({
          path: snap.path,
          pinned: snap.pinned ?? uri,
          sha256: snap.sha256,
          kind: snap.kind,
        }, name);
        staged.push(s);
        return { refs: [s.pinned], data: { name, kind: s.kind, sha256: s.sha256 } };
      },
    );
  }
  return { inputs: staged, stager };
}

function lastSegment(uri: string): string {
  const path = uri.replace(/[?#].*$/, "").replace(/\/+$/, "");
  return path.slice(path.lastIndexOf("/") + 1) || "input";
}

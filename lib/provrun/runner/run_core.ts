/**
 * The core of a run: it opens the run folder, writes `run_created`, stages the inputs, runs the backend, checks
 * the inputs again, records the outputs, writes `run_completed` or `run_failed` and seals the evidence. All else
 * (telemetry, the live feed, the copy in MLflow, signing, the bundle, the limits) is a {@linkcode RunPart} that
 * it calls at named points, in the order of provrun-plan.txt ("Classes").
 * @module
 */
import { join } from "node:path";
import type { EvidenceStore, Manifest } from "../../provevi/mod.ts";
import { EvidenceError } from "../../provevi/evidence/errors.ts";
import type { Catalog } from "../../provcat/mod.ts";
import type { Backend } from "../backends/backend.ts";
import { errorMessage, errorName, EvidenceRecorder } from "../run/recorder.ts";
import { type RunContext, withRun } from "../run/run_context.ts";
import type { RunFile } from "../run/run_file.ts";
import type { PartRun } from "../run/run_part.ts";
import { pinExperiment, recordCreated } from "./run_created.ts";
import { RunChecks } from "./run_checks.ts";
import type { RunParts } from "./run_parts.ts";
import { runBackend } from "./start_backend.ts";
import { rootAttributes } from "./root_span.ts";
import { recordGrant, stageInputs } from "./stage_inputs.ts";

/** What the core of a run is given. */
export interface CoreOptions {
  /** The run's ID. */
  runId: string;
  /** The store the run is written to. */
  store: EvidenceStore;
  /** The run's parts, already open. */
  parts: RunParts;
  /** The catalog that resolves the inputs and pins the experiment. */
  catalog?: Catalog | undefined;
  /** Reads variables (the actor, API keys). */
  env?: ((name: string) => string | undefined) | undefined;
  /** The backend to use instead of the run file's. */
  backend?: Backend | undefined;
}

/** How the core ended. */
export interface CoreResult {
  runId: string;
  folder: string;
  /** What failed the run, or null. */
  failure: unknown;
  /** The manifest, or null when the seal failed. */
  manifest: Manifest | null;
  /** The model's final answer, when there is one. */
  text: string | null;
}

/** One run in the core's hands. */
interface Core {
  readonly run: PartRun;
  readonly options: CoreOptions;
  readonly checks: RunChecks;
  readonly controller: AbortController;
  text: string | null;
}

/**
 * Runs the core of a run: open, work, seal.
 *
 * @param file The run file.
 * @param options The run's ID, store, parts, catalog.
 * @returns How the run ended; a failed run is a result, not an exception.
 * @throws the errors of opening the run folder, and of a part's `beforeStart` or `beforeSeal`.
 */
export async function runCore(file: RunFile, options: CoreOptions): Promise<CoreResult> {
  const core = await openCore(file, options);
  const { run, controller } = core;
  const { recorder } = run.ctx;
  let failure: unknown = null;
  try {
    await withRun(run.ctx, () => work(core));
  } catch (error) {
    failure = controller.signal.aborted && !(error instanceof EvidenceError)
      ? controller.signal.reason
      : error;
    if (!recorder.broken) await failed(core, failure);
  } finally {
    recorder.endRoot(failure ?? undefined);
  }
  await options.parts.beforeSeal(run);
  let manifest: Manifest | null = null;
  try {
    manifest = await recorder.seal(options.parts.signingKey);
  } catch (error) {
    failure ??= error;
  }
  if (manifest) {
    const late = await options.parts.afterSeal({
      runId: run.ctx.runId,
      folder: run.ctx.folder,
      uri: run.uri,
      manifest,
    });
    failure ??= late;
  }
  return { runId: run.ctx.runId, folder: run.ctx.folder, failure, manifest, text: core.text };
}

/** Opens the run folder, the recorder and the context, and starts the parts. */
async function openCore(file: RunFile, options: CoreOptions): Promise<Core> {
  const spec = file.data;
  const { parts, runId } = options;
  const writer = await options.store.openRun(runId);
  const actor = spec.run.actor ?? envOr(options, "USER") ?? envOr(options, "LOGNAME") ?? "unknown";
  const mode = spec.run.mode ?? (spec.run.env === "dev" ? "lenient" : "strict");
  const tracing = parts.tracing;
  const recorder = new EvidenceRecorder(writer, {
    actor,
    mode,
    ...(tracing ? { tracer: tracing.tracer } : {}),
  });
  recorder.onEvent = (event) => parts.onEvent(event);
  const controller = new AbortController();
  const ctx: RunContext = {
    runId,
    org: spec.run.org,
    domain: spec.run.domain,
    env: spec.run.env,
    actor,
    mode,
    folder: writer.folder,
    recorder,
    signal: controller.signal,
    ...(tracing ? { tracerProvider: tracing.provider } : {}),
    spanRows: options.store, // agent programs' span receiver
  };
  const uri = `run://${ctx.org}/${ctx.domain}/${ctx.env}/${runId}`;
  const run: PartRun = { ctx, file, uri, abort: (reason) => controller.abort(reason) };
  await parts.beforeStart(run);
  for (const sub of ["input", "output", "scratch"]) {
    await Deno.mkdir(join(ctx.folder, sub), { recursive: true });
  }
  recorder.startRoot(
    `invoke_agent ${spec.agent.name}`,
    rootAttributes(file, (name) => envOr(options, name)),
  );
  const checks = new RunChecks({ recorder, folder: ctx.folder, uri, mode, spec });
  return { run, options, checks, controller, text: null };
}

/** The run's steps, from `run_created` to `run_completed`; the first that throws fails the run. */
async function work(core: Core): Promise<void> {
  const { run, options, checks } = core;
  const { parts } = options;
  const pin = await pinExperiment(run.file, options.catalog);
  await recordCreated(run, {
    store: options.store,
    experiment: pin.experiment,
    signingKey: parts.signingKey,
    facts: parts.facts(),
  });
  await parts.afterCreated(run);
  if (pin.grant) await recordGrant(run.ctx, pin.grant);
  if (pin.error) throw pin.error;
  const staged = await stageInputs(run.ctx, run.file.data.inputs ?? [], options.catalog);
  checks.stager = staged.stager;
  const result = await runBackend(run, staged.inputs, options);
  const signal = run.ctx.signal;
  if (result.status === "failed") throw signal.aborted ? signal.reason : result.error;
  core.text = result.text;
  if (signal.aborted) throw signal.reason;
  await checks.completed();
  await parts.beforeLastEvent(run);
  await run.ctx.recorder.record({
    type: "run_completed",
    component: "RunContext",
    refs: [run.uri],
    data: { status: "completed", ...parts.endFacts() },
  });
}

/** The end of a run that failed: its inputs and outputs recorded, then `run_failed`; nothing here throws. */
async function failed(core: Core, failure: unknown): Promise<void> {
  const { run, options, checks } = core;
  await checks.failed();
  await options.parts.beforeLastEvent(run).catch(() => {});
  await run.ctx.recorder.record({
    type: "run_failed",
    component: "RunContext",
    refs: [run.uri],
    data: { ...options.parts.endFacts(), error: errorName(failure), message: errorMessage(failure) },
  }).catch(() => {});
}

function envOr(options: CoreOptions, name: string): string | undefined {
  try {
    return (options.env ?? ((n: string) => Deno.env.get(n)))(name);
  } catch {
    return undefined;
  }
}

/**
 * Step 1 of a run: `run_created`, with the run file as its payload and in its data the run's facts, its
 * experiment pinned through the catalog, the store, the key that will sign the seal and the facts of the parts.
 * @module
 */
import { agentVersion } from "../../provevi/experiments/mod.ts";
import type { EvidenceStore, Json, SigningKey } from "../../provevi/mod.ts";
import { writerProcess } from "../../provevi/evidence/mod.ts";
import { type PinnedExperiment, readExperiment } from "../../provevi/experiments/experiment.ts";
import type { Catalog } from "../../provcat/mod.ts";
import { type Grant, StubBroker } from "../run/broker.ts";
import { CatalogMissing } from "../run/errors.ts";
import type { RunContext } from "../run/run_context.ts";
import type { RunFile } from "../run/run_file.ts";
import type { PartRun } from "../run/run_part.ts";

/** The run's experiment pinned through the catalog, or why it could not be (which fails the run after `run_created`). */
export interface ExperimentPin {
  experiment: PinnedExperiment | null;
  /**
   * The broker's `pinned_read` answer for the experiment, decided before the read; recorded after `run_created`
   * (the run's first event, which holds the pin), and a refusal leaves the experiment unread.
   */
  grant: Grant | null;
  error: unknown;
}

/**
 * Pins the experiment that the run file names, once the broker grants it `pinned_read`, keeping the error for
 * after `run_created`.
 *
 * @param file The run file.
 * @param catalog The catalog.
 */
export async function pinExperiment(file: RunFile, catalog: Catalog | undefined): Promise<ExperimentPin> {
  const uri = file.data.experiment;
  if (!uri) return { experiment: null, grant: null, error: null };
  const grant = new StubBroker([], { env: file.data.run.env, experiment: uri }).request(uri, "pinned_read");
  if (!grant.granted) return { experiment: null, grant, error: null };
  try {
    if (!catalog) {
      throw new CatalogMissing(
        `no catalog to pin the experiment ${uri}: pass a catalog, or add a provcat.yaml`,
      );
    }
    return { experiment: await readExperiment(catalog, uri), grant, error: null };
  } catch (error) {
    return { experiment: null, grant, error };
  }
}

/**
 * Writes `run_created`.
 *
 * @param run The run.
 * @param options The store, the experiment's pin, the seal's key, and the facts of the run's parts.
 */
export async function recordCreated(
  run: PartRun,
  options: {
    store: EvidenceStore;
    experiment: PinnedExperiment | null;
    signingKey: SigningKey | undefined;
    facts: { [key: string]: Json };
  },
): Promise<void> {
  const { recorder } = run.ctx;
  const { experiment } = options;
  await recorder.record({
    type: "run_created",
    component: "RunContext",
    refs: experiment ? [run.uri, experiment.pin] : [run.uri],
    payload: await recorder.payload(run.file.text),
    data: {
      ...runCreatedData(run.file, run.ctx),
      store: options.store.uri, // the store the run is written to (`--store` or run.store), without a password
      signing_key: options.signingKey?.keyid ?? null, // the verifier requires its signature when set
      experiment_pin: experiment?.pin ?? null,
      experiment_sha256: experiment?.sha256 ?? null,
      ...options.facts,
    },
  });
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
    run_file: file.path, // where the run file was read, so that a replay reads it there again (null: a program's)
  };
}

/**
 * The questions across runs that an indexed store answers (sqlite, postgres). The file store has no index,
 * so it answers each with {@linkcode NeedsIndexedStore}.
 * @module
 */
import type { Assessment, AssessOptions, AssessTarget } from "./assess.ts";
import { NeedsIndexedStore } from "../evidence/errors.ts";
import type { EvidenceStore } from "./store.ts";

/** A run in a list. */
export interface RunSummary {
  run_id: string;
  agent: string | null;
  agent_version: string | null;
  experiment: string | null;
  experiment_pin: string | null;
  status: string;
  started_at: string | null;
  ended_at: string | null;
}

/** A run that read a URI, with the pinned URI it staged. */
export interface RunReading extends RunSummary {
  uri: string;
}

/** An experiment in a list. */
export interface ExperimentSummary {
  experiment: string;
  first_run: string;
  versions: number;
  runs: number;
}

/** An experiment with each version that runs reported, and their runs. */
export interface ExperimentDetail {
  experiment: string;
  first_run: string;
  versions: { pin: string; sha256: string | null; first_run: string; runs: string[] }[];
  /** Runs that named the experiment with no pin. */
  unpinned_runs: string[];
}

/** An agent class in a list. */
export interface AgentSummary {
  agent: string;
  org: string;
  domain: string;
  env: string;
  name: string;
  first_run: string;
  versions: number;
  runs: number;
}

/** One version of an agent class, with its settings and runs. */
export interface AgentVersion {
  version: string;
  backend: string | null;
  model: string | null;
  tools: unknown;
  limits: unknown;
  first_run: string;
  runs: string[];
}

/** An agent class with each version. */
export interface AgentDetail extends Omit<AgentSummary, "versions" | "runs"> {
  versions: AgentVersion[];
}

/** A run's row with its settings. */
export interface RunDetail extends RunSummary {
  folder: string;
  org: string | null;
  domain: string | null;
  env: string | null;
  actor: string | null;
  mode: string | null;
  experiment_sha256: string | null;
  parent_run: string | null;
  last_hash: string | null;
  manifest_sha256: string | null;
  sealed_at: string | null;
  bundle_uri: string | null;
  bundle_pinned: string | null;
  /** The settings by key, each a JSON value. */
  params: Record<string, unknown>;
  /** The number of event rows. */
  events: number;
}

/** One grant or refusal. */
export interface AccessEntry {
  seq: number;
  time: string;
  decision: "granted" | "denied";
  uri: string;
  mode: string | null;
  /** Why it was refused; null for a grant. */
  reason: string | null;
  expires_at: string | null;
}

/** One staged input. */
export interface InputEntry {
  seq: number;
  time: string;
  name: string | null;
  sha256: string | null;
  uri: string;
}

/** The questions across runs, and assessments. */
export interface StoreQuestions {
  runsReading(uri: string): Promise<RunReading[]>;
  runsOfExperiment(uri: string): Promise<RunSummary[]>;
  experiments(): Promise<ExperimentSummary[]>;
  experiment(uri: string): Promise<ExperimentDetail | null>;
  runsOfAgent(name: string, options?: { version?: string }): Promise<RunSummary[]>;
  agents(): Promise<AgentSummary[]>;
  agent(name: string): Promise<AgentDetail | null>;
  run(runId: string): Promise<RunDetail | null>;
  access(runId: string): Promise<AccessEntry[]>;
  inputs(runId: string): Promise<InputEntry[]>;
  assess(target: AssessTarget, name: string, value: unknown, options?: AssessOptions): Promise<Assessment>;
  assessments(runId: string): Promise<Assessment[]>;
  /**
   * The assessments of an experiment by its URI or name: of the whole and of each version, or, pinned, of the
   * whole and of that version.
   */
  experimentAssessments(uri: string): Promise<Assessment[]>;
}

/**
 * The store as one that answers questions across runs.
 *
 * @param store Any store.
 * @param question The method or command asked, for the error.
 * @returns The store, typed with the questions.
 * @throws NeedsIndexedStore when the store does not answer them.
 * @example
 * ```ts
 * import { FileStore, NeedsIndexedStore, questionsOf, SqliteStore } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * await using sqlite = new SqliteStore(`${dir}/evidence.db`, { runs: dir });
 * assert.deepEqual(await questionsOf(sqlite, "agents").agents(), []);
 * // The file store has the questions, and answers each by refusing: it keeps no index.
 * await assert.rejects(questionsOf(new FileStore({ runs: dir }), "agents").agents(), NeedsIndexedStore);
 * ```
 */
export function questionsOf(store: EvidenceStore, question: string): EvidenceStore & StoreQuestions {
  if (typeof (store as Partial<StoreQuestions>).runsOfAgent !== "function") {
    throw new NeedsIndexedStore(question);
  }
  return store as EvidenceStore & StoreQuestions;
}

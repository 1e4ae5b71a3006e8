/**
 * The questions across runs that an indexed store answers (sqlite, postgres). The file store has no index,
 * so it answers each with {@linkcode NeedsIndexedStore}.
 * @module
 */
import type { Assessment, AssessOptions, AssessTarget } from "./assess.ts";
import { NeedsIndexedStore } from "./errors.ts";
import type {
  AccessEntry,
  AgentDetail,
  AgentSummary,
  ExperimentDetail,
  ExperimentSummary,
  InputEntry,
  RunDetail,
  RunReading,
  RunSummary,
} from "./sqlite_questions.ts";
import type { EvidenceStore } from "./store.ts";

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
 * import { FileStore, questionsOf } from "./mod.ts";
 * try {
 *   await questionsOf(new FileStore({ runs: "/tmp/runs" }), "agents").agents();
 * } catch (error) {
 *   // NeedsIndexedStore: agents needs a sqlite store …
 * }
 * ```
 */
export function questionsOf(store: EvidenceStore, question: string): EvidenceStore & StoreQuestions {
  if (typeof (store as Partial<StoreQuestions>).runsOfAgent !== "function") {
    throw new NeedsIndexedStore(question);
  }
  return store as EvidenceStore & StoreQuestions;
}

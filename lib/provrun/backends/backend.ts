/**
 * The backend interface: runs an agent spec in one place. It is asynchronous, with start, poll, stream, cancel
 * and result, so that a remote backend (a container, Foundry) fits later; an in-process backend completes at
 * once.
 * @module
 */
import type { LanguageModelV4 } from "@ai-sdk/provider";
import type { RunContext } from "../run/run_context.ts";
import type { AgentSpec } from "../run/run_file.ts";
import type { StagedInput } from "../run/stager.ts";
import type { RecordedTool, ToolWrap } from "../run/run_part.ts";
import type { Json } from "../../provevi/mod.ts";

/** What a backend runs. */
export interface BackendJob {
  ctx: RunContext;
  agent: AgentSpec;
  prompt: string;
  inputs: StagedInput[];
  /** The output files the run file names; the call backend writes its answer to the first. */
  outputs: string[];
  /** The run's model, already wrapped by the capture. */
  model: LanguageModelV4;
  /** The folder relative paths of the run file (tools folders) are relative to. */
  folder: string;
  /** The conversation this run continues (`run.session_id`), recorded in `sandbox_started`. */
  sessionId?: string | null;
  /** The run's parts' hook around each tool call, inside its recorded step (`RunPart.wrapTool`). */
  wrapTool?: ToolWrap;
  /** Facts of the run's parts that `sandbox_started` records (a model gateway's, `BackendSetup.facts`). */
  facts?: { [key: string]: Json };
  /** The description of a tool the model was offered (`BackendSetup.toolDescription`), for tool call spans. */
  toolDescription?: (name: string, callId?: string) => string | null;
  /**
   * The tools as a run recorded them, offered in place of the sandbox and the MCP servers, which are then not
   * started; each call is answered by `wrapTool` (`BackendSetup.servedTools`).
   */
  servedTools?: readonly RecordedTool[];
}

/** Where a backend's job is. */
export type BackendStatus = "running" | "completed" | "failed";

/** What a backend gives at the end. */
export interface BackendResult {
  status: "completed" | "failed";
  /** The final text of the model, when there is one. */
  text: string | null;
  error?: unknown;
}

/** A piece of the answer as it arrives. */
export interface BackendUpdate {
  type: "text";
  text: string;
}

/** A backend. */
export interface Backend {
  readonly name: string;
  /** Starts the job; returns once it is under way. */
  start(job: BackendJob): Promise<void>;
  /** Where the job is. */
  poll(): Promise<BackendStatus>;
  /** The answer's pieces as they arrive. */
  stream(): AsyncIterable<BackendUpdate>;
  /** Asks the job to stop. */
  cancel(reason?: unknown): Promise<void>;
  /** Waits for the end of the job. */
  result(): Promise<BackendResult>;
}

/**
 * A helper for in-process backends: runs `work` at start, and gives poll, stream and result over it.
 */
export abstract class InProcessBackend implements Backend {
  abstract readonly name: string;
  #done: Promise<BackendResult> | null = null;
  #status: BackendStatus = "running";
  #updates: BackendUpdate[] = [];
  #waiters: (() => void)[] = [];
  #abort = new AbortController();

  /** The job's work; `emit` sends a piece of the answer to `stream()`. */
  protected abstract work(
    job: BackendJob,
    signal: AbortSignal,
    emit: (u: BackendUpdate) => void,
  ): Promise<string | null>;

  /** Starts the work. */
  start(job: BackendJob): Promise<void> {
    const signal = AbortSignal.any([job.ctx.signal, this.#abort.signal]);
    const emit = (u: BackendUpdate) => {
      this.#updates.push(u);
      for (const w of this.#waiters.splice(0)) w();
    };
    this.#done = this.work(job, signal, emit).then(
      (text) => {
        this.#status = "completed";
        return { status: "completed" as const, text };
      },
      (error) => {
        this.#status = "failed";
        return { status: "failed" as const, text: null, error };
      },
    ).finally(() => {
      for (const w of this.#waiters.splice(0)) w();
    });
    return Promise.resolve();
  }

  /** Where the work is. */
  poll(): Promise<BackendStatus> {
    return Promise.resolve(this.#status);
  }

  /** The pieces of the answer, until the work ends. */
  async *stream(): AsyncIterable<BackendUpdate> {
    let i = 0;
    for (;;) {
      while (i < this.#updates.length) yield this.#updates[i++]!;
      if (this.#status !== "running") return;
      await new Promise<void>((r) => this.#waiters.push(r));
    }
  }

  /** Aborts the work. */
  cancel(reason?: unknown): Promise<void> {
    this.#abort.abort(reason);
    return Promise.resolve();
  }

  /** The end of the work. */
  result(): Promise<BackendResult> {
    if (!this.#done) return Promise.reject(new TypeError("the backend was not started"));
    return this.#done;
  }
}

/**
 * The errors of replay, fork and resume: a run whose evidence cannot be served (refused before anything is
 * written, in one line naming what is missing), a replay that diverged from its run (the replay's own failure),
 * and a resume that stops at a tool call it may not repeat.
 * @module
 */
import { ProveviError } from "../../provevi/evidence/errors.ts";

/**
 * A run that cannot be replayed, forked or resumed: its evidence lacks what serving needs (a payload, a chain
 * that holds, the run file or tools module where they were), or it is not the kind of run asked for.
 * @example
 * ```ts
 * import { ProveviError, RunNotReplayable } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const error = new RunNotReplayable('run "r1" has no run_created: there is nothing to serve');
 * assert.ok(error instanceof ProveviError);
 * assert.equal(error.name, "RunNotReplayable");
 * ```
 */
export class RunNotReplayable extends ProveviError {
  /** @param message What is missing, and the fix. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "RunNotReplayable";
  }
}

/** What a replay found different from its run, at the first place it differs. */
export interface ServedDivergence {
  /** The model step, from 1 (the nth model call); 0 before the first. */
  step: number;
  /** What differed: `prompt`, `tools`, `settings`, `request`, `tool_call`, `arguments`, `steps`. */
  what: string;
  /** Where in the request it first differs, such as `params.prompt[1].content[0].text`, or null. */
  path: string | null;
  /** One line for a person. */
  detail: string;
}

/**
 * A replay that diverged from the run it serves: the loop asked something the run did not record, so there is
 * no recorded answer to give. The replay stops there, sealed as failed with this error.
 * @example
 * ```ts
 * import { ProveviError, ReplayDiverged } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const error = new ReplayDiverged({ step: 2, what: "prompt", path: null, detail: "the prompt differs" });
 * assert.ok(error instanceof ProveviError);
 * assert.equal(error.name, "ReplayDiverged");
 * assert.equal(error.message, "the replay diverged at step 2: the prompt differs");
 * ```
 */
export class ReplayDiverged extends ProveviError {
  /** @param divergence Where and what. */
  constructor(readonly divergence: ServedDivergence) {
    super(`the replay diverged at step ${divergence.step}: ${divergence.detail}`);
    this.name = "ReplayDiverged";
  }
}

/**
 * A resume that stops before it starts: a tool call of the cut run was requested and its result not recorded,
 * and its tool is not declared idempotent, so it may have run already and must not run again unseen.
 * @example
 * ```ts
 * import { ProveviError, ResumeStopped } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const error = new ResumeStopped("cannot resume run r1: the call c1 of send_mail may have run; fork it before that step");
 * assert.ok(error instanceof ProveviError);
 * assert.equal(error.name, "ResumeStopped");
 * ```
 */
export class ResumeStopped extends ProveviError {
  /** @param message Which call, of which tool, and what to do. */
  constructor(message: string) {
    super(message);
    this.name = "ResumeStopped";
  }
}

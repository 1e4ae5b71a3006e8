/**
 * A recorded run's evidence as its journal: `replayRun` runs it again with every model answer and tool result
 * served from the evidence (no network, no key, no tool), `forkRun` serves the steps before N and runs the rest
 * live with a change, `resumeRun` goes on from a cut run. The journal, the served model and tools, and the part
 * of a run that attaches them stay inside. Imports `run/`, `backends/` and `runner/` (and provevi's `diff/`).
 * @module
 */
export { ReplayDiverged, ResumeStopped, RunNotReplayable, type ServedDivergence } from "./replay_errors.ts";
export { type ComparedOutcome, type ServedOutcome, type ServeOptions } from "./serve_run.ts";
export { replayRun, type ReplayRunOptions } from "./replay_run.ts";
export { type ForkChange, type ForkOptions, forkRun } from "./fork_run.ts";
export { type ResumeOutcome, resumeRun } from "./resume_run.ts";

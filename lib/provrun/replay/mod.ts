/**
 * A recorded run's evidence as its journal: `replayRun` runs it again with every model answer and tool result
 * served from the evidence (no network, no key, no tool), `forkRun` serves the steps before N and runs the rest
 * live with a change, `resumeRun` goes on from a cut run. The served model, the served tools and the part of a
 * run that attaches them. Imports `run/`, `backends/` and `runner/` (and provevi's `diff/`).
 * @module
 */
export * from "./replay_errors.ts";
export * from "./journal.ts";
export * from "./served_model.ts";
export * from "./served_tools.ts";
export * from "./replay_part.ts";
export * from "./serve_run.ts";
export * from "./replay_run.ts";
export * from "./fork_run.ts";
export * from "./resume_run.ts";

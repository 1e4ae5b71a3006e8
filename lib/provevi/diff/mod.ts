/**
 * The difference of two recorded runs: their events read in steps (the setup, each model call with the tool
 * calls it asked for, the end), the first divergence and every difference, and where two JSON values first
 * differ. `prove diff`, the viewer's compare page and provrun's replay read runs through it. Imports
 * `evidence/` only.
 * @module
 */
export { readRunSteps, stepsOf } from "./run_steps.ts";
export { type ModelStep, type RecordStatus, type RunSteps, type SharedStart } from "./run_steps.ts";
export { type JsonDifference, jsonDifference } from "./json_difference.ts";
export { type DiffPhase, type DiffWhat, type Divergence, type EventRef, placeOf } from "./divergence.ts";
export { type DiffOptions, diffRuns, type DiffSide, type RunDiff } from "./diff_runs.ts";

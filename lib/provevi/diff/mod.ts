/**
 * The difference of two recorded runs: their events read in steps (the setup, each model call with the tool
 * calls it asked for, the end), the first divergence and every difference, and where two JSON values first
 * differ. `prove diff`, the viewer's compare page and provrun's replay read runs through it. Imports
 * `evidence/` only.
 * @module
 */
export * from "./run_steps.ts";
export * from "./json_difference.ts";
export * from "./divergence.ts";
export * from "./diff_runs.ts";

/**
 * `runFile`: a run file becomes a sealed, recorded run, and the permission check that comes first. Imports
 * every other folder of provrun.
 * @module
 */
export * from "./permissions.ts";
export * from "./run.ts";

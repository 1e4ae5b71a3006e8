/**
 * `runFile` and `runAgent`: a run file (or an agent and its task) becomes a sealed, recorded run, through a small core that calls the run's parts
 * (signing, telemetry, the live feed, the bundle, the copy in MLflow, the limits, the caller's own) at named
 * points; and the checks that come first (permissions, the model's key). Imports every other folder of provrun.
 * @module
 */
export * from "./permissions.ts";
export * from "./run.ts";
export * from "./run_agent.ts";
export * from "./run_agents_sdk.ts";

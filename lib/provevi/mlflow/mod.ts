/**
 * The copy in MLflow: `copyRun(store, runId, policy)` rebuilds a sealed run in MLflow from its evidence, at the
 * level the telemetry policy approves for the place that `MLFLOW_TRACKING_URI` names, for MLflow's viewer; and
 * `openMlflowViewer` starts MLflow's own viewer on the sqlite store's own file. It reaches MLflow through a
 * tracking server's REST API and OTLP trace endpoint (an MLflow server started for the copy when the place is
 * a database), never through MLflow's tables. Imports `evidence/`, `store/`, `telemetry/` and `experiments/`.
 *
 * @example
 * ```ts
 * import { copyRun } from "./mod.ts";
 * // const result = await copyRun(store, "run-20261129T233259Z-1b594032", policy);
 * ```
 * @module
 */
export * from "./refuse_redirects.ts";
export * from "./experiment_name.ts";
export * from "./copy_tags.ts";
export * from "./copy_trace.ts";
export * from "./copy_content.ts";
export * from "./copy_lock.ts";
export * from "./mlflow_reply.ts";
export * from "./mlflow_client.ts";
export * from "./mlflow_server.ts";
export * from "./otlp_encode.ts";
export * from "./write_copy.ts";
export * from "./copy_run.ts";
export * from "./copy_environ.ts";
export * from "./mlflow_viewer.ts";

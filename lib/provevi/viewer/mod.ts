/**
 * The viewer that `prove ui` serves on 127.0.0.1 (its runs page is `listRuns`): a run's view (verdict, events,
 * timeline, inputs, outputs, grants, assessments), the live tail of a running run, two runs compared, the
 * guard (Host, the token in the path, same-origin POST), the routes and the server, with its pages as strings in
 * the module tree (the script is checked TypeScript in `app/`, bundled). Imports
 * `evidence/`, `store/`, `telemetry/`, `live/`, `runs/`, `guard/`, `log/`, `diff/` and `receiver/` (to read
 * back the spans an agent program sent a run).
 *
 * @example
 * ```ts
 * import { serveViewer } from "./mod.ts";
 * import { FileStore } from "../store/mod.ts";
 * import { TelemetryPolicy } from "../telemetry/mod.ts";
 * await using viewer = await serveViewer(new FileStore({ runs: "fixtures/runs" }), {
 *   policy: TelemetryPolicy.denyAll(),
 *   port: 0,
 * });
 * console.log(viewer.url);
 * ```
 * @module
 */
export * from "./viewer_level.ts";
export * from "./run_view.ts";
export * from "./run_spans.ts";
export * from "./compare_view.ts";
export * from "./live_tail.ts";
export * from "./viewer_guard.ts";
export * from "./viewer_server.ts";

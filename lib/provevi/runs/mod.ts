/**
 * A run wherever it is kept: open a store by its URI, find a run, check it whole (`verifyRun`, with its
 * bundle and experiment, and a resumed run with its cut run), commit and check bundles, and copy runs between
 * stores. Imports `evidence/`, `store/`, `sqlite/`, `postgres/`, `experiments/`, `log/`, `diff/` and the
 * catalog (provcat).
 * @module
 */
export * from "./find_run.ts";
export * from "./list_runs.ts";
export * from "./resolve_run_ref.ts";
export * from "./open_store.ts";
export * from "./verify_run.ts";
export * from "./bundle.ts";
export { type BundleAsked, bundleAsked } from "./bundle_asked.ts";
export { type BundlePin, bundlePin } from "./bundle_pin.ts";
export * from "./export_run.ts";
export * from "./run_elsewhere.ts";
export * from "./stored_run.ts";
export * from "./store_log.ts";

/**
 * MahaCata: the caller of record for AI agent runs. Re-exports the catalog (provcat), the evidence (provevi),
 * the runtime (provrun) and the trace database (provtrace).
 *
 * @example
 * ```ts
 * import { findRun, verifyRun } from "./mod.ts";
 * const check = await verifyRun(await findRun("fixtures/runs/run-20261129T120000Z-0badc0de"));
 * ```
 * @module
 */
export * from "./lib/provcat/mod.ts";
export * from "./lib/provevi/mod.ts";

/**
 * MahaCata: the caller of record for AI agent runs. Re-exports the catalog (provcat), the evidence (provevi),
 * the runtime (provrun) and the trace database (provtrace).
 *
 * @example
 * ```ts
 * import { Catalog, RunFile, runFile, verifyRun, findRun } from "./mod.ts";
 * await using catalog = await Catalog.open();
 * const outcome = await runFile(await RunFile.load("run.yaml"), { catalog });
 * const check = await verifyRun(await findRun(outcome.folder), { catalog });
 * ```
 * @module
 */
export * from "./lib/provcat/mod.ts";
export * from "./lib/provevi/mod.ts";
export * from "./lib/provrun/mod.ts";
export * from "./lib/provtrace/mod.ts";

/**
 * The catalog's hooks: functions called before and after each operation, passed to `Catalog.open({ hooks })`,
 * never set globally. provrun's recorder uses them to write an event for each catalog operation.
 * @module
 */

/** The operations that go through the hooks. */
export type CatalogOperation = "pin" | "fetch" | "snapshot" | "put" | "commit" | "list" | "read";

/** One call of an operation, as the hooks see it. */
export interface CatalogCall {
  /** The operation. */
  op: CatalogOperation;
  /** The URI as the caller gave it. */
  uri: string;
  /** The name of the store the URI routes to (`file` for a physical URI). */
  store: string;
  /** The commit message, for `commit`. */
  message?: string;
}

/** How an operation ended: its result, or the error it threw. */
export type CatalogOutcome =
  | { ok: true; result: unknown }
  | { ok: false; error: unknown };

/**
 * Hooks around each operation. A `before` that throws stops the operation: it does not run, `after` is not
 * called, and the caller gets the hook's error. `after` is called when the operation succeeds and when it
 * fails; an error that `after` throws goes to the caller.
 *
 * @example
 * ```ts
 * import type { CatalogHooks } from "./hooks.ts";
 * const seen: string[] = [];
 * const hooks: CatalogHooks = {
 *   before: (call) => void seen.push(`${call.op} ${call.uri}`),
 *   after: (call, outcome) => void seen.push(`${call.op} ${outcome.ok ? "ok" : "failed"}`),
 * };
 * ```
 */
export interface CatalogHooks {
  before?(call: CatalogCall): void | Promise<void>;
  after?(call: CatalogCall, outcome: CatalogOutcome): void | Promise<void>;
}

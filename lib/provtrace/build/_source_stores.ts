/**
 * The sources of a trace database's runs: their `trace_sources` rows, and their stores, each opened once,
 * read-only, for `check` and the exports.
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import { type EvidenceStore, openStore } from "../../provevi/mod.ts";
import type { TraceSourceRow } from "./check_run.ts";

/**
 * The `trace_sources` rows of a trace database, by run ID.
 *
 * @param db An open trace database.
 * @param runIds Only these runs; all of them by default.
 * @returns The rows.
 */
export function traceSources(db: DatabaseSync, runIds?: readonly string[]): TraceSourceRow[] {
  const all = db.prepare(
    "SELECT run_id, store_uri, runs_root, last_hash, verified, build_version, rows_digest FROM trace_sources ORDER BY run_id",
  ).all() as unknown as TraceSourceRow[];
  if (runIds === undefined) return all;
  const wanted = new Set(runIds);
  return all.filter((r) => wanted.has(r.run_id));
}

/**
 * The stores the runs of a trace database came from, each opened once, read-only; closed when disposed.
 *
 * @example
 * ```ts
 * import { SourceStores } from "./_source_stores.ts";
 * await using stores = new SourceStores();
 * // const store = await stores.open(sourceRow);
 * ```
 */
export class SourceStores implements AsyncDisposable {
  readonly #runs: string | undefined;
  readonly #open = new Map<string, Promise<EvidenceStore | string>>();

  /** @param runs The runs root to read a `file` store from, instead of the one each run records. */
  constructor(runs?: string) {
    this.#runs = runs;
  }

  /**
   * The store of a run's source.
   * @returns The store, or why it cannot be opened, in one line.
   */
  open(row: { store_uri: string; runs_root: string }): Promise<EvidenceStore | string> {
    const runs = this.#runs ?? row.runs_root;
    const key = `${row.store_uri}\n${runs}`;
    let store = this.#open.get(key);
    if (store === undefined) {
      store = openStore(row.store_uri, { readOnly: true, runs }).catch((error: Error) =>
        `the store ${row.store_uri} cannot be opened: ${error.message.split("\n")[0]}`
      );
      this.#open.set(key, store);
    }
    return store;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    for (const p of this.#open.values()) {
      const store = await p;
      if (typeof store !== "string") await store.close();
    }
  }
}

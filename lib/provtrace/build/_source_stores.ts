/**
 * The sources of a trace database's runs: their `trace_sources` rows, and their stores, each opened once,
 * read-only, for `check` and the exports.
 *
 * Where a run's evidence is read is the user's to say, never the file's: the file records the store and runs
 * root each run was built from, but whoever can edit the file can point them at a store of their own holding a
 * forged run that verifies (or at a server that asks for the user's password), and a check against that would
 * prove nothing. So a run is read only from a store the user names (`--store`, `file` when none is named) and
 * from the user's runs root (`--runs`, else the default one); a run the file says came from elsewhere is refused
 * with one line that names the source and the option that would read it.
 * @module
 */
import { resolve } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import type { EvidenceStore } from "../../provevi/mod.ts";
import { runsRoot } from "../../provevi/evidence/mod.ts";
import { openStore } from "../../provevi/runs/mod.ts";
import { readSourceEvidence, type SourceEvidence, type TraceSourceRow } from "./check_run.ts";

/**
 * The `trace_sources` rows of a trace database, by run ID.
 *
 * @param db An open trace database.
 * @param runIds Only these runs; all of them by default.
 * @returns The rows.
 */
export function traceSources(db: DatabaseSync, runIds?: readonly string[]): TraceSourceRow[] {
  const all = db.prepare(
    "SELECT run_id, store_uri, runs_root, last_hash, verified, build_version, rows_digest, rows_mac FROM trace_sources ORDER BY run_id",
  ).all() as unknown as TraceSourceRow[];
  if (runIds === undefined) return all;
  const wanted = new Set(runIds);
  return all.filter((r) => wanted.has(r.run_id));
}

/** Where the user lets a check read runs. */
export interface SourceOptions {
  /** The runs root; the default one (`PROVRUN_RUNS`, …) when absent. */
  runs?: string;
  /** The store URIs runs may come from, as the build was given them; `file` alone when absent or empty. */
  stores?: readonly string[];
}

/**
 * The stores the user names, each opened once, read-only, with the user's runs root; closed when disposed.
 *
 * @example
 * ```ts
 * import { SourceStores } from "./_source_stores.ts";
 * await using stores = new SourceStores({ stores: ["file"] });
 * // const store = await stores.open(sourceRow); // the store, or why the run is not read
 * ```
 */
export class SourceStores implements AsyncDisposable {
  readonly #runs: string | undefined;
  readonly #named: readonly string[];
  readonly #open = new Map<string, Promise<EvidenceStore | string>>();
  #root: { runs: string } | { problem: string } | null = null;

  /** @param options The user's runs root and stores. */
  constructor(options: SourceOptions = {}) {
    this.#runs = options.runs;
    this.#named = options.stores?.length ? options.stores : ["file"];
  }

  /**
   * The store of a run's source, when it is one the user names, with the user's runs root.
   * @returns The store, or why the run is not read from it, in one line.
   */
  async open(row: { store_uri: string; runs_root: string }): Promise<EvidenceStore | string> {
    // Found once: a check of thousands of runs asks for each.
    this.#root ??= (() => {
      try {
        return { runs: runsRoot(this.#runs) };
      } catch (error) {
        return { problem: (error as Error).message };
      }
    })();
    if ("problem" in this.#root) return this.#root.problem;
    const runs = this.#root.runs;
    const notChosen = "(a trace database does not choose the evidence it is checked against)";
    if (resolve(row.runs_root) !== runs) {
      return `it was built from the runs root ${row.runs_root}, and this check reads ${runs}: pass --runs ${row.runs_root} to read it there ${notChosen}`;
    }
    const failed: string[] = [];
    for (const uri of this.#named) {
      const store = await this.#openNamed(uri, runs);
      if (typeof store === "string") failed.push(store);
      else if (store.uri === row.store_uri) return store;
    }
    return `it was built from the store ${row.store_uri}, which --store does not name: pass --store ${row.store_uri} to read it there ${notChosen}${
      failed.length ? `; ${failed[0]}` : ""
    }`;
  }

  #openNamed(uri: string, runs: string): Promise<EvidenceStore | string> {
    let store = this.#open.get(uri);
    if (store === undefined) {
      store = openStore(uri, { readOnly: true, runs }).catch((error: Error) =>
        `the store ${uri} cannot be opened: ${error.message.split("\n")[0]}`
      );
      this.#open.set(uri, store);
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

/**
 * A run's store, and its files read ahead for its check (or why the store is not read). For `check` and the exports.
 */
export async function sourceWithEvidence(
  stores: SourceStores,
  source: TraceSourceRow,
): Promise<{ store: EvidenceStore | string; evidence: Promise<SourceEvidence> | null }> {
  const store = await stores.open(source);
  if (typeof store === "string") return { store, evidence: null };
  const evidence = readSourceEvidence(store, source.run_id);
  evidence.catch(() => {}); // the check's to report
  return { store, evidence };
}

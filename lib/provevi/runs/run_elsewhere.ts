/**
 * A run made on another machine, verified here: its folder is not on this machine, so its committed bundle is
 * snapshotted from the catalog and read instead, with the store's rows.
 * @module
 */
import type { Catalog } from "../../provcat/mod.ts";
import type { RunRecord } from "../evidence/record.ts";
import { RunNotFound } from "../evidence/errors.ts";
import { FileRunRecord } from "../store/file_store.ts";
import type { EvidenceStore } from "../store/store.ts";
import { RunElsewhere } from "../postgres/postgres_store.ts";
import { findRun } from "./find_run.ts";

/**
 * Finds a run as {@linkcode findRun} does; when the store holds it but its folder is on another machine, and
 * it has a committed bundle, the bundle is snapshotted through the catalog and read instead.
 *
 * @param ref A run ID or a run folder's path.
 * @param options `store` to look in, `runs` for the default file store's runs root, and `catalog` (or a
 * function that opens one) to read bundles with.
 * @returns The record, and the pinned bundle it was read from (null when it is the run's own folder).
 * @throws RunNotFound when there is no such run, or it is elsewhere with no bundle or no catalog to read it.
 * @example
 * ```ts
 * import { FileStore, findRunOrBundle } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * await using store = new FileStore({ runs: "fixtures/runs" });
 * const { record, bundle } = await findRunOrBundle("run-20261129T120000Z-0badc0de", { store });
 * assert.equal(record.runId, "run-20261129T120000Z-0badc0de");
 * assert.equal(bundle, null);
 * ```
 */
export async function findRunOrBundle(
  ref: string,
  options: {
    store?: EvidenceStore;
    runs?: string;
    catalog?: Catalog | (() => Catalog | Promise<Catalog>);
  } = {},
): Promise<{ record: RunRecord; bundle: string | null }> {
  try {
    return { record: await findRun(ref, options), bundle: null };
  } catch (error) {
    if (!(error instanceof RunElsewhere) || error.bundle === null || options.catalog === undefined) {
      throw error;
    }
    const ours = typeof options.catalog === "function";
    let catalog: Catalog | null = null;
    try {
      catalog = typeof options.catalog === "function" ? await options.catalog() : options.catalog;
      const snapshot = await catalog.snapshot(error.bundle);
      return { record: new FileRunRecord(error.runId, snapshot.path), bundle: error.bundle };
    } catch (reading) {
      throw new RunNotFound(`${error.message} (reading it here failed: ${(reading as Error).message})`, {
        cause: reading,
      });
    } finally {
      if (ours) await catalog?.close();
    }
  }
}

/**
 * The committed bundle as a part of the run: after the seal, when the run file asks for one, the run's evidence
 * is committed through the catalog to `run://<org>/<domain>/<env>/<run_id>`, and an indexed store records where.
 * @module
 */
import type { EvidenceStore } from "../../provevi/mod.ts";
import { commitBundle } from "../../provevi/runs/bundle.ts";
import type { Catalog } from "../../provcat/mod.ts";
import { CatalogMissing } from "../run/errors.ts";
import type { RunPart, SealedRun } from "../run/run_part.ts";

/** Where a bundle was committed. */
export interface CommittedBundle {
  uri: string;
  pinned: string | null;
}

/**
 * The bundle part of a run.
 *
 * @example
 * ```ts
 * import { FileStore } from "../../provevi/mod.ts";
 * import { BundlePart } from "./bundle_part.ts";
 * const part = new BundlePart(false, { store: new FileStore({ runs: "/tmp/runs" }) });
 * part.bundle; // null: the run file asks for no bundle
 * ```
 */
export class BundlePart implements RunPart {
  readonly name = "bundle";
  readonly #wanted: boolean;
  readonly #catalog: Catalog | undefined;
  readonly #store: EvidenceStore;
  /** The committed bundle, once the run is sealed and its bundle committed. */
  bundle: CommittedBundle | null = null;

  /**
   * @param wanted The run file's `run.bundle`.
   * @param options The catalog to commit to, and the store that records where.
   */
  constructor(wanted: boolean, options: { catalog?: Catalog; store: EvidenceStore }) {
    this.#wanted = wanted;
    this.#catalog = options.catalog;
    this.#store = options.store;
  }

  /**
   * Commits the bundle.
   * @throws CatalogMissing when no catalog was given; the catalog's errors when the commit fails.
   */
  async afterSeal(sealed: SealedRun): Promise<void> {
    if (!this.#wanted) return;
    if (!this.#catalog) {
      throw new CatalogMissing(
        "the run file asks for a bundle, and no catalog was given to commit it to: pass a catalog, " +
          "or add a provcat.yaml",
      );
    }
    this.bundle = await commitBundle(this.#catalog, sealed.folder, sealed.uri);
    await this.#store.recordBundle?.(sealed.runId, this.bundle);
  }
}

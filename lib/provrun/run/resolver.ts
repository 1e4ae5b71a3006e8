/**
 * The resolver: pins a URI through the catalog, then makes a read-only snapshot of the pinned version. Each
 * step writes its event (`context_resolved`, `snapshot_materialized`) and opens its span.
 * @module
 */
import type { Catalog, Snapshot } from "../../provcat/mod.ts";
import type { EvidenceRecorder } from "./recorder.ts";

/**
 * Resolves the inputs of one run through a provcat catalog.
 *
 * @example
 * ```ts
 * import { Catalog } from "../../provcat/mod.ts";
 * import { ProvcatResolver } from "./resolver.ts";
 * // const resolver = new ProvcatResolver(await Catalog.open(), recorder);
 * // const snap = await resolver.resolve("data://acme/demo/dev/finance/revenue.csv?at=branch:main");
 * ```
 */
export class ProvcatResolver {
  /** @param catalog The run's catalog. @param recorder The run's recorder. */
  constructor(readonly catalog: Catalog, readonly recorder: EvidenceRecorder) {}

  /**
   * Pins `uri` (`context_resolved`), then snapshots the pinned version (`snapshot_materialized`). A URI in a
   * store without commits has no pin, and its snapshot is of the store as it is.
   *
   * @returns The snapshot; its `pinned` is null for a store without commits.
   */
  async resolve(uri: string): Promise<Snapshot> {
    let pinned: string | null = null;
    await this.recorder.step(
      "context_resolved",
      { component: "ProvcatResolver", spanName: "provcat.pin" },
      async () => {
        pinned = (await this.catalog.pin(uri)).pinned;
        return { refs: pinned ? [uri, pinned] : [uri], data: { pinned } };
      },
    );
    const at: string = pinned ?? uri;
    let snap!: Snapshot;
    await this.recorder.step(
      "snapshot_materialized",
      { component: "ProvcatResolver", spanName: "provcat.snapshot" },
      async () => {
        snap = await this.catalog.snapshot(at);
        return {
          refs: [snap.pinned ?? at],
          data: { kind: snap.kind, sha256: snap.sha256, reused: snap.reused },
        };
      },
    );
    return snap;
  }
}

/**
 * The work of s3_read_attacks_test.ts that is measured in a process of its own (`measuredInChild`): a catalog over
 * an s3 store reads what a hostile server (or whoever can write the bucket) gives.
 * @module
 */
import { Catalog, type CatalogConfig } from "../../lib/provcat/mod.ts";

/** What a catalog's call gave: nothing (it passed) or its error's message. */
export interface Outcome {
  message: string | null;
}

/**
 * Opens the catalog and reads `warm` (so the AWS SDK is loaded and its client made before the measure), then,
 * measured, does `op` on `uri`.
 *
 * @param config The catalog's config.
 * @param warm A URI that reads well.
 * @param op `read`, `snapshot`, `commit`, or `put` (of `source`).
 * @param uri The URI the attack is on.
 * @param source The file a `put` writes.
 */
export async function attack(
  config: CatalogConfig,
  warm: string,
  op: "read" | "snapshot" | "commit" | "put",
  uri: string,
  source = "",
): Promise<() => Promise<Outcome>> {
  const catalog = await Catalog.open({ config });
  await catalog.read(warm);
  return async () => {
    try {
      if (op === "read") await catalog.read(uri);
      else if (op === "snapshot") await catalog.snapshot(uri);
      else if (op === "put") await catalog.put(uri, source);
      else await catalog.commit(uri, "attacked");
      return { message: null };
    } catch (error) {
      return { message: (error as Error).message };
    }
  };
}

/**
 * The work of catalog_files_attacks_test.ts that is measured in a process of its own (`measuredInChild`): a
 * catalog reads or snapshots what a git repository or a folder holds.
 * @module
 */
import { Catalog, type CatalogConfig } from "../../lib/provcat/mod.ts";

/**
 * Opens the catalog, then, measured, does `op` on `uri`: what it gave (its size) or its error's message.
 *
 * @param config The catalog's config.
 * @param op `read` or `snapshot`.
 * @param uri The URI.
 */
export async function attack(
  config: CatalogConfig,
  op: "read" | "snapshot",
  uri: string,
): Promise<() => Promise<{ message: string | null }>> {
  const catalog = await Catalog.open({ config });
  return async () => {
    try {
      if (op === "read") await catalog.read(uri);
      else await catalog.snapshot(uri);
      return { message: null };
    } catch (error) {
      return { message: (error as Error).message };
    }
  };
}

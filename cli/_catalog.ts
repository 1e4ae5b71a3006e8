/**
 * `provr catalog pin|ls|put|commit|snapshot URI`: thin commands over the catalog library, each with `--json`.
 * @module
 */
import { Command } from "commander";
import { Catalog } from "../lib/provcat/mod.ts";
import type { Io } from "./_io.ts";
import { jsonText } from "./_json.ts";

/** The options that choose the catalog, shared by `catalog` and `verify`. */
export interface CatalogChoice {
  config?: string;
  tenant?: string;
}

/**
 * Opens the catalog that `--config` and `--tenant` choose (else `PROVCAT_CONFIG`, else `provcat.yaml`).
 *
 * @param choice The command's options.
 * @returns The catalog.
 * @example
 * ```ts
 * import { openCatalog } from "./_catalog.ts";
 * const catalog = await openCatalog({ config: "provcat.yaml", tenant: "beta" });
 * ```
 */
export async function openCatalog(choice: CatalogChoice): Promise<Catalog> {
  return await Catalog.open({
    ...(choice.config ? { configPath: choice.config } : {}),
    ...(choice.tenant ? { tenant: choice.tenant } : {}),
  });
}

/**
 * Builds the `catalog` command group.
 *
 * @param io Where to write.
 * @returns The command, to add to a program.
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { catalogCommand } from "./_catalog.ts";
 * import { processIo } from "./_io.ts";
 * new Command("provr").addCommand(catalogCommand(processIo()));
 * ```
 */
export function catalogCommand(io: Io): Command {
  const group = new Command("catalog")
    .description("Pin, list, put, commit and snapshot catalog URIs.")
    .option("--config <file>", "the catalog config (default: PROVCAT_CONFIG, else ./provcat.yaml)")
    .option("--tenant <name>", "use this tenant's part of the config");
  const json = (value: unknown) => io.out(jsonText(value));
  const withCatalog = async (fn: (catalog: Catalog) => Promise<void>) => {
    await using catalog = await openCatalog(group.opts<CatalogChoice>());
    await fn(catalog);
  };

  group.command("pin")
    .description("Print the URI at the fixed version that it names now.")
    .argument("<uri>", "a catalog URI")
    .option("--json", "print JSON")
    .action((uri: string, opts: { json?: boolean }) =>
      withCatalog(async (catalog) => {
        const pin = await catalog.pin(uri);
        if (opts.json) json(pin);
        else io.out(pin.pinned ?? `${uri} (unpinned: store "${pin.store}" has no commits)`);
      })
    );

  group.command("ls")
    .description("List a folder: one line per entry, kind, size and name.")
    .argument("<uri>", "a catalog URI of a folder")
    .option("--json", "print JSON")
    .action((uri: string, opts: { json?: boolean }) =>
      withCatalog(async (catalog) => {
        const listing = await catalog.list(uri);
        if (opts.json) return json(listing);
        for (const e of listing.entries) {
          io.out(`${e.kind.padEnd(6)} ${String(e.size ?? "-").padStart(12)} ${e.name}`);
        }
      })
    );

  group.command("put")
    .description("Write a local file or folder at a URI; commit it with `provr catalog commit`.")
    .argument("<uri>", "where to write, without ?at=")
    .argument("<path>", "a local file or folder")
    .option("--json", "print JSON")
    .action((uri: string, path: string, opts: { json?: boolean }) =>
      withCatalog(async (catalog) => {
        await catalog.put(uri, path);
        if (opts.json) json({ uri, path });
        else io.out(`put ${path} at ${uri}`);
      })
    );

  group.command("commit")
    .description("Commit what was put at or under a URI, and print the URI at the new commit.")
    .argument("<uri>", "the URI whose puts to commit")
    .requiredOption("-m, --message <text>", "the commit message")
    .option("--json", "print JSON")
    .action((uri: string, opts: { message: string; json?: boolean }) =>
      withCatalog(async (catalog) => {
        const committed = await catalog.commit(uri, opts.message);
        if (opts.json) json(committed);
        else io.out(committed.pinned ?? `${uri} (unpinned: the store has no commits)`);
      })
    );

  group.command("snapshot")
    .description("Make a read-only, content-addressed snapshot of a URI's pinned version; print its path.")
    .argument("<uri>", "a catalog URI")
    .option("--json", "print JSON")
    .action((uri: string, opts: { json?: boolean }) =>
      withCatalog(async (catalog) => {
        const snap = await catalog.snapshot(uri);
        if (opts.json) json(snap);
        else io.out(`${snap.path}\t${snap.sha256}\t${snap.pinned ?? "unpinned"}`);
      })
    );
  return group;
}

/**
 * A real git repository as a catalog, for runtime tests.
 * @module
 */
import { join } from "node:path";
import { Catalog } from "../../lib/provcat/catalog.ts";
import { removeWritable } from "../_files.ts";

export { git } from "../../cli/tour.ts";
import { git } from "../../cli/tour.ts";

/** A temporary folder with a git repository of `files`, a catalog over it, and a runs root. */
export async function gitCatalog(files: Record<string, string>): Promise<{
  root: string;
  repo: string;
  runs: string;
  catalog: Catalog;
  [Symbol.asyncDispose](): Promise<void>;
}> {
  const root = await Deno.makeTempDir({ prefix: "provrun-catalog-" });
  const repo = join(root, "lake");
  await Deno.mkdir(repo);
  await git(repo, "init", "-q");
  for (const [path, text] of Object.entries(files)) {
    await Deno.mkdir(join(repo, path, ".."), { recursive: true });
    await Deno.writeTextFile(join(repo, path), text);
  }
  await git(repo, "add", "-A");
  await git(repo, "commit", "-q", "-m", "data");
  return await openGitCatalog(root);
}

/**
 * The catalog of a folder that {@linkcode gitCatalog} made (or a copy of one, `cp -a`): its repository `lake`,
 * its cache and its runs root, all inside the folder.
 */
export async function openGitCatalog(root: string): Promise<{
  root: string;
  repo: string;
  runs: string;
  catalog: Catalog;
  [Symbol.asyncDispose](): Promise<void>;
}> {
  const repo = join(root, "lake");
  const catalog = await Catalog.open({
    config: {
      cache: join(root, "cache"),
      stores: { lake: { type: "git", path: repo } },
      routes: [
        { prefix: "data://acme/demo/dev", store: "lake" },
        { prefix: "data://acme/demo/prod", store: "lake" },
        { prefix: "run://acme/demo/dev", store: "lake", path: "runs" },
      ],
    },
  });
  return {
    root,
    repo,
    runs: join(root, "runs"),
    catalog,
    async [Symbol.asyncDispose]() {
      await catalog.close();
      await removeWritable(root);
    },
  };
}

/**
 * The `folder` store: a local folder. It has no commits, so nothing it holds can be pinned: `pin` gives no
 * commit, an experiment there is refused, and a bundle there stays unpinned.
 * @module
 */
import { dirname, join, resolve } from "node:path";
import { asCatalogError, copyTree, kindOf, removeTree, walkFiles } from "./_files.ts";
import { IrregularFile, readCapped } from "../provevi/evidence/open_file.ts";
import { READ_MAX_BYTES, sizeText } from "./_capped_read.ts";
import { CatalogError, CatalogNotFound } from "./errors.ts";
import type { CatalogStore, EntryKind, PutSource, StoreEntry, StoreVersion } from "./store.ts";
import type { Selector } from "./uri.ts";

/** The config of a folder store. */
export interface FolderStoreConfig {
  type: "folder";
  /** The folder. */
  path: string;
}

/**
 * A catalog store over a local folder.
 *
 * @example
 * ```ts
 * import { FolderStore } from "./folder_store.ts";
 * const store = new FolderStore("scratch", { type: "folder", path: "/tmp/scratch" });
 * await store.put("notes/a.txt", new TextEncoder().encode("hello"));
 * ```
 */
export class FolderStore implements CatalogStore {
  readonly type = "folder";
  readonly versioned = false;
  readonly root: string;

  #parentLinks: boolean;

  /**
   * @param name The store's name in the config.
   * @param config The folder; a relative path is taken from the current folder.
   * @param options `parentLinks`: follow a link among the folders above a key; only the catalog's own store of
   * `file:///` paths does, since such a path names a place on the disk, not a place in a store.
   */
  constructor(readonly name: string, config: FolderStoreConfig, options: { parentLinks?: boolean } = {}) {
    this.root = resolve(config.path);
    this.#parentLinks = options.parentLinks ?? false;
  }

  /** The live path of a key. */
  localPath(key: string): string {
    return key === "" ? this.root : join(this.root, ...key.split("/"));
  }

  /**
   * The live path of a key, refusing a link in any folder between the store's root and the key: a link such
   * as `etc -> /etc` would let `data://…/etc/passwd` read, and a put write, outside the store.
   */
  async #path(key: string): Promise<string> {
    if (this.#parentLinks || key === "") return this.localPath(key);
    const parts = key.split("/");
    let at = this.root;
    for (const part of parts.slice(0, -1)) {
      at = join(at, part);
      let info: Deno.FileInfo;
      try {
        info = await Deno.lstat(at);
      } catch (error) {
        if (error instanceof Deno.errors.NotFound) break;
        throw error;
      }
      if (info.isSymlink) {
        throw new CatalogError(
          `"${key}" in store "${this.name}" goes through ${at}, a link; the catalog does not follow links, so replace it with a folder`,
        );
      }
    }
    return this.localPath(key);
  }

  /** A folder has no versions: null, and a selector is refused. */
  resolve(key: string, at: Selector | null): Promise<StoreVersion | null> {
    if (at !== null) {
      return Promise.reject(
        new CatalogError(
          `store "${this.name}" is a folder, which has no versions, so "?at=${at.kind}:${at.id}" cannot select one for "${key}"; remove ?at=`,
        ),
      );
    }
    return Promise.resolve(null);
  }

  /** What is at a key. */
  async stat(key: string): Promise<EntryKind | null> {
    return await kindOf(await this.#path(key));
  }

  /** The entries of a folder. */
  async list(key: string): Promise<StoreEntry[]> {
    const path = await this.#path(key);
    if (await kindOf(path) !== "folder") throw this.#notFound(key, "folder");
    const entries: StoreEntry[] = [];
    for await (const entry of Deno.readDir(path)) {
      if (entry.isSymlink) continue;
      const size = entry.isFile ? (await Deno.stat(join(path, entry.name))).size : null;
      entries.push({ name: entry.name, kind: entry.isDirectory ? "folder" : "file", size });
    }
    return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** The bytes of a file, at most {@linkcode READ_MAX_BYTES} (a sparse file of gigabytes takes no room on a disk). */
  async read(key: string): Promise<Uint8Array> {
    const path = await this.#path(key);
    if (await kindOf(path) !== "file") throw this.#notFound(key, "file");
    // opened in one step that follows no link and waits on no FIFO: another writer of the store may swap one in
    return await readCapped(path, READ_MAX_BYTES).catch((error) => {
      if (error instanceof IrregularFile && /more than/.test(error.reason)) {
        throw new CatalogError(
          `"${key}" in store "${this.name}" (${path}) is larger than ${
            sizeText(READ_MAX_BYTES)
          }, the most the catalog reads into memory; it was not read: snapshot or fetch it instead`,
          { cause: error },
        );
      }
      throw asCatalogError(error);
    });
  }

  /** Copies a key to `dest`. */
  async materialize(key: string, _version: StoreVersion | null, dest: string): Promise<EntryKind> {
    const path = await this.#path(key);
    const kind = await kindOf(path);
    if (kind === null) throw this.#notFound(key, "file or folder");
    await copyTree(path, dest, kind);
    return kind;
  }

  /** Writes at once, replacing what was at the key. */
  async put(key: string, source: PutSource): Promise<void> {
    if (key === "") {
      throw new CatalogError(`cannot put at the root of store "${this.name}"; name a path under it`);
    }
    const path = await this.#path(key);
    if (typeof source !== "string") {
      await removeTree(path);
      await Deno.mkdir(dirname(path), { recursive: true });
      await Deno.writeFile(path, source);
      return;
    }
    const kind = await kindOf(source);
    if (kind === null) throw new CatalogError(`cannot put "${source}": it does not exist`);
    if (kind === "folder") await walkFiles(source); // refuses links before anything is removed
    await removeTree(path);
    await copyTree(source, path, kind);
  }

  /** Nothing to commit: a folder has no versions. */
  commit(): Promise<StoreVersion | null> {
    return Promise.resolve(null);
  }

  /** Nothing to close. */
  close(): Promise<void> {
    return Promise.resolve();
  }

  #notFound(key: string, what: string): CatalogNotFound {
    return new CatalogNotFound(`"${key}" is not a ${what} in store "${this.name}" (${this.localPath(key)})`);
  }
}

/**
 * The interface every catalog store implements: `folder`, `git` and `s3`. A store knows keys, the
 * `/`-separated paths under its root that a route makes from a URI; the catalog does the rest (routes, the
 * cache, snapshots, hooks).
 * @module
 */
import type { Selector } from "./uri.ts";

/** A file or a folder. */
export type EntryKind = "file" | "folder";

/** A fixed version of a store: a commit (git, s3) or one object's version (s3). */
export interface StoreVersion {
  kind: "commit" | "version";
  id: string;
}

/** One entry of a folder. */
export interface StoreEntry {
  /** The entry's name in its folder. */
  name: string;
  kind: EntryKind;
  /** The size in bytes of a file; null for a folder. */
  size: number | null;
}

/** What `put` writes: a local file or folder by its path, or bytes. */
export type PutSource = string | Uint8Array;

/**
 * A catalog store. `version` is null only in a store without versions (`versioned` false); a versioned store
 * is always read at a fixed version that {@linkcode CatalogStore.resolve} gave.
 *
 * @example
 * ```ts
 * import type { CatalogStore } from "./store.ts";
 * async function readAtHead(store: CatalogStore, key: string): Promise<Uint8Array> {
 *   return await store.read(key, await store.resolve(key, null));
 * }
 * ```
 */
export interface CatalogStore {
  /** The store's name in the config. */
  readonly name: string;
  /** `folder`, `git` or `s3`. */
  readonly type: string;
  /** True when the store has commits, so that a pin names a fixed version. */
  readonly versioned: boolean;
  /**
   * The fixed version that a selector names for a key: null selects the newest (the default branch).
   * @returns null in a store without versions.
   * @throws CatalogNotFound for a branch or commit the store lacks; CatalogError for a selector it does not take.
   */
  resolve(key: string, at: Selector | null): Promise<StoreVersion | null>;
  /** What is at a key: a file, a folder, or null for nothing. */
  stat(key: string, version: StoreVersion | null): Promise<EntryKind | null>;
  /** The entries of a folder, sorted by name. @throws CatalogNotFound when the key is not a folder. */
  list(key: string, version: StoreVersion | null): Promise<StoreEntry[]>;
  /** The bytes of a file. @throws CatalogNotFound when the key is not a file. */
  read(key: string, version: StoreVersion | null): Promise<Uint8Array>;
  /** Writes the file or folder at a key to `dest`, which does not exist yet. */
  materialize(key: string, version: StoreVersion | null, dest: string): Promise<EntryKind>;
  /** The live path of a key in a store without versions (a folder store), for reads that need no copy. */
  localPath?(key: string): string;
  /**
   * Writes a file or a folder at a key, replacing what was there; it is part of the newest version only after
   * {@linkcode CatalogStore.commit} (a store without versions writes at once).
   */
  put(key: string, source: PutSource): Promise<void>;
  /**
   * Commits what was put at or under a key (`""` for everything).
   * @returns The new version (the current one when nothing changed), or null in a store without versions.
   */
  commit(key: string, message: string): Promise<StoreVersion | null>;
  /** Frees what the store holds (connections). */
  close(): Promise<void>;
}

/** The key under a key: `join("a", "b")` is `a/b`, and `""` is the root. */
export function joinKey(...parts: string[]): string {
  return parts.filter((p) => p !== "").join("/");
}

/** True when `key` is `scope` or under it (every key is under the root `""`). */
export function underKey(key: string, scope: string): boolean {
  return scope === "" || key === scope || key.startsWith(scope + "/");
}

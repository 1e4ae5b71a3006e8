/**
 * What the catalog's operations give: where a URI goes (its route), a pin, a fetched path, a commit and a
 * listing. Plain data, so that a command prints it as JSON.
 * @module
 */
import type { CatalogStore, EntryKind, StoreVersion } from "./store.ts";
import type { CatalogUri } from "./uri.ts";

/** Where a URI goes: its store and its key in the store. */
export interface Route {
  /** The parsed URI. */
  uri: CatalogUri;
  /** The store. */
  store: CatalogStore;
  /** The `/` path in the store. */
  key: string;
}

/** What `pin` gives. */
export interface Pin {
  /** The URI as given. */
  uri: string;
  /** The URI with `?at=commit:…` (or `version:`), or null when the store has no commits. */
  pinned: string | null;
  /** The store's name. */
  store: string;
  /** The fixed version, or null. */
  version: StoreVersion | null;
  /** What the URI names. */
  kind: EntryKind;
}

/** What `fetch` gives. */
export interface Fetched {
  uri: string;
  pinned: string | null;
  /** A local path: a fixed version's own cache folder, or a folder store's live path when `pinned` is null. */
  path: string;
  kind: EntryKind;
  /** The SHA-256 of a fixed version's cached copy, as a snapshot computes it; absent for a live path. */
  sha256?: string;
}

/** What `commit` gives. */
export interface Committed {
  uri: string;
  /** The URI at the new commit, or null when the store has no commits. */
  pinned: string | null;
}

/** One entry of a listing. */
export interface ListEntry {
  name: string;
  kind: EntryKind;
  size: number | null;
  /** The entry's URI, at the listing's pin when it has one. */
  uri: string;
}

/** What `list` gives. */
export interface Listing {
  uri: string;
  pinned: string | null;
  entries: ListEntry[];
}

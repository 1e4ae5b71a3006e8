/**
 * provcat: the catalog. Logical URIs (`scheme://org/domain/env/path?at=…`) routed to stores (`folder`, `git`,
 * `s3`), with pins, fetches of fixed versions, read-only content-addressed snapshots, puts and commits, each
 * through the catalog's hooks.
 *
 * This is the catalog's public API (`@mahacata/prove/lib/provcat`): {@linkcode Catalog}, its config and
 * results, URIs and errors. The stores' implementations and the cache's machinery stay in the folder's files.
 *
 * @example
 * ```ts
 * import { Catalog } from "@mahacata/prove/lib/provcat";
 * import assert from "node:assert/strict";
 *
 * const lake = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${lake}/revenue.csv`, "month,revenue\n2026-01,10\n");
 * await using catalog = await Catalog.open({
 *   config: {
 *     cache: `${lake}/.cache`,
 *     stores: { lake: { type: "folder", path: lake } },
 *     routes: [{ prefix: "data://acme/risk/dev", store: "lake" }],
 *   },
 * });
 * const snap = await catalog.snapshot("data://acme/risk/dev/revenue.csv");
 * assert.equal(await Deno.readTextFile(snap.path), "month,revenue\n2026-01,10\n");
 * ```
 * @module
 */
export { CatalogError, CatalogNotFound, UriError } from "./errors.ts";
export {
  type CatalogUri,
  formatUri,
  type LogicalUri,
  parseUri,
  type PhysicalUri,
  type Selector,
  type SelectorKind,
} from "./uri.ts";
export type { CatalogStore, EntryKind, PutSource, StoreEntry, StoreVersion } from "./store.ts";
export type { CatalogCall, CatalogHooks, CatalogOperation, CatalogOutcome } from "./hooks.ts";
export type { CatalogConfig, RouteConfig, StoreConfig, TenantConfig } from "./config.ts";
export type { Snapshot } from "./snapshot.ts";
export type { FolderStoreConfig } from "./folder_store.ts";
export type { GitStoreConfig } from "./git_store.ts";
export type { S3StoreConfig } from "./s3_store.ts";
export { Catalog, type CatalogOpenOptions } from "./catalog.ts";
export type { Committed, Fetched, ListEntry, Listing, Pin, Route } from "./catalog_results.ts";

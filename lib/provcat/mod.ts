/**
 * provcat: the catalog. Logical URIs (`scheme://org/domain/env/path?at=…`) routed to stores (`folder`, `git`,
 * `s3`), with pins, fetches of fixed versions, read-only content-addressed snapshots, puts and commits, each
 * through the catalog's hooks.
 *
 * @example
 * ```ts
 * import { Catalog } from "./mod.ts";
 * await using catalog = await Catalog.open({
 *   config: { stores: { lake: { type: "git", path: "/srv/lake" } }, routes: [{ prefix: "data://acme/risk/dev", store: "lake" }] },
 * });
 * const { pinned } = await catalog.pin("data://acme/risk/dev/evals/revenue.csv");
 * ```
 * @module
 */
export * from "./errors.ts";
export * from "./uri.ts";
export * from "./store.ts";
export * from "./hooks.ts";
export * from "./config.ts";
export * from "./snapshot.ts";
export * from "./folder_store.ts";
export * from "./git_store.ts";
export * from "./s3_store.ts";
export * from "./catalog.ts";

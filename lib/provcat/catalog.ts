/**
 * The catalog: logical URIs routed to stores, with pins, fetches into a cache of fixed versions, snapshots,
 * puts and commits, each through the catalog's own hooks. No globals: two catalogs can be open in one process.
 * @module
 */
import { basename, join } from "node:path";
import { fetchVersion, recordedHash } from "./_fetch_cache.ts";
import type { Committed, Fetched, Listing, Pin, Route } from "./catalog_results.ts";
import {
  type CatalogConfig,
  checkConfig,
  type EffectiveConfig,
  effectiveConfig,
  readConfig,
} from "./config.ts";
import { CatalogError, CatalogNotFound } from "./errors.ts";
import { FolderStore } from "./folder_store.ts";
import { GitStore } from "./git_store.ts";
import type { CatalogCall, CatalogHooks, CatalogOperation } from "./hooks.ts";
import { S3Store } from "./s3_store.ts";
import { materializeSnapshot, reusableSnapshot, type Snapshot, snapshotPath } from "./snapshot.ts";
import { type CatalogStore, joinKey, type PutSource } from "./store.ts";
import { childUri, formatUri, parseUri, withSelector } from "./uri.ts";

/** How to open a catalog. */
export interface CatalogOpenOptions {
  /** The config as an object; without it, `configPath`, else `PROVCAT_CONFIG`, else `provcat.yaml`. */
  config?: CatalogConfig;
  /** The config file to read. */
  configPath?: string;
  /** The tenant whose part of the config to use. */
  tenant?: string;
  /** Hooks called before and after each operation, in order. */
  hooks?: CatalogHooks | CatalogHooks[];
  /** The folder that relative paths start from; the current folder by default. */
  cwd?: string;
}

/**
 * A catalog.
 *
 * @example
 * ```ts
 * import { Catalog } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const lake = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${lake}/revenue.csv`, "quarter,revenue\nQ3,48.2\n");
 * await using catalog = await Catalog.open({
 *   config: {
 *     cache: `${lake}/.cache`,
 *     stores: { lake: { type: "folder", path: lake } },
 *     routes: [{ prefix: "data://acme/demo/dev", store: "lake" }],
 *   },
 * });
 * const snap = await catalog.snapshot("data://acme/demo/dev/revenue.csv");
 * assert.equal(await Deno.readTextFile(snap.path), "quarter,revenue\nQ3,48.2\n");
 * assert.match(snap.sha256, /^[0-9a-f]{64}$/);
 * ```
 */
export class Catalog implements AsyncDisposable {
  /** The cache root. */
  readonly cache: string;
  #config: EffectiveConfig;
  #stores = new Map<string, CatalogStore>();
  #files: FolderStore;
  #hooks: CatalogHooks[];

  private constructor(config: EffectiveConfig, hooks: CatalogHooks[]) {
    this.#config = config;
    this.cache = config.cache;
    this.#hooks = hooks;
    this.#files = new FolderStore("file", { type: "folder", path: "/" }, { parentLinks: true });
  }

  /**
   * Opens a catalog from an object, a file, `PROVCAT_CONFIG` or `provcat.yaml` in the current folder.
   *
   * @param options The config or where to read it, the tenant and the hooks.
   * @returns The catalog; no store is contacted until an operation needs it.
   * @throws CatalogError when the config cannot be read or is not a catalog config.
   */
  static async open(options: CatalogOpenOptions = {}): Promise<Catalog> {
    const cwd = options.cwd ?? Deno.cwd();
    let config: CatalogConfig;
    if (options.config) config = checkConfig(options.config);
    else {
      const path = options.configPath ?? Deno.env.get("PROVCAT_CONFIG") ?? join(cwd, "provcat.yaml");
      config = await readConfig(path);
    }
    const hooks = options.hooks === undefined
      ? []
      : Array.isArray(options.hooks)
      ? options.hooks
      : [options.hooks];
    return new Catalog(
      effectiveConfig(config, { cwd, ...(options.tenant !== undefined ? { tenant: options.tenant } : {}) }),
      hooks,
    );
  }

  /** The store of a name, made on first use. */
  #store(name: string): CatalogStore {
    const made = this.#stores.get(name);
    if (made) return made;
    const config = this.#config.stores[name]!;
    const store = config.type === "git"
      ? new GitStore(name, config)
      : config.type === "s3"
      ? new S3Store(name, config)
      : new FolderStore(name, config);
    this.#stores.set(name, store);
    return store;
  }

  /**
   * Where a URI goes: the longest route prefix that covers it, or the local file system for `file:///`.
   *
   * @throws UriError when the text is not a URI; CatalogError when no route covers it.
   */
  route(uri: string): Route {
    const parsed = parseUri(uri);
    if (parsed.type === "physical") {
      return { uri: parsed, store: this.#files, key: parsed.path.slice(1) };
    }
    let best: EffectiveConfig["routes"][number] | null = null;
    for (const r of this.#config.routes) {
      const p = r.prefix;
      if (
        p.scheme !== parsed.scheme || p.org !== parsed.org || p.domain !== parsed.domain ||
        p.env !== parsed.env
      ) {
        continue;
      }
      if (p.path.length > parsed.path.length || p.path.some((s, i) => parsed.path[i] !== s)) continue;
      if (!best || p.path.length > best.prefix.path.length) best = r;
    }
    if (!best) {
      const base = `${parsed.scheme}://${parsed.org}/${parsed.domain}/${parsed.env}`;
      throw new CatalogError(
        `no route covers "${uri}"; add a route for "${base}" (or a prefix of the URI) to the catalog config`,
      );
    }
    const key = joinKey(best.path, ...parsed.path.slice(best.prefix.path.length));
    return { uri: parsed, store: this.#store(best.store), key };
  }

  async #run<T>(
    op: CatalogOperation,
    uri: string,
    work: (route: Route) => Promise<T>,
    message?: string,
  ): Promise<T> {
    const route = this.route(uri);
    const call: CatalogCall = {
      op,
      uri,
      store: route.store.name,
      ...(message !== undefined ? { message } : {}),
    };
    for (const hook of this.#hooks) await hook.before?.(call);
    let result: T;
    try {
      result = await work(route);
    } catch (error) {
      for (const hook of this.#hooks) await hook.after?.(call, { ok: false, error });
      throw error;
    }
    for (const hook of this.#hooks) await hook.after?.(call, { ok: true, result });
    return result;
  }

  async #pin(uri: string, route: Route): Promise<Pin> {
    const at = route.uri.type === "logical" ? route.uri.at : null;
    const version = await route.store.resolve(route.key, at);
    const kind = await route.store.stat(route.key, version);
    if (kind === null) {
      throw new CatalogNotFound(
        `"${uri}" is not in store "${route.store.name}"${version ? ` at ${version.kind}:${version.id}` : ""}`,
      );
    }
    const pinned = version === null ? null : withSelector(route.uri, version);
    return { uri, pinned, store: route.store.name, version, kind };
  }

  /**
   * Pins a URI: the URI at the fixed version that its selector (or the default branch) names now.
   *
   * @param uri A logical or physical URI.
   * @returns The pin; `pinned` is null in a store without commits (a folder, a `file:///` path).
   * @throws CatalogNotFound when nothing is at the URI.
   * @example
   * ```ts
   * import { Catalog } from "./catalog.ts";
   * import assert from "node:assert/strict";
   *
   * const lake = await Deno.makeTempDir();
   * await new Deno.Command("git", { args: ["init", "-q", "-b", "main", lake] }).output();
   * await using catalog = await Catalog.open({
   *   config: {
   *     cache: `${lake}/.cache`,
   *     stores: { lake: { type: "git", path: lake } },
   *     routes: [{ prefix: "data://acme/risk/dev", store: "lake" }],
   *   },
   * });
   * await catalog.put("data://acme/risk/dev/revenue.csv", new TextEncoder().encode("q,r\nQ3,48.2\n"));
   * const committed = await catalog.commit("data://acme/risk/dev/revenue.csv", "revenue");
   * const { pinned } = await catalog.pin("data://acme/risk/dev/revenue.csv");
   * assert.equal(pinned, committed.pinned);
   * ```
   */
  async pin(uri: string): Promise<Pin> {
    return await this.#run("pin", uri, (route) => this.#pin(uri, route));
  }

  async #fetch(uri: string, route: Route, pinned?: Pin): Promise<Fetched> {
    const pin = pinned ?? await this.#pin(uri, route);
    if (pin.version === null) {
      const path = route.store.localPath?.(route.key);
      if (!path) throw new TypeError(`store "${route.store.name}" has no versions and no local path`);
      return { uri, pinned: null, path, kind: pin.kind };
    }
    return await fetchVersion(this.cache, { uri, route, pin, name: this.#name(route) });
  }

  #name(route: Route): string {
    return route.key === "" ? route.store.name : basename(route.key);
  }

  /**
   * Gives a local path of a URI. A fixed version goes to its own cache folder, which no later fetch changes,
   * so the path of a moving branch is never handed out: a branch is pinned first. In a store without commits
   * the path is the store's own, which moves; hand a run a {@linkcode Catalog.snapshot} instead.
   *
   * @param uri A logical or physical URI.
   * @returns The path and the pin.
   * @example
   * ```ts
   * import { Catalog } from "./catalog.ts";
   * import assert from "node:assert/strict";
   *
   * const lake = await Deno.makeTempDir();
   * await new Deno.Command("git", { args: ["init", "-q", "-b", "main", lake] }).output();
   * await using catalog = await Catalog.open({
   *   config: {
   *     cache: `${lake}/.cache`,
   *     stores: { lake: { type: "git", path: lake } },
   *     routes: [{ prefix: "data://acme/risk/dev", store: "lake" }],
   *   },
   * });
   * await catalog.put("data://acme/risk/dev/revenue.csv", new TextEncoder().encode("q,r\nQ3,48.2\n"));
   * const committed = await catalog.commit("data://acme/risk/dev/revenue.csv", "revenue");
   * const { path } = await catalog.fetch("data://acme/risk/dev/revenue.csv?at=branch:main");
   * assert.equal(await Deno.readTextFile(path), "q,r\nQ3,48.2\n");
   * ```
   */
  async fetch(uri: string): Promise<Fetched> {
    return await this.#run("fetch", uri, (route) => this.#fetch(uri, route));
  }

  /**
   * Makes (or reuses) a read-only, content-addressed snapshot of a URI's pinned version, at
   * `<cache>/snapshots/<kind>/<sha256>/<name>`.
   *
   * @param uri A logical or physical URI.
   * @returns `{ uri, pinned, path, sha256, kind, reused }`.
   * @example
   * ```ts
   * import { Catalog } from "./catalog.ts";
   * import assert from "node:assert/strict";
   *
   * const lake = await Deno.makeTempDir();
   * await new Deno.Command("git", { args: ["init", "-q", "-b", "main", lake] }).output();
   * await using catalog = await Catalog.open({
   *   config: {
   *     cache: `${lake}/.cache`,
   *     stores: { lake: { type: "git", path: lake } },
   *     routes: [{ prefix: "data://acme/risk/dev", store: "lake" }],
   *   },
   * });
   * await catalog.put("data://acme/risk/dev/revenue.csv", new TextEncoder().encode("q,r\nQ3,48.2\n"));
   * const committed = await catalog.commit("data://acme/risk/dev/revenue.csv", "revenue");
   * const snap = await catalog.snapshot("data://acme/risk/dev/revenue.csv?at=branch:main");
   * assert.equal(snap.pinned, committed.pinned);
   * assert.match(snap.sha256, /^[0-9a-f]{64}$/);
   * ```
   */
  async snapshot(uri: string): Promise<Snapshot> {
    return await this.#run("snapshot", uri, async (route) => {
      const pin = await this.#pin(uri, route);
      // A fixed version whose snapshot is already made and still holds its hash needs no fetch, and no hash of
      // the fetched copy: one pass over the snapshot's bytes.
      const known = pin.version === null ? null : await recordedHash(this.cache, { route, pin });
      if (known !== null) {
        const path = snapshotPath(this.cache, known.kind, known.sha256, this.#name(route));
        if (await reusableSnapshot(path, known.kind, known.sha256)) {
          return { uri, pinned: pin.pinned, path, sha256: known.sha256, kind: known.kind, reused: true };
        }
      }
      const fetched = await this.#fetch(uri, route, pin);
      const made = await materializeSnapshot(this.cache, fetched.path, {
        name: this.#name(route),
        kind: fetched.kind,
        ...(fetched.sha256 !== undefined ? { sha256: fetched.sha256 } : {}),
      });
      return {
        uri,
        pinned: fetched.pinned,
        path: made.path,
        sha256: made.sha256,
        kind: fetched.kind,
        reused: made.reused,
      };
    });
  }

  /**
   * Reads a file's bytes at the URI's selector (the newest version without one).
   *
   * @param uri The file's URI.
   * @returns The bytes.
   * @throws CatalogNotFound when the URI is not a file there.
   * @example
   * ```ts
   * import { Catalog } from "./catalog.ts";
   * import assert from "node:assert/strict";
   *
   * const lake = await Deno.makeTempDir();
   * await new Deno.Command("git", { args: ["init", "-q", "-b", "main", lake] }).output();
   * await using catalog = await Catalog.open({
   *   config: {
   *     cache: `${lake}/.cache`,
   *     stores: { lake: { type: "git", path: lake } },
   *     routes: [{ prefix: "data://acme/risk/dev", store: "lake" }],
   *   },
   * });
   * await catalog.put("data://acme/risk/dev/revenue.csv", new TextEncoder().encode("q,r\nQ3,48.2\n"));
   * const committed = await catalog.commit("data://acme/risk/dev/revenue.csv", "revenue");
   * const bytes = await catalog.read(committed.pinned!);
   * assert.equal(new TextDecoder().decode(bytes), "q,r\nQ3,48.2\n");
   * ```
   */
  async read(uri: string): Promise<Uint8Array> {
    return await this.#run("read", uri, async (route) => {
      const pin = await this.#pin(uri, route);
      if (pin.kind !== "file") {
        throw new CatalogNotFound(`"${uri}" is a folder, not a file; name a file under it`);
      }
      return await route.store.read(route.key, pin.version);
    });
  }

  /**
   * Lists a folder at the URI's selector.
   *
   * @param uri The folder's URI.
   * @returns The pin and the entries, sorted by name.
   * @example
   * ```ts
   * import { Catalog } from "./catalog.ts";
   * import assert from "node:assert/strict";
   *
   * const lake = await Deno.makeTempDir();
   * await new Deno.Command("git", { args: ["init", "-q", "-b", "main", lake] }).output();
   * await using catalog = await Catalog.open({
   *   config: {
   *     cache: `${lake}/.cache`,
   *     stores: { lake: { type: "git", path: lake } },
   *     routes: [{ prefix: "data://acme/risk/dev", store: "lake" }],
   *   },
   * });
   * await catalog.put("data://acme/risk/dev/revenue.csv", new TextEncoder().encode("q,r\nQ3,48.2\n"));
   * const committed = await catalog.commit("data://acme/risk/dev/revenue.csv", "revenue");
   * const { entries } = await catalog.list("data://acme/risk/dev");
   * assert.deepEqual(entries.map((e) => e.name), ["revenue.csv"]);
   * ```
   */
  async list(uri: string): Promise<Listing> {
    return await this.#run("list", uri, async (route) => {
      const pin = await this.#pin(uri, route);
      if (pin.kind !== "folder") throw new CatalogNotFound(`"${uri}" is a file, not a folder`);
      const base = pin.pinned ?? uri;
      const entries = (await route.store.list(route.key, pin.version)).map((e) => ({
        ...e,
        uri: childUri(base, e.name),
      }));
      return { uri, pinned: pin.pinned, entries };
    });
  }

  /**
   * Writes a local file or folder, or bytes, at a URI, replacing what was there. In a store with commits it
   * becomes part of the newest version at the next {@linkcode Catalog.commit}.
   *
   * @param uri Where to write; no `?at=`.
   * @param source A local path or bytes.
   * @example
   * ```ts
   * import { Catalog } from "./catalog.ts";
   * import assert from "node:assert/strict";
   *
   * const lake = await Deno.makeTempDir();
   * await new Deno.Command("git", { args: ["init", "-q", "-b", "main", lake] }).output();
   * await using catalog = await Catalog.open({
   *   config: {
   *     cache: `${lake}/.cache`,
   *     stores: { lake: { type: "git", path: lake } },
   *     routes: [{ prefix: "data://acme/risk/dev", store: "lake" }],
   *   },
   * });
   * await catalog.put("data://acme/risk/dev/revenue.csv", new TextEncoder().encode("q,r\nQ3,48.2\n"));
   * const committed = await catalog.commit("data://acme/risk/dev/revenue.csv", "revenue");
   * assert.match(committed.pinned!, /\?at=commit:[0-9a-f]{40}$/);
   * ```
   */
  async put(uri: string, source: PutSource): Promise<{ uri: string }> {
    return await this.#run("put", uri, async (route) => {
      this.#noSelector(route, "put");
      await route.store.put(route.key, source);
      return { uri };
    });
  }

  /**
   * Commits what was put at or under a URI.
   *
   * @param uri The URI whose puts to commit; no `?at=`.
   * @param message The commit message.
   * @returns The URI at the new commit, or `pinned: null` in a store without commits.
   * @example
   * ```ts
   * import { Catalog } from "./catalog.ts";
   * import assert from "node:assert/strict";
   *
   * const lake = await Deno.makeTempDir();
   * await new Deno.Command("git", { args: ["init", "-q", "-b", "main", lake] }).output();
   * await using catalog = await Catalog.open({
   *   config: {
   *     cache: `${lake}/.cache`,
   *     stores: { lake: { type: "git", path: lake } },
   *     routes: [{ prefix: "data://acme/risk/dev", store: "lake" }],
   *   },
   * });
   * await catalog.put("data://acme/risk/dev/revenue.csv", new TextEncoder().encode("q,r\nQ3,48.2\n"));
   * const committed = await catalog.commit("data://acme/risk/dev/revenue.csv", "revenue");
   * assert.match(committed.pinned!, /^data:\/\/acme\/risk\/dev\/revenue\.csv\?at=commit:/);
   * ```
   */
  async commit(uri: string, message: string): Promise<Committed> {
    return await this.#run("commit", uri, async (route) => {
      this.#noSelector(route, "commit");
      const version = await route.store.commit(route.key, message);
      return { uri, pinned: version === null ? null : withSelector(route.uri, version) };
    }, message);
  }

  #noSelector(route: Route, op: string): void {
    if (route.uri.type === "logical" && route.uri.at) {
      throw new CatalogError(
        `cannot ${op} "${formatUri(route.uri)}": a write goes to the newest version, so remove ?at=`,
      );
    }
  }

  /**
   * True when the store that a URI routes to has commits, so that a pin names a fixed version.
   * @example
   * ```ts
   * import { Catalog } from "./catalog.ts";
   * import assert from "node:assert/strict";
   *
   * const lake = await Deno.makeTempDir();
   * await new Deno.Command("git", { args: ["init", "-q", "-b", "main", lake] }).output();
   * await using catalog = await Catalog.open({
   *   config: {
   *     cache: `${lake}/.cache`,
   *     stores: { lake: { type: "git", path: lake } },
   *     routes: [{ prefix: "data://acme/risk/dev", store: "lake" }],
   *   },
   * });
   * await catalog.put("data://acme/risk/dev/revenue.csv", new TextEncoder().encode("q,r\nQ3,48.2\n"));
   * const committed = await catalog.commit("data://acme/risk/dev/revenue.csv", "revenue");
   * assert.equal(catalog.versioned("data://acme/risk/dev/revenue.csv"), true);
   * ```
   */
  versioned(uri: string): boolean {
    return this.route(uri).store.versioned;
  }

  /** Closes the stores' connections. */
  async close(): Promise<void> {
    for (const store of this.#stores.values()) await store.close();
    this.#stores.clear();
  }

  /** Closes the catalog at the end of an `await using` block. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/**
 * The catalog's config: `provcat.yaml` in the current folder, the file that `PROVCAT_CONFIG` names, or an
 * object. It names the stores, the routes from URI prefixes to stores, the cache folder, and tenants.
 *
 * ```yaml
 * cache: .provcat                  # default: .provcat in the current folder
 * stores:
 *   lake: { type: git, path: ../lake, branch: main }
 *   scratch: { type: folder, path: ./scratch }
 *   bucket: { type: s3, bucket: evidence, prefix: catalog/, endpoint: http://127.0.0.1:5055,
 *             region: us-east-1, forcePathStyle: true }
 * routes:
 *   - { prefix: "data+table://acme/risk/dev", store: lake, path: tables }
 *   - { prefix: "run://acme/demo/dev", store: bucket, path: runs }
 * tenants:                         # a tenant's part replaces the routes, adds stores, may set its cache
 *   beta:
 *     stores: { beta-lake: { type: git, path: ../beta-lake } }
 *     routes: [{ prefix: "run://beta/demo/dev", store: beta-lake }]
 * ```
 * @module
 */
import { dirname, isAbsolute, join, resolve } from "node:path";
import { parse } from "yaml";
import { CatalogError } from "./errors.ts";
import { firstLine, readCapped } from "../provevi/evidence/open_file.ts";
import { RECORD_MAX_BYTES } from "./_capped_read.ts";
import type { FolderStoreConfig } from "./folder_store.ts";
import type { GitStoreConfig } from "./git_store.ts";
import type { S3StoreConfig } from "./s3_store.ts";
import { isBranchName, type LogicalUri, parseUri } from "./uri.ts";

/** One store's config. */
export type StoreConfig = FolderStoreConfig | GitStoreConfig | S3StoreConfig;

/** One route: the URIs under `prefix` go to `store`, under `path` in it. */
export interface RouteConfig {
  /** A logical URI prefix: `scheme://org/domain/env` and optionally more segments; no `?at=`. */
  prefix: string;
  /** The store's name. */
  store: string;
  /** The folder in the store that the prefix maps to; the store's root by default. */
  path?: string;
}

/** A tenant's part of the config. */
export interface TenantConfig {
  cache?: string;
  stores?: Record<string, StoreConfig>;
  routes?: RouteConfig[];
}

/** The catalog's config. */
export interface CatalogConfig {
  /** The cache folder; `.provcat` in the current folder by default. */
  cache?: string;
  stores?: Record<string, StoreConfig>;
  routes?: RouteConfig[];
  tenants?: Record<string, TenantConfig>;
}

/** The config in effect: one tenant chosen, paths made absolute, every route's prefix parsed. */
export interface EffectiveConfig {
  cache: string;
  stores: Record<string, StoreConfig>;
  routes: { prefix: LogicalUri; text: string; store: string; path: string }[];
}

const TOP_KEYS = ["cache", "stores", "routes", "tenants"];
const TENANT_KEYS = ["cache", "stores", "routes"];
const STORE_KEYS: Record<string, string[]> = {
  folder: ["type", "path"],
  git: ["type", "path", "branch"],
  s3: ["type", "bucket", "prefix", "endpoint", "region", "forcePathStyle", "branch", "timeout"],
};

/**
 * Reads a config file.
 *
 * @param path The YAML file.
 * @returns The config, with relative paths taken from the file's folder.
 * @throws CatalogError when the file is missing, is not YAML, or is not a catalog config.
 * @example
 * ```ts ignore
 * import { readConfig } from "./config.ts";
 * const config = await readConfig("provcat.yaml");
 * ```
 */
export async function readConfig(path: string): Promise<CatalogConfig> {
  let text: string;
  try {
    // the user's file, a link followed: then opened without waiting (a FIFO never holds the catalog) and capped
    text = new TextDecoder().decode(await readCapped(await Deno.realPath(path), RECORD_MAX_BYTES));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      throw new CatalogError(
        `cannot open the catalog: ${
          resolve(path)
        } does not exist; write a provcat.yaml, set PROVCAT_CONFIG or pass --config FILE`,
      );
    }
    throw new CatalogError(`cannot open the catalog: cannot read ${path}: ${firstLine(error)}`, {
      cause: error,
    });
  }
  let value: unknown;
  try {
    value = parse(text) ?? {}; // an empty file (or one of comments only) is an empty config
  } catch (error) {
    throw new CatalogError(
      `cannot open the catalog: ${path} is not YAML: ${(error as Error).message.split("\n")[0]}`,
      {
        cause: error,
      },
    );
  }
  return relativeTo(checkConfig(value, path), dirname(resolve(path)));
}

function relativeTo(config: CatalogConfig, base: string): CatalogConfig {
  const fix = (p: string) => (isAbsolute(p) ? p : join(base, p));
  const stores = (s: Record<string, StoreConfig> | undefined) =>
    s && Object.fromEntries(
      Object.entries(s).map(([name, c]) => [name, "path" in c && c.path ? { ...c, path: fix(c.path) } : c]),
    );
  const part = <T extends TenantConfig>(c: T): T => ({
    ...c,
    ...(c.cache ? { cache: fix(c.cache) } : {}),
    ...(c.stores ? { stores: stores(c.stores) } : {}),
  });
  return {
    ...part(config),
    ...(config.tenants
      ? { tenants: Object.fromEntries(Object.entries(config.tenants).map(([n, t]) => [n, part(t)])) }
      : {}),
  };
}

/**
 * Checks a config object, reporting every problem at once.
 *
 * @param value The parsed YAML or the object given.
 * @param where Where it came from, for the message.
 * @returns The config.
 * @throws CatalogError listing every problem.
 */
export function checkConfig(value: unknown, where = "the catalog config"): CatalogConfig {
  const check = new ConfigProblems();
  if (check.object(value, "the config", TOP_KEYS)) {
    check.part(value, "");
    if (
      value.tenants !== undefined &&
      check.object(value.tenants, "tenants", Object.keys(value.tenants as object ?? {}))
    ) {
      for (const [name, t] of Object.entries(value.tenants)) {
        if (check.object(t, `tenants.${name}`, TENANT_KEYS)) check.part(t, `tenants.${name}.`);
      }
    }
  }
  if (check.problems.length) {
    throw new CatalogError(
      `cannot open the catalog: ${where} is not a catalog config: ${check.problems.join("; ")}`,
    );
  }
  return value as CatalogConfig;
}

/** The checks of a config's parts, each adding what is wrong to one list. */
class ConfigProblems {
  readonly problems: string[] = [];

  object(v: unknown, at: string, keys: string[]): v is Record<string, unknown> {
    if (typeof v !== "object" || v === null || Array.isArray(v)) {
      this.problems.push(`${at} is not a mapping`);
      return false;
    }
    for (const k of Object.keys(v)) {
      if (!keys.includes(k)) this.problems.push(`${at} has an unknown key "${k}"`);
    }
    return true;
  }

  text(v: unknown, at: string, optional = false): void {
    if (v === undefined && optional) return;
    if (typeof v !== "string" || v === "") this.problems.push(`${at} is not a non-empty text`);
  }

  // A branch goes into `refs/heads/<branch>^{commit}`: `main~1` would read main's parent, and commit to nothing.
  branch(v: unknown, at: string): void {
    if (typeof v === "string" && v !== "" && !isBranchName(v)) {
      this.problems.push(
        `${at} "${v}" is not a branch name (letters, digits, _ . / -; no .., ~, ^, @{ or leading -)`,
      );
    }
  }

  /** The top of the config, or one tenant's part (`at` is `tenants.NAME.`). */
  part(v: Record<string, unknown>, at: string): void {
    this.text(v.cache, `${at}cache`, true);
    if (
      v.stores !== undefined && this.object(v.stores, `${at}stores`, Object.keys(v.stores as object ?? {}))
    ) {
      for (const [name, s] of Object.entries(v.stores)) this.store(s, `${at}stores.${name}`);
    }
    if (v.routes !== undefined) {
      if (!Array.isArray(v.routes)) this.problems.push(`${at}routes is not a list`);
      else v.routes.forEach((r, i) => this.route(r, `${at}routes[${i}]`));
    }
  }

  store(s: unknown, at: string): void {
    const type = (s as { type?: unknown })?.type;
    if (typeof type !== "string" || !(type in STORE_KEYS)) {
      this.problems.push(`${at}.type is not folder, git or s3`);
      return;
    }
    if (!this.object(s, at, STORE_KEYS[type]!)) return;
    if (type === "s3") {
      this.text(s.bucket, `${at}.bucket`);
      for (const k of ["prefix", "endpoint", "region", "branch"]) this.text(s[k], `${at}.${k}`, true);
      this.branch(s.branch, `${at}.branch`);
      if (s.forcePathStyle !== undefined && typeof s.forcePathStyle !== "boolean") {
        this.problems.push(`${at}.forcePathStyle is not true or false`);
      }
      const t = s.timeout;
      if (t !== undefined && !(typeof t === "number" && t > 0 && t <= 3600)) {
        this.problems.push(`${at}.timeout is not a number of seconds from 0 to 3600`);
      }
    } else {
      this.text(s.path, `${at}.path`);
      if (type === "git") {
        this.text(s.branch, `${at}.branch`, true);
        this.branch(s.branch, `${at}.branch`);
      }
    }
  }

  route(r: unknown, at: string): void {
    if (!this.object(r, at, ["prefix", "store", "path"])) return;
    this.text(r.store, `${at}.store`);
    this.text(r.path, `${at}.path`, true);
    try {
      parsePrefix(String(r.prefix));
    } catch (error) {
      this.problems.push(`${at}.prefix: ${(error as Error).message}`);
    }
    if (typeof r.path === "string" && r.path.split("/").some((s) => s === "" || s === "." || s === "..")) {
      this.problems.push(`${at}.path "${r.path}" has an empty, . or .. segment`);
    }
  }
}

/**
 * Parses a route's prefix: a logical URI, with or without a trailing `/`, and no selector.
 * @throws CatalogError when it is not one.
 */
export function parsePrefix(text: string): LogicalUri {
  const uri = parseUri(text.endsWith("/") ? text.slice(0, -1) : text);
  if (uri.type !== "logical") throw new CatalogError(`"${text}" is not a logical URI prefix`);
  if (uri.at) throw new CatalogError(`"${text}" has a selector; a route's prefix takes none`);
  return uri;
}

/**
 * The config in effect for one tenant (or for none), with every store a route names checked to exist.
 *
 * @param config The whole config.
 * @param options `tenant`: the tenant's name; `cwd`: where a relative cache or store path starts.
 * @throws CatalogError for an unknown tenant or a route to an unknown store.
 */
export function effectiveConfig(
  config: CatalogConfig,
  options: { tenant?: string; cwd?: string } = {},
): EffectiveConfig {
  const cwd = options.cwd ?? Deno.cwd();
  let part: TenantConfig = config;
  let stores = { ...config.stores };
  if (options.tenant !== undefined) {
    const tenant = config.tenants?.[options.tenant];
    if (!tenant) {
      const known = Object.keys(config.tenants ?? {});
      throw new CatalogError(
        `cannot open the catalog: no tenant "${options.tenant}" in the config; ${
          known.length ? `the tenants are ${known.join(", ")}` : "it has no tenants: section"
        }`,
      );
    }
    part = { ...tenant, cache: tenant.cache ?? config.cache };
    stores = { ...stores, ...tenant.stores };
  }
  const routes = (part.routes ?? []).map((r) => {
    if (!stores[r.store]) {
      throw new CatalogError(
        `cannot open the catalog: the route for "${r.prefix}" names store "${r.store}", which the config lacks; add it under stores:`,
      );
    }
    return { prefix: parsePrefix(r.prefix), text: r.prefix, store: r.store, path: r.path ?? "" };
  });
  const fixed = Object.fromEntries(
    Object.entries(stores).map((
      [n, s],
    ) => [n, "path" in s && s.path ? { ...s, path: resolve(cwd, s.path) } : s]),
  );
  return { cache: resolve(cwd, part.cache ?? ".provcat"), stores: fixed, routes };
}

/**
 * Catalog URIs. A logical URI names data by where it belongs, `scheme://org/domain/env/path…`, with an
 * optional selector `?at=commit:<id>`, `?at=branch:<name>` or `?at=version:<id>`. A physical URI names a local
 * path, `file:///abs/path`.
 * @module
 */
import { UriError } from "./errors.ts";

/** The kinds of selector: a commit and a version are fixed, a branch moves. */
export type SelectorKind = "commit" | "branch" | "version";

/** What `?at=` names. */
export interface Selector {
  /** `commit` and `version` are fixed; `branch` moves. */
  kind: SelectorKind;
  /** The commit ID, the branch name or the version ID. */
  id: string;
}

/** A parsed logical URI. */
export interface LogicalUri {
  type: "logical";
  /** Such as `run`, `experiment`, `data+table`. */
  scheme: string;
  org: string;
  domain: string;
  env: string;
  /** The segments after the environment; may be empty for the root of an environment. */
  path: string[];
  /** The selector, or null for the newest version. */
  at: Selector | null;
}

/** A parsed physical URI: an absolute local path. */
export interface PhysicalUri {
  type: "physical";
  scheme: "file";
  /** The absolute path, without a trailing `/`. */
  path: string;
}

/** A parsed catalog URI. */
export type CatalogUri = LogicalUri | PhysicalUri;

const SCHEME = /^[a-z][a-z0-9+.-]*$/;
const SEGMENT = /^[A-Za-z0-9_.~+=,@-]+$/;
const COMMIT_ID = /^[0-9a-f]{7,64}$/;
const BRANCH = /^[A-Za-z0-9_][A-Za-z0-9_.\/-]*$/;
const VERSION_ID = /^[A-Za-z0-9_.+=-]+$/;
const PARTS = ["org", "domain", "env"] as const;

/**
 * Parses a catalog URI, refusing anything that is not one with a message that says which part is wrong.
 *
 * @param text The URI.
 * @returns The parsed URI.
 * @throws UriError when the text is not a catalog URI.
 * @example
 * ```ts
 * import { parseUri } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const uri = parseUri("data+table://acme/risk/dev/evals/revenue?at=branch:main");
 * assert.equal(uri.type, "logical");
 * if (uri.type === "logical") {
 *   assert.deepEqual(uri.path, ["evals", "revenue"]);
 *   assert.deepEqual(uri.at, { kind: "branch", id: "main" });
 * }
 * ```
 */
export function parseUri(text: string): CatalogUri {
  if (typeof text !== "string") throw new TypeError("a catalog URI is a text");
  const bad = (part: string, fix: string) => new UriError(`"${text}" is not a catalog URI: ${part}; ${fix}`);
  const sep = text.indexOf("://");
  if (sep < 0) throw bad("it has no scheme://", "write scheme://org/domain/env/path or file:///abs/path");
  const scheme = text.slice(0, sep);
  if (!SCHEME.test(scheme)) {
    throw bad(
      `the scheme "${scheme}" is not a lowercase letter followed by letters, digits, +, . or -`,
      "write a scheme such as run or data+table",
    );
  }
  if (text.includes("#")) throw bad("it has a fragment (#…)", "remove it");
  let rest = text.slice(sep + 3);
  if (scheme === "file") return parsePhysical(rest, bad);
  let at: Selector | null = null;
  const q = rest.indexOf("?");
  if (q >= 0) {
    at = parseQuery(rest.slice(q + 1), bad);
    rest = rest.slice(0, q);
  }
  const segments = rest.split("/");
  if (segments.some((s) => s === "")) {
    throw bad("it has an empty segment (a // or a trailing /)", "remove the extra /");
  }
  for (const [i, name] of PARTS.entries()) {
    if (segments[i] === undefined) {
      throw bad(`it has no ${name}`, "write scheme://org/domain/env/path");
    }
  }
  for (const [i, segment] of segments.entries()) {
    const what = i < 3 ? `the ${PARTS[i]} "${segment}"` : `the path segment "${segment}"`;
    if (segment === "." || segment === "..") throw bad(`${what} is . or ..`, "name the path without . or ..");
    if (!SEGMENT.test(segment)) {
      throw bad(`${what} has a character other than letters, digits and _ . ~ + = , @ -`, "rename it");
    }
  }
  const [org, domain, env, ...path] = segments as [string, string, string, ...string[]];
  return { type: "logical", scheme, org, domain, env, path, at };
}

function parseQuery(query: string, bad: (part: string, fix: string) => UriError): Selector {
  const fix = "write ?at=commit:<id>, ?at=branch:<name> or ?at=version:<id>";
  if (!query.startsWith("at=")) {
    throw bad(`the query "?${query}" is not ?at=…`, fix);
  }
  const value = query.slice(3);
  if (value.includes("&")) throw bad(`the query "?${query}" has more than one key`, fix);
  const colon = value.indexOf(":");
  const kind = colon < 0 ? value : value.slice(0, colon);
  const id = colon < 0 ? "" : value.slice(colon + 1);
  if (kind !== "commit" && kind !== "branch" && kind !== "version") {
    throw bad(`the selector "${value}" is not commit:, branch: or version:`, fix);
  }
  if (id === "") throw bad(`the selector "${value}" has no ${kind === "branch" ? "name" : "ID"}`, fix);
  const ok = kind === "commit"
    ? COMMIT_ID.test(id)
    : kind === "branch"
    ? isBranchName(id)
    : VERSION_ID.test(id);
  if (!ok) {
    const what = kind === "commit"
      ? "7 to 64 lowercase hex digits"
      : kind === "branch"
      ? "a branch name (letters, digits, _ . / -, no .., not ending in / or .lock)"
      : "letters, digits and _ . + = -";
    throw bad(`the ${kind} "${id}" is not ${what}`, "check the selector");
  }
  return { kind, id };
}

/**
 * True when a text is a branch name the catalog takes: letters, digits and `_ . / -`, not starting with `-` or
 * `.`, with no `..`, not ending in `/` or `.lock`. So no git revision syntax (`main~1`, `@{…}`, `^`) and no
 * option (`-f`) passes.
 *
 * @param name The branch name.
 * @example
 * ```ts
 * import { isBranchName } from "./uri.ts";
 * isBranchName("main"); // true
 * isBranchName("main~1"); // false
 * ```
 */
export function isBranchName(name: string): boolean {
  return BRANCH.test(name) && !name.includes("..") && !name.endsWith("/") && !name.endsWith(".lock");
}

function parsePhysical(
  rest: string,
  bad: (part: string, fix: string) => UriError,
): PhysicalUri {
  if (!rest.startsWith("/")) {
    throw bad("a file URI has a host or a relative path", "write file:///abs/path, with three slashes");
  }
  if (rest.includes("?")) {
    throw bad("a file URI has no versions, so it takes no ?at= or other query", "remove the query");
  }
  const segments = rest.split("/").slice(1);
  if (segments.length === 1 && segments[0] === "") return { type: "physical", scheme: "file", path: "/" };
  if (segments.some((s) => s === "")) {
    throw bad("the path has an empty segment (a // or a trailing /)", "remove the extra /");
  }
  if (segments.some((s) => s === "." || s === "..")) {
    throw bad("the path has . or ..", "write the absolute path");
  }
  if (/[\0%]/.test(rest)) throw bad("the path has a % or a NUL", "write the path without escapes");
  return { type: "physical", scheme: "file", path: rest };
}

/**
 * Writes a parsed URI back as text; `formatUri(parseUri(t)) === t` for every URI that parses.
 *
 * @param uri The parsed URI.
 * @returns The URI's text.
 * @example
 * ```ts
 * import { formatUri, parseUri } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * assert.equal(formatUri(parseUri("run://acme/demo/dev/run-1")), "run://acme/demo/dev/run-1");
 * ```
 */
export function formatUri(uri: CatalogUri): string {
  if (uri.type === "physical") return `file://${uri.path}`;
  const path = [uri.org, uri.domain, uri.env, ...uri.path].join("/");
  return `${uri.scheme}://${path}${uri.at ? `?at=${uri.at.kind}:${uri.at.id}` : ""}`;
}

/**
 * The URI with another selector, or with none.
 *
 * @param uri A logical URI.
 * @param at The selector, or null to remove it.
 * @returns The URI's text.
 * @throws UriError when `uri` is not a logical URI.
 * @example
 * ```ts
 * import { withSelector } from "./uri.ts";
 * withSelector("run://a/b/c/r", { kind: "commit", id: "0123abc" }); // "run://a/b/c/r?at=commit:0123abc"
 * ```
 */
export function withSelector(uri: string | CatalogUri, at: Selector | null): string {
  const parsed = typeof uri === "string" ? parseUri(uri) : uri;
  if (parsed.type === "physical") {
    if (at === null) return formatUri(parsed);
    throw new UriError(`"${formatUri(parsed)}" is a physical URI: it has no versions to select`);
  }
  return formatUri({ ...parsed, at });
}

/**
 * A URI below another, keeping its selector: the way to name a file of a pinned folder.
 *
 * @param uri The parent URI.
 * @param names The segments to add.
 * @returns The child's URI text.
 * @example
 * ```ts
 * import { childUri } from "./uri.ts";
 * childUri("run://a/b/c/r?at=commit:0123abc", "evidence", "events.jsonl");
 * // "run://a/b/c/r/evidence/events.jsonl?at=commit:0123abc"
 * ```
 */
export function childUri(uri: string | CatalogUri, ...names: string[]): string {
  const parsed = typeof uri === "string" ? parseUri(uri) : uri;
  const parts = names.flatMap((n) => n.split("/"));
  const child: CatalogUri = parsed.type === "physical"
    ? { ...parsed, path: [parsed.path === "/" ? "" : parsed.path, ...parts].join("/") }
    : { ...parsed, path: [...parsed.path, ...parts] };
  return formatUri(parseUri(formatUri(child)));
}

/**
 * True when the selector names a fixed version (a commit or a version), which no later write changes.
 *
 * @param at A selector, or null.
 * @example
 * ```ts
 * import { isFixed } from "./uri.ts";
 * isFixed({ kind: "branch", id: "main" }); // false
 * ```
 */
export function isFixed(at: Selector | null): boolean {
  return at !== null && at.kind !== "branch";
}

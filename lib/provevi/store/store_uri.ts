/**
 * Store URIs: `file` for the file store, `sqlite:///relative.db` and `sqlite:////absolute.db` for the sqlite
 * store, as SQLAlchemy and MLflow write them.
 * @module
 */
import { isAbsolute, join, resolve } from "node:path";
import { ProveviError } from "../evidence/errors.ts";

/**
 * The absolute path of the SQLite file that a `sqlite:` store URI names. A relative path is fixed against the
 * current folder now; `~` is the home folder; a query or a fragment is refused.
 *
 * @param uri A store URI such as `sqlite:///evidence.db` or `sqlite:////var/lib/evidence.db`.
 * @param options `cwd` and `home` to resolve against (the process's by default).
 * @returns The absolute path of the file.
 * @throws ProveviError when the URI is not a sqlite store URI, or has a query or a fragment.
 * @example
 * ```ts
 * import { sqlitePath } from "./store_uri.ts";
 * sqlitePath("sqlite:////tmp/evidence.db"); // "/tmp/evidence.db"
 * sqlitePath("sqlite:///evidence.db", { cwd: "/work" }); // "/work/evidence.db"
 * ```
 */
export function sqlitePath(uri: string, options: { cwd?: string; home?: string } = {}): string {
  // a user and password before a host (refused below) are never repeated in the message
  const shown = uri.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, "$1");
  const refuse = (why: string) =>
    new ProveviError(
      `cannot open store "${shown}": ${why}; write sqlite:///relative.db or sqlite:////absolute.db`,
    );
  const match = /^sqlite(?:\+[a-z0-9]+)?:\/\/(.*)$/.exec(uri);
  if (!match) throw refuse("it is not a sqlite store URI");
  let rest = match[1]!;
  if (rest.includes("?") || rest.includes("#")) throw refuse("a store URI takes no query or fragment");
  if (!rest.startsWith("/")) throw refuse("a host is not allowed after sqlite://");
  rest = rest.slice(1); // after the third slash: "relative.db", "/absolute.db" or "~/x.db"
  if (rest === "" || rest.endsWith("/")) throw refuse("it names no file");
  try {
    rest = decodeURIComponent(rest);
  } catch (error) {
    throw new ProveviError(`cannot open store "${uri}": its path is not valid percent-encoding`, {
      cause: error,
    });
  }
  if (rest === "~" || rest.startsWith("~/")) {
    const home = options.home ?? homeFolder();
    if (!home) throw refuse("~ needs HOME to be set");
    return join(home, rest.slice(1));
  }
  if (isAbsolute(rest)) return resolve(rest);
  return resolve(options.cwd ?? Deno.cwd(), rest);
}

/**
 * The store URI of a SQLite file's absolute path: `sqlite:////abs/path.db`.
 *
 * @param path An absolute path.
 * @returns The store URI.
 * @example
 * ```ts
 * import { sqliteUri } from "./store_uri.ts";
 * sqliteUri("/tmp/evidence.db"); // "sqlite:////tmp/evidence.db"
 * ```
 */
export function sqliteUri(path: string): string {
  return `sqlite:///${resolve(path)}`;
}

/** True when the text is a sqlite store URI (it may still be refused by {@linkcode sqlitePath}). */
export function isSqliteUri(uri: string): boolean {
  return /^sqlite(\+[a-z0-9]+)?:/.test(uri);
}

function homeFolder(): string | undefined {
  try {
    return Deno.env.get("HOME");
  } catch {
    return undefined;
  }
}

/**
 * Postgres store URIs, `postgresql://user@host:port/database` (or `postgres://…`), and where the password
 * comes from: the URI, `PGPASSWORD`, or the password file (`PGPASSFILE`, else `~/.pgpass`), as libpq reads
 * them; and how to reach and trust the server (`sslmode`, `sslrootcert`, `hostaddr`, or `PGSSLMODE`,
 * `PGSSLROOTCERT`, `PGHOSTADDR`), as libpq reads them. The password is never part of
 * {@linkcode PostgresTarget.uri}, which is what errors and listings name.
 * @module
 */
import { isIP } from "node:net";
import { join } from "node:path";
import { ProveviError } from "../evidence/errors.ts";

/** Where a postgres store is, and who connects. */
export interface PostgresTarget {
  host: string;
  port: number;
  database: string;
  user: string;
  /** The password, or null when none was found (a server that trusts the user needs none). */
  password: string | null;
  /**
   * `prefer` (the default, as libpq: TLS when the server offers it, unchecked), `disable`, `allow`, `require`
   * (TLS, unchecked), `verify-ca` (TLS, the certificate signed by the root CA) or `verify-full` (that, and
   * for the host), from `?sslmode=`, else `PGSSLMODE`.
   */
  sslmode: string;
  /**
   * The root CA file that `verify-ca` and `verify-full` check the server's certificate with: `?sslrootcert=`,
   * else `PGSSLROOTCERT`, else `~/.postgresql/root.crt`; `system` for the system's trusted roots; null for the
   * other modes.
   */
  sslrootcert: string | null;
  /** The IP address to connect to instead of looking up `host` (`?hostaddr=`, else `PGHOSTADDR`), or null. */
  hostaddr: string | null;
  /** The store URI without the password: `postgresql://user@host:port/database`, and its TLS settings. */
  uri: string;
}

/** How {@linkcode postgresTarget} reads the environment; the process's by default. */
export interface PostgresTargetOptions {
  /** Reads an environment variable; a variable that cannot be read is unset. */
  env?: (name: string) => string | undefined;
  /** The home folder, for `~/.pgpass` and `~/.postgresql/root.crt`. */
  home?: string;
}

const SSLMODES = ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"];
const PARAMETERS = ["sslmode", "sslrootcert", "hostaddr"];

/** True when the text is a postgres store URI (it may still be refused by {@linkcode postgresTarget}). */
export function isPostgresUri(uri: string): boolean {
  return /^postgres(ql)?:\/\//i.test(uri);
}

/**
 * The server, database, user and password of a postgres store URI. A part the URI leaves out comes from
 * `PGHOST`, `PGPORT`, `PGDATABASE` and `PGUSER`, then libpq's defaults (localhost, 5432, the user's name).
 *
 * @param uri A store URI such as `postgresql://ada@db.internal:5432/evidence`.
 * @param options How to read the environment and the home folder.
 * @returns The target; its `uri` holds no password.
 * @throws ProveviError when the URI cannot be read, or has a query other than `sslmode`, `sslrootcert` and
 * `hostaddr`.
 * @example
 * ```ts
 * import { postgresTarget } from "./postgres_uri.ts";
 * const t = postgresTarget("postgresql://ada:s3cret@127.0.0.1:5433/evidence", { env: () => undefined });
 * t.uri; // "postgresql://ada@127.0.0.1:5433/evidence"
 * ```
 */
export function postgresTarget(uri: string, options: PostgresTargetOptions = {}): PostgresTarget {
  // An empty variable is an unset one, as libpq reads them (`PGPASSWORD=` still looks in ~/.pgpass).
  const env = (name: string) => (options.env ?? readEnv)(name) || undefined;
  const shown = redactUri(uri);
  const refuse = (why: string) =>
    new ProveviError(
      `cannot open store "${shown}": ${why}; write postgresql://user@host:port/database`,
    );
  if (!isPostgresUri(uri)) throw refuse("it is not a postgres store URI");
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw refuse("it is not a valid URI");
  }
  if (url.hash) throw refuse("a store URI takes no fragment");
  const given = new Map<string, string>();
  for (const [key, value] of url.searchParams) {
    if (!PARAMETERS.includes(key)) {
      throw refuse(`the query parameter "${key}" is not supported (only ${PARAMETERS.join(", ")} are)`);
    }
    if (given.has(key)) throw refuse(`the query parameter "${key}" is given twice`);
    given.set(key, value);
  }
  const sslmode = given.get("sslmode") ?? env("PGSSLMODE") ?? "prefer";
  if (!SSLMODES.includes(sslmode)) throw refuse(`sslmode "${sslmode}" is not one of ${SSLMODES.join(", ")}`);
  const hostaddr = given.get("hostaddr") ?? env("PGHOSTADDR") ?? null;
  if (hostaddr !== null && isIP(hostaddr) === 0) {
    throw refuse(`hostaddr "${hostaddr}" is not an IP address (name the host in the URI's host part)`);
  }
  const decode = (text: string) => {
    try {
      return decodeURIComponent(text);
    } catch {
      throw refuse("a part of it is not valid percent-encoding");
    }
  };
  const host = decode(url.hostname.replace(/^\[(.*)\]$/, "$1")) || env("PGHOST") || "localhost";
  if (host.startsWith("/")) throw refuse("a socket folder is not supported; name a host");
  const portText = url.port || env("PGPORT") || "5432";
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw refuse(`port "${portText}" is not a port`);
  const path = decode(url.pathname.replace(/^\//, ""));
  if (path.includes("/")) throw refuse("the path names one database");
  const user = decode(url.username) || env("PGUSER") || env("USER") || env("LOGNAME") || "";
  if (!user) throw refuse("it names no user, and PGUSER and USER are not set");
  const database = path || env("PGDATABASE") || user;
  const password = url.password !== ""
    ? decode(url.password)
    : env("PGPASSWORD") ?? passwordFromFile({ host, port, database, user }, env, options.home);
  const verifies = sslmode.startsWith("verify-");
  const homeDir = options.home ?? env("HOME");
  const sslrootcert = !verifies ? null : given.get("sslrootcert") ?? env("PGSSLROOTCERT") ??
    (homeDir ? join(homeDir, ".postgresql", "root.crt") : null);
  if (verifies && sslrootcert === null) {
    throw refuse(`sslmode ${sslmode} needs a root CA: give ?sslrootcert=FILE or PGSSLROOTCERT`);
  }
  const hostPart = host.includes(":") ? `[${host}]` : host;
  // The settings that say how to reach and trust the server are part of the URI; the password never is.
  const query: string[] = sslmode === "prefer" ? [] : [`sslmode=${sslmode}`];
  for (const key of ["sslrootcert", "hostaddr"]) {
    const value = given.get(key);
    if (value !== undefined) query.push(`${key}=${encodeURIComponent(value).replaceAll("%2F", "/")}`);
  }
  const queryText = query.length ? `?${query.join("&")}` : "";
  return {
    host,
    port,
    database,
    user,
    password,
    sslmode,
    sslrootcert,
    hostaddr,
    uri: `postgresql://${encodeURIComponent(user)}@${hostPart}:${port}/${
      encodeURIComponent(database)
    }${queryText}`,
  };
}

/**
 * The URI with any password taken out, for messages about a URI that could not be read whole: whatever stands
 * between the scheme and the last `@` keeps only its user (a password may hold `/`, `?`, `#` or `@`, and the
 * `//` may be missing), and the values of `password` and `sslpassword` in the query become `***`.
 *
 * @param uri Any text.
 * @returns The text with no password in it.
 * @example
 * ```ts
 * import { redactUri } from "./postgres_uri.ts";
 * redactUri("postgresql://ada:p/ss@db:5432/e?password=x"); // "postgresql://ada@db:5432/e?password=***"
 * ```
 */
export function redactUri(uri: string): string {
  const scheme = /^[a-z][a-z0-9+.-]*:(?:\/\/)?/i.exec(uri)?.[0] ?? "";
  let rest = uri.slice(scheme.length);
  const at = rest.lastIndexOf("@");
  if (at >= 0) {
    const user = rest.slice(0, at).split(":")[0]!;
    rest = `${user}@${rest.slice(at + 1)}`;
  }
  return scheme + rest.replace(/([?&;](?:ssl)?password=)[^&#;]*/gi, "$1***");
}

/**
 * The password for a server from the password file, as libpq reads it: `PGPASSFILE`, else `~/.pgpass`; lines
 * of `host:port:database:user:password` with `*` for any and `\:` and `\\` escaped; the first line that
 * matches wins; a file that others can read is ignored, as libpq ignores it.
 */
function passwordFromFile(
  want: { host: string; port: number; database: string; user: string },
  env: (name: string) => string | undefined,
  home?: string,
): string | null {
  const homeDir = home ?? env("HOME");
  const file = env("PGPASSFILE") ?? (homeDir ? join(homeDir, ".pgpass") : null);
  if (!file) return null;
  let text: string;
  try {
    const info = Deno.statSync(file);
    if (!info.isFile || (info.mode !== null && (info.mode & 0o077) !== 0)) return null;
    text = Deno.readTextFileSync(file);
  } catch {
    return null;
  }
  for (const raw of text.split(/\r?\n/)) {
    if (raw === "" || raw.startsWith("#")) continue;
    const fields: string[] = [];
    let field = "";
    for (let i = 0; i < raw.length; i++) {
      const c = raw[i]!;
      if (c === "\\" && i + 1 < raw.length) field += raw[++i];
      else if (c === ":" && fields.length < 4) {
        fields.push(field);
        field = "";
      } else field += c;
    }
    fields.push(field);
    if (fields.length < 5) continue;
    const [h, p, d, u, password] = fields as [string, string, string, string, string];
    if (
      (h === "*" || h === want.host) && (p === "*" || p === String(want.port)) &&
      (d === "*" || d === want.database) &&
      (u === "*" || u === want.user)
    ) return password;
  }
  return null;
}

function readEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

/**
 * Endpoints in one form: {@linkcode normalEndpoint} puts a destination's URL and a variable's URL in one form
 * so that a policy can compare them, and refuses a URL that two URL parsers could read as two places.
 *
 * The parser is written by hand on purpose: WHATWG `new URL()`, libpq, SQLAlchemy and ODBC each read a URL
 * their own way, so the rules accept only the shapes on which they agree (provevi-reference.txt, "Match a
 * variable to a destination").
 * @module
 */
import { ProveviError } from "../evidence/errors.ts";

/** The schemes an endpoint may have, with their default ports. */
const DEFAULT_PORTS: Readonly<Record<string, number>> = {
  http: 80,
  https: 443,
  postgresql: 5432,
  mysql: 3306,
  mssql: 1433,
};

/** The database schemes; `sqlite` is one too, with a path instead of a host. */
const DATABASES = new Set(["postgresql", "mysql", "mssql", "sqlite"]);

/** The settings a database URL may carry; they name no place. Only `sslmode` changes the match. */
const SETTINGS: Readonly<Record<string, ReadonlySet<string>>> = {
  postgresql: new Set(["sslmode", "connect_timeout", "application_name"]),
  mysql: new Set(["charset", "connect_timeout"]),
};
const KEPT_SETTINGS = new Set(["sslmode"]);

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//;
const DRIVER = /^[a-z][a-z0-9_]*$/;
const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;
const IPV6 = /^\[[0-9a-f:.]+\]$/;
const NUMERIC_LABEL = /^(?:0x[0-9a-f]*|[0-9]+)$/;
const DECIMAL_OCTET = /^(?:0|[1-9][0-9]{0,2})$/;
const PORT = /^[1-9][0-9]{0,4}$/;
const PATH_CHARS = /^[A-Za-z0-9\-._~!$&'()*+,;=:/]*$/;
const SETTING_VALUE = /^[A-Za-z0-9_.-]+$/;
// deno-lint-ignore no-control-regex
const FORBIDDEN = /[\\ #\u0000-\u001f\u007f]/;

/** The parts of an endpoint, once it is in normal form. */
export interface EndpointParts {
  /** The lowercase scheme, without a driver: `https`, `postgresql`, `sqlite`. */
  scheme: string;
  /** The lowercase host (an IPv6 literal keeps its brackets), or `null` for sqlite. */
  host: string | null;
  /** The port, with the scheme's default filled in, or `null` for sqlite. */
  port: number | null;
  /** The path with no trailing `/` (sqlite keeps its own), or `""`. */
  path: string;
  /** The settings that change the match, such as `sslmode`, sorted by key. */
  settings: [string, string][];
  /** True when the URL named a user or a password. */
  hadUser: boolean;
  /** The normal form: `https://otel.example.com:443/v1/traces`. */
  normal: string;
}

/**
 * A URL as a message may show it: a user and a password, a query's values and a fragment left out, since a URL
 * that a rule refuses may still hold a secret (`https://u:pw@host`, `?password=x`).
 *
 * @param url The URL.
 * @returns The URL with `…` in their place.
 * @example
 * ```ts
 * import { shownEndpoint } from "./endpoint.ts";
 * shownEndpoint("postgresql://u:pw@db.example.com/x?password=pw"); // "postgresql://…@db.example.com/x?password=…"
 * ```
 */
export function shownEndpoint(url: string): string {
  return url
    .replace(/^((?:[A-Za-z][A-Za-z0-9+.-]*:)?\/\/)?[^/?#]*@/, "$1…@")
    .replace(/#.*$/s, "#…")
    .replace(/([?&][^=&#]*=)[^&#]*/g, "$1…");
}

function refuse(url: string, why: string): never {
  throw new ProveviError(`endpoint ${JSON.stringify(shownEndpoint(url))} ${why}`);
}

/**
 * Parses an endpoint into its parts, in normal form. See {@linkcode normalEndpoint} for the rules.
 *
 * @param url An http, https or database URL.
 * @returns The parts, with the normal form.
 * @throws ProveviError naming the rule the URL breaks.
 * @throws TypeError when `url` is not a text.
 * @example
 * ```ts
 * import { endpointParts } from "./endpoint.ts";
 * endpointParts("postgresql+psycopg://u:pw@db.example.com/mlflow").host; // "db.example.com"
 * ```
 */
export function endpointParts(url: string): EndpointParts {
  if (typeof url !== "string") throw new TypeError("an endpoint must be a text");
  checkCharacters(url);
  const { scheme, rest, query, hasQuery } = schemeParts(url);
  if (scheme === "sqlite") return sqliteParts(url, rest, query);

  const slash = rest.indexOf("/");
  const path = slash >= 0 ? rest.slice(slash) : "";
  const { hostText, portText, hadUser } = authorityParts(
    url,
    scheme,
    slash >= 0 ? rest.slice(0, slash) : rest,
  );
  const host = checkHost(url, hostText.toLowerCase());
  const port = portOf(url, scheme, portText);
  checkPath(url, path);
  const trimmed = path.endsWith("/") ? path.slice(0, -1) : path;
  if (scheme === "mssql" && trimmed === "") {
    refuse(url, "is an mssql URL with no database; ODBC can read its host as the name of a data source");
  }
  const settings = checkQuery(url, scheme, query, hasQuery);
  const tail = settings.length ? "?" + settings.map(([k, v]) => `${k}=${v}`).join("&") : "";
  return {
    scheme,
    host,
    port,
    path: trimmed,
    settings,
    hadUser,
    normal: `${scheme}://${host}:${port}${trimmed}${tail}`,
  };
}

/** Refuses a URL too long, not ASCII, or with a character that parsers read differently. */
function checkCharacters(url: string): void {
  if (url.length > 2048) refuse(url.slice(0, 60) + "…", "is longer than 2048 characters");
  // deno-lint-ignore no-control-regex
  if (/[^\x00-\x7f]/.test(url)) {
    refuse(url, "is not ASCII; two standards of international names read some hosts as two hosts");
  }
  const bad = FORBIDDEN.exec(url);
  if (bad) {
    const what = bad[0] === "\\"
      ? "a backslash"
      : bad[0] === " "
      ? "a space"
      : bad[0] === "#"
      ? "a # (a database library reads no fragment, so #@evil names another host)"
      : "a control character";
    refuse(url, `has ${what}; write the URL without it`);
  }
}

/** The scheme (its driver checked and dropped), the text after `//` up to the query, and the query. */
function schemeParts(url: string): { scheme: string; rest: string; query: string; hasQuery: boolean } {
  const schemeMatch = SCHEME.exec(url);
  if (!schemeMatch) refuse(url, "is not a URL with a scheme and //; write it as https://host/path");
  const [base, driver, ...more] = schemeMatch[1]!.toLowerCase().split("+");
  const scheme = base === "postgres" ? "postgresql" : base!;
  if (!(scheme in DEFAULT_PORTS) && scheme !== "sqlite") {
    refuse(url, `has the scheme "${base}"; use http, https, postgresql, mysql, mssql or sqlite`);
  }
  if (driver !== undefined) {
    if (!DATABASES.has(scheme)) refuse(url, `has a driver "+${driver}" on an ${scheme} scheme; drop it`);
    if (more.length > 0 || !DRIVER.test(driver)) refuse(url, "has a driver that is not one word");
  }
  const rest = url.slice(schemeMatch[0].length);
  const q = rest.indexOf("?");
  return q >= 0
    ? { scheme, rest: rest.slice(0, q), query: rest.slice(q + 1), hasQuery: true }
    : { scheme, rest, query: "", hasQuery: false };
}

/** The host and port texts of an authority, refusing a user where parsers disagree or none may be. */
function authorityParts(
  url: string,
  scheme: string,
  authority: string,
): { hostText: string; portText: string | null; hadUser: boolean } {
  let hadUser = false;
  const at = authority.lastIndexOf("@");
  if (url.indexOf("@") !== url.lastIndexOf("@")) {
    refuse(url, "has more than one @; parsers split it differently");
  }
  if (at >= 0) {
    if (scheme === "http" || scheme === "https") {
      refuse(url, "names a user or a password; an http or https endpoint holds none");
    }
    hadUser = true;
    authority = authority.slice(at + 1);
  } else if (url.includes("@")) {
    refuse(url, "has an @ outside the user part; parsers read it as a user and another host");
  }
  if (authority.includes("%")) refuse(url, "has a % in its host");
  if (authority.includes(",")) refuse(url, "names a list of hosts; name one host");
  if (authority.startsWith("[")) {
    const close = authority.indexOf("]");
    if (close < 0) refuse(url, "has an IPv6 host with no closing ]");
    const after = authority.slice(close + 1);
    if (after !== "" && !after.startsWith(":")) refuse(url, "has text after its IPv6 host");
    return {
      hostText: authority.slice(0, close + 1),
      portText: after === "" ? null : after.slice(1),
      hadUser,
    };
  }
  const colon = authority.indexOf(":");
  return colon >= 0
    ? { hostText: authority.slice(0, colon), portText: authority.slice(colon + 1), hadUser }
    : { hostText: authority, portText: null, hadUser };
}

/** The port: the one written, checked, or the scheme's own (mssql must write one). */
function portOf(url: string, scheme: string, portText: string | null): number {
  if (portText === null) {
    if (scheme === "mssql") {
      refuse(url, "is an mssql URL with no port; ODBC can read its host as the name of a data source");
    }
    return DEFAULT_PORTS[scheme]!;
  }
  if (portText === "") refuse(url, "has an empty port; write the port or drop the :");
  if (/^0+$/.test(portText)) refuse(url, "has port 0");
  if (!PORT.test(portText)) {
    refuse(url, `has the port "${portText}"; write it as a number from 1 to 65535 with no leading 0`);
  }
  const port = Number(portText);
  if (port > 65535) refuse(url, `has the port ${port}, above 65535`);
  return port;
}

function sqliteParts(url: string, rest: string, query: string): EndpointParts {
  if (query !== "" || url.includes("?")) refuse(url, "is a sqlite URL with a query; drop it");
  if (url.includes("@")) refuse(url, "is a sqlite URL with a user; drop it");
  if (!rest.startsWith("/")) refuse(url, "is a sqlite URL with a host; write sqlite:////absolute/path.db");
  const path = rest.slice(1);
  if (!path.startsWith("/")) {
    refuse(url, "is a sqlite URL with a relative path; write sqlite:////absolute/path.db");
  }
  checkPath(url, path);
  return {
    scheme: "sqlite",
    host: null,
    port: null,
    path,
    settings: [],
    hadUser: false,
    normal: `sqlite:///${path}`,
  };
}

function checkHost(url: string, host: string): string {
  if (host === "") refuse(url, "names no host");
  if (host.startsWith("[")) {
    if (!IPV6.test(host)) refuse(url, "has an IPv6 host that is not hex digits and colons");
    return host;
  }
  const labels = host.split(".");
  if (labels.some((l) => l === "")) {
    refuse(url, "has an empty part in its host, such as a trailing dot; write the host without it");
  }
  for (const label of labels) {
    if (!LABEL.test(label)) refuse(url, `has the host "${host}", which is not letters, digits, - and .`);
  }
  // WHATWG reads 0x7f.1 and 0177.0.0.1 as 127.0.0.1, and other parsers read them as names.
  if (NUMERIC_LABEL.test(labels[labels.length - 1]!)) {
    if (labels.length !== 4 || !labels.every((l) => DECIMAL_OCTET.test(l) && Number(l) <= 255)) {
      refuse(url, `has the host "${host}", a number that parsers read differently; write four decimal parts`);
    }
  }
  return host;
}

function checkPath(url: string, path: string): void {
  if (path.includes("%")) refuse(url, "has a % in its path; write the path without escapes");
  if (!PATH_CHARS.test(path)) refuse(url, "has a character in its path that parsers read differently");
  if (path.includes("@")) refuse(url, "has an @ in its path");
  if (path.includes("//")) refuse(url, "has // in its path");
  // A database name of key=value pairs is a connection string to some drivers (host=… names a server).
  if (path.includes("=")) {
    refuse(url, "has an = in its path, which some drivers read as a setting such as host=");
  }
  const segments = path.split("/");
  if (segments.some((s) => s === "." || s === "..")) refuse(url, "has a . or .. segment in its path");
}

function checkQuery(url: string, scheme: string, query: string, present: boolean): [string, string][] {
  if (!present) return [];
  const allowed = SETTINGS[scheme];
  if (!allowed) refuse(url, "has a query; a query such as ?host= can name another server");
  if (query === "") refuse(url, "has an empty query; drop the ?");
  const kept: [string, string][] = [];
  const seen = new Set<string>();
  for (const pair of query.split("&")) {
    const eq = pair.indexOf("=");
    const key = eq >= 0 ? pair.slice(0, eq) : pair;
    const value = eq >= 0 ? pair.slice(eq + 1) : "";
    if (!allowed.has(key)) {
      refuse(
        url,
        `has the setting "${key}", which may name another server; only ${[...allowed].join(", ")} may`,
      );
    }
    if (seen.has(key)) refuse(url, `names the setting "${key}" twice`);
    seen.add(key);
    if (!SETTING_VALUE.test(value)) refuse(url, `has a value of "${key}" that is not one word`);
    if (KEPT_SETTINGS.has(key)) kept.push([key, value]);
  }
  return kept.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Puts an endpoint in one form, so that two spellings of one place compare equal. It lowercases the scheme and
 * the host, adds the default port, and drops a trailing `/`, a database driver such as `+psycopg`, the user and
 * the password of a database URL, and the database settings that change nothing (all but `sslmode`). A sqlite
 * URL keeps only its absolute path, with its trailing `/` if it has one.
 *
 * It refuses a URL that two URL parsers could read as two places: a backslash, a space, a control character
 * or a `#`; a host that is not ASCII (this parser refuses any non-ASCII character); a user or a password in an
 * http or https URL; a `%` in the host, or a list of hosts; a port of 0, an empty port, or a port with a
 * leading 0; a path with `%`, `.` or `..` segments, or `//`; a query, except the few database settings that
 * name no place; an mssql URL with no port or no database; a driver on http or https; a relative sqlite path.
 * It also refuses more than one `@`, an empty host label (`host.`), and a host that is a number written
 * other than as four decimal parts (`0x7f.1`, `0177.0.0.1`).
 *
 * @param url The URL.
 * @returns The normal form, such as `https://otel.example.com:443/v1/traces`.
 * @throws ProveviError naming the rule that the URL breaks; such a URL matches no destination.
 * @example
 * ```ts
 * import { normalEndpoint } from "./endpoint.ts";
 * normalEndpoint("https://OTEL.example.com/v1/traces/"); // "https://otel.example.com:443/v1/traces"
 * normalEndpoint("postgresql+psycopg://u:pw@db.example.com/mlflow"); // "postgresql://db.example.com:5432/mlflow"
 * normalEndpoint("sqlite:////srv/mlflow.db"); // "sqlite:////srv/mlflow.db"
 * ```
 */
export function normalEndpoint(url: string): string {
  return endpointParts(url).normal;
}

/**
 * Like {@linkcode normalEndpoint}, but gives `null` for a URL that it refuses.
 *
 * @param url The URL.
 * @returns The normal form, or `null`.
 * @example
 * ```ts
 * import { tryNormalEndpoint } from "./endpoint.ts";
 * tryNormalEndpoint("https://evil.example@otel.example.com/"); // null
 * ```
 */
export function tryNormalEndpoint(url: string): string | null {
  try {
    return endpointParts(url).normal;
  } catch (error) {
    if (error instanceof ProveviError) return null;
    throw error;
  }
}

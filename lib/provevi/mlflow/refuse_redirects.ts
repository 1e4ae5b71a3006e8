/**
 * The variables that would send the copy in MLflow somewhere the policy did not approve, or change which
 * servers it trusts: the copy refuses to run while one is set (provevi-reference.txt, "What the copy guards").
 * @module
 */
import { ProveviError } from "../evidence/errors.ts";
import type { Environ } from "../telemetry/otlp_target.ts";

/** The proxy variables, in both cases: they would send the copy's HTTP through another host. */
export const COPY_PROXY_VARIABLES: readonly string[] = [
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "ALL_PROXY",
  "http_proxy",
  "https_proxy",
  "all_proxy",
];

/** The variables that make Postgres connect to another server than the URL names. */
export const POSTGRES_VARIABLES: readonly string[] = [
  "PGHOST",
  "PGHOSTADDR",
  "PGPORT",
  "PGDATABASE",
  "PGSERVICE",
  "PGSERVICEFILE",
  "PGSYSCONFDIR",
  "PGSSLMODE",
  "PGREQUIRESSL",
];

/** The variables that make MySQL connect to another server than the URL names. */
export const MYSQL_VARIABLES: readonly string[] = [
  "MYSQL_HOST",
  "MYSQL_TCP_PORT",
  "MYSQL_UNIX_PORT",
  "MYSQL_PWD",
];

/** The variables that change which servers the copy trusts, or load a plugin: refused for every place. */
export const TRUST_VARIABLES: readonly string[] = [
  "MLFLOW_TRACKING_INSECURE_TLS",
  "REQUESTS_CA_BUNDLE",
  "CURL_CA_BUNDLE",
  "MLFLOW_TRACKING_SERVER_CERT_PATH",
  "MLFLOW_TRACKING_AUTH",
];

/** Every variable that {@linkcode refuseRedirects} may refuse, for a caller that reads them by name. */
export const REFUSED_VARIABLES: readonly string[] = [
  ...COPY_PROXY_VARIABLES,
  ...POSTGRES_VARIABLES,
  ...MYSQL_VARIABLES,
  ...TRUST_VARIABLES,
];

/**
 * The variables of `environ` that the copy to `url` refuses, in the order of {@linkcode REFUSED_VARIABLES}. The
 * copy always speaks HTTP (to a tracking server, or to the MLflow server that it starts on a database), so the
 * proxy variables are refused for every place; the Postgres and MySQL ones for a URL of that database.
 *
 * @param url The place, as `MLFLOW_TRACKING_URI` names it; `null` for the store's own file.
 * @param environ The variables.
 * @returns The names of the set variables that the copy refuses; empty when none.
 * @example
 * ```ts
 * import { redirectingVariables } from "./refuse_redirects.ts";
 * redirectingVariables("https://mlflow.example.com", { HTTPS_PROXY: "http://proxy:3128" }); // ["HTTPS_PROXY"]
 * ```
 */
export function redirectingVariables(url: string | null, environ: Environ): string[] {
  const scheme = url === null ? "sqlite" : (/^([A-Za-z][A-Za-z0-9.-]*)(?:\+[^:]*)?:/.exec(url)?.[1] ?? "")
    .toLowerCase();
  const names = [...COPY_PROXY_VARIABLES, ...TRUST_VARIABLES];
  if (scheme === "postgresql" || scheme === "postgres") names.push(...POSTGRES_VARIABLES);
  if (scheme === "mysql" || scheme === "mariadb") names.push(...MYSQL_VARIABLES);
  const set = names.filter((name) => {
    const value = environ[name];
    return value !== undefined && value !== "";
  });
  return REFUSED_VARIABLES.filter((name) => set.includes(name));
}

/**
 * Refuses a copy to `url` while a variable is set that would send it elsewhere or change whom it trusts.
 * provrun calls it as a run starts, so that the run records a copy that would be refused.
 *
 * @param url The place, as `MLFLOW_TRACKING_URI` names it; `null` for the store's own file.
 * @param environ The variables.
 * @throws ProveviError naming the variables, and how to go on.
 * @example
 * ```ts
 * import { refuseRedirects } from "./refuse_redirects.ts";
 * refuseRedirects("https://mlflow.example.com", {}); // no variable set: nothing happens
 * ```
 */
export function refuseRedirects(url: string | null, environ: Environ): void {
  const set = redirectingVariables(url, environ);
  if (set.length === 0) return;
  throw new ProveviError(
    `the copy in MLflow refuses to run while ${set.join(", ")} ${set.length === 1 ? "is" : "are"} set: ${
      set.length === 1 ? "it" : "they"
    } could send it somewhere the policy did not approve, or change which servers it trusts; unset ${
      set.length === 1 ? "it" : "them"
    } for the copy`,
  );
}

/**
 * The checks a local service makes of a request before any route, whatever its routes are. A web page in the
 * user's browser may send requests to 127.0.0.1 (a simple cross-site POST needs no permission of the server), and
 * through DNS rebinding a page of `evil.example` may even read the answers, as its own origin: the `Host` header
 * then names `evil.example`, and the `Origin` header (or `Sec-Fetch-Site`) a site other than the service's own.
 * Programs that are not browsers send neither `Origin` nor `Sec-Fetch-Site`.
 * @module
 */

/**
 * The `Host` values a service on 127.0.0.1 answers to: `127.0.0.1:PORT`, `localhost:PORT` and `[::1]:PORT`,
 * and `NAME:PORT` for each further name given (the address a daemon was told to listen on).
 *
 * @param port The port the service listens on.
 * @param names Further host names or addresses.
 * @returns The accepted `Host` values.
 * @example
 * ```ts
 * import { localHosts } from "./local_request.ts";
 * localHosts(4318); // ["127.0.0.1:4318", "localhost:4318", "[::1]:4318"]
 * ```
 */
export function localHosts(port: number, names: readonly string[] = []): string[] {
  const hosts = [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`];
  for (const name of names) {
    const host = `${name.includes(":") && !name.startsWith("[") ? `[${name}]` : name}:${port}`;
    if (!hosts.includes(host)) hosts.push(host);
  }
  return hosts;
}

/**
 * The host a request names when it is not one the service answers to (DNS rebinding, or a request meant for
 * another server), else null. Both places a request names its host are looked at: the `Host` header, and the
 * address itself, which a request in absolute form (`POST http://other/… HTTP/1.1`) gives whole.
 *
 * @param request The request.
 * @param hosts The accepted values ({@linkcode localHosts}).
 * @returns The refused host (empty when absent), or null when it is accepted.
 * @example
 * ```ts
 * import { localHosts, refusedHost } from "./local_request.ts";
 * const request = new Request("http://127.0.0.1:4318/", { headers: { host: "127.0.0.1:4318" } });
 * refusedHost(request, localHosts(4318)); // null
 * ```
 */
export function refusedHost(request: Request, hosts: readonly string[]): string | null {
  const host = (request.headers.get("host") ?? "").toLowerCase();
  if (!hosts.includes(host)) return host;
  const url = URL.parse(request.url);
  const named = url === null ? "" : `${url.hostname}:${url.port || (url.protocol === "https:" ? 443 : 80)}`;
  return hosts.includes(named) ? null : named;
}

/**
 * Why a request comes from a web page of another site, or null when it does not: an `Origin` other than the
 * service's own (`http://` and one of its hosts), or a `Sec-Fetch-Site` other than `same-origin` or `none` (a
 * request the user typed). Another port of 127.0.0.1 is another origin.
 *
 * @param request The request.
 * @param hosts The service's hosts ({@linkcode localHosts}): its own origins are `http://` and each.
 * @returns The reason, in a few words, or null.
 * @example
 * ```ts
 * import { crossSite, localHosts } from "./local_request.ts";
 * const request = new Request("http://127.0.0.1:4318/runs", { headers: { origin: "https://evil.example" } });
 * crossSite(request, localHosts(4318)); // 'the Origin "https://evil.example"'
 * ```
 */
export function crossSite(request: Request, hosts: readonly string[]): string | null {
  const origin = request.headers.get("origin");
  if (origin !== null && !hosts.some((h) => origin.toLowerCase() === `http://${h}`)) {
    return `the Origin ${JSON.stringify(origin.slice(0, 200))}`;
  }
  const site = request.headers.get("sec-fetch-site");
  if (site !== null && site !== "same-origin" && site !== "none") {
    return `Sec-Fetch-Site ${JSON.stringify(site.slice(0, 40))}`;
  }
  return null;
}

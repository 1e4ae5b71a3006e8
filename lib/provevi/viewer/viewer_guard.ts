/**
 * The viewer's guard, checked before any route: the `Host` header must name the viewer itself (against DNS
 * rebinding), every request must carry the viewer's random token (in the cookie that the printed URL sets, or
 * `?token=`), as Jupyter does, so that another local user or a web page cannot read the store; and the one
 * request that writes, adding an assessment, must be a POST from the viewer's own origin.
 * @module
 */
import { localHosts, refusedHost } from "../guard/local_request.ts";
import { newSecret, sameSecret } from "../guard/local_secret.ts";

/** What the guard checks against. */
export interface GuardOptions {
  /** The port the viewer listens on. */
  port: number;
  /** The viewer's token. */
  token: string;
}

/** The name of the viewer's cookie on a port: cookies are shared across the ports of a host. */
export function cookieName(port: number): string {
  return `prove_ui_${port}`;
}

/**
 * A new random token: 32 bytes, as hex.
 *
 * @example
 * ```ts
 * import { newToken } from "./viewer_guard.ts";
 * newToken().length; // 64
 * ```
 */
export function newToken(): string {
  return newSecret();
}

function refuse(status: number, message: string): Response {
  return new Response(message + "\n", {
    status,
    headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" },
  });
}

/**
 * Checks a request before any route. It refuses a `Host` that is not `127.0.0.1:PORT` or `localhost:PORT`
 * (421), a request without the token (403), a method other than GET, HEAD and POST (405), and a POST that is
 * not from the viewer's own origin (403). A GET with the right `?token=` sets the cookie and redirects to the
 * same address without it, so the token leaves the address bar and the history.
 *
 * @param request The request.
 * @param options The port and the token.
 * @returns A response that refuses or redirects, or null when the request may go on.
 * @example
 * ```ts
 * import { guardRequest } from "./viewer_guard.ts";
 * guardRequest(new Request("http://evil.example:5000/"), { port: 5000, token: "t" })?.status; // 421
 * ```
 */
export function guardRequest(request: Request, options: GuardOptions): Response | null {
  const { port, token } = options;
  const hosts = localHosts(port);
  const host = refusedHost(request, hosts);
  if (host !== null) {
    return refuse(421, `prove ui: refused the Host "${host}": open http://127.0.0.1:${port}/ instead`);
  }
  const url = new URL(request.url);
  const cookie = (request.headers.get("cookie") ?? "").split(";").map((c) => c.trim())
    .find((c) => c.startsWith(`${cookieName(port)}=`))?.slice(cookieName(port).length + 1);
  const query = url.searchParams.get("token");
  const byCookie = cookie !== undefined && sameSecret(cookie, token);
  const byQuery = query !== null && sameSecret(query, token);
  if (!byCookie && !byQuery) {
    return refuse(
      403,
      "prove ui: this address needs the token: open the URL that prove ui printed, with its ?token=",
    );
  }
  if (!["GET", "HEAD", "POST"].includes(request.method)) {
    return refuse(
      405,
      `prove ui: ${request.method} is not allowed: the viewer only reads, and adds assessments`,
    );
  }
  if (request.method === "POST") {
    const origin = request.headers.get("origin");
    const site = request.headers.get("sec-fetch-site");
    if (
      origin === null || !hosts.some((h) => origin === `http://${h}`) ||
      (site !== null && site !== "same-origin")
    ) {
      return refuse(403, "prove ui: refused a POST that is not from the viewer's own page");
    }
  }
  if (byQuery && request.method === "GET") {
    url.searchParams.delete("token");
    return new Response(null, {
      status: 303,
      headers: {
        location: url.pathname + (url.search === "?" ? "" : url.search),
        "set-cookie": `${cookieName(port)}=${token}; Path=/; HttpOnly; SameSite=Strict`,
        "cache-control": "no-store",
      },
    });
  }
  return null;
}

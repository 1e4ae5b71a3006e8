/**
 * The viewer's guard, checked before any route: the `Host` header must name the viewer itself (against DNS
 * rebinding); every address must lie under the viewer's capability path `/t/TOKEN/`, with its random token,
 * so that another local user or a web page cannot read the store; and the one request that writes, adding an
 * assessment, must be a POST from the viewer's own origin. The token is in the address and never in a cookie:
 * a browser sends a host's cookies to every port of it, where any local program would read them, while an
 * address is bound to its port. The checks themselves are `viewer_request.ts`, the one place that reads a
 * request.
 * @module
 */
import { newSecret } from "../guard/local_secret.ts";
import { readRequest } from "./viewer_request.ts";

/** What the guard checks against. */
export interface GuardOptions {
  /** The port the viewer listens on. */
  port: number;
  /** The viewer's token. */
  token: string;
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

/**
 * Checks a request before any route. It refuses a `Host` that is not `127.0.0.1:PORT` or `localhost:PORT`
 * (421), an address longer than 8 KiB (414), an address not under `/t/TOKEN/` (403), a method other than GET,
 * HEAD and POST (405), a POST that is not from the viewer's own origin (403), and a path with bad
 * percent-encoding, an empty or dot part, or a part that decodes to a slash, a backslash or a control
 * character (400). It never redirects.
 *
 * @param request The request.
 * @param options The port and the token.
 * @returns A response that refuses, or null when the request may go on.
 * @example
 * ```ts
 * import { guardRequest } from "./viewer_guard.ts";
 * guardRequest(new Request("http://evil.example:5000/"), { port: 5000, token: "t" })?.status; // 421
 * ```
 */
export function guardRequest(request: Request, options: GuardOptions): Response | null {
  const read = readRequest(request, options);
  return read instanceof Response ? read : null;
}

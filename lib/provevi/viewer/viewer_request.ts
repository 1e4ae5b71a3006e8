/**
 * The one place that reads a request to the viewer, before any route: the `Host` must name the viewer itself
 * (against DNS rebinding); the address must be under the viewer's capability path `/t/TOKEN/` (the token is in
 * the address, never in a cookie, because cookies are shared by every port of a host); the path's parts are
 * percent-decoded here, once, and refused when they are not plain names; the method must be one the viewer
 * answers; and the one request that writes must come from the viewer's own page. Each refusal is a 4xx with
 * one line, and nothing here redirects: no answer can send the browser off the viewer.
 * @module
 */
import { localHosts, refusedHost } from "../guard/local_request.ts";
import { sameSecret } from "../guard/local_secret.ts";
import { refusal } from "./viewer_http.ts";

/** What a request is checked against. */
export interface RequestChecks {
  /** The port the viewer listens on. */
  port: number;
  /** The viewer's token. */
  token: string;
}

/** A request that passed the checks. */
export interface ViewerRequest {
  /** GET or POST; a HEAD is read as a GET whose body is dropped. */
  method: "GET" | "POST";
  head: boolean;
  /** The path after `/t/TOKEN/`, as decoded parts: `["api", "runs", "run-…"]`; `[]` for the runs page. */
  parts: string[];
  /** The path after `/t/TOKEN/`, as it came (for messages). */
  path: string;
  query: URLSearchParams;
  /** True for the API, which answers and refuses in JSON. */
  api: boolean;
}

/** The longest address the viewer reads: its own addresses are far shorter. */
export const MAX_URL = 8192;

/**
 * The path under which every address of a viewer lies.
 *
 * @throws TypeError when the token is not 16 to 256 letters, digits, `_` or `-` (it is a part of every path).
 */
export function basePath(token: string): string {
  if (!/^[A-Za-z0-9_-]{16,256}$/.test(token)) {
    throw new TypeError(
      "a viewer's token is 16 to 256 letters, digits, _ or -: it is a part of every address",
    );
  }
  return `/t/${token}/`;
}

/**
 * Reads a request: a refusal, or the request's decoded path, query and method.
 *
 * @param request The request.
 * @param checks The viewer's port and token.
 * @returns The response that refuses it, or what the routes need of it.
 * @example
 * ```ts
 * import { readRequest } from "./viewer_request.ts";
 * const t = "a".repeat(64);
 * const r = readRequest(new Request(`http://127.0.0.1:5000/t/${t}/api/runs/%`), { port: 5000, token: t });
 * (r as Response).status; // 400
 * ```
 */
export function readRequest(request: Request, checks: RequestChecks): Response | ViewerRequest {
  const { port, token } = checks;
  const hosts = localHosts(port);
  // the Host header, and the address's own host: a request in absolute form (`GET http://other/…`) names it there
  const refused = refusedHost(request, hosts);
  if (refused !== null) {
    const shown = refused.slice(0, 100);
    return refusal(
      421,
      `prove ui: refused the Host "${shown}": open http://127.0.0.1:${port}/ instead`,
    );
  }
  if (request.url.length > MAX_URL) {
    return refusal(
      414,
      `prove ui: the address is longer than ${MAX_URL} characters; no address of the viewer is`,
    );
  }
  const url = new URL(request.url);
  // The token is compared as a whole part of the path, in constant time, before anything else is read.
  const m = /^\/t\/([^/]*)(\/.*)?$/.exec(url.pathname);
  if (!m || !sameSecret(m[1]!, token)) {
    return refusal(
      403,
      `prove ui: this address needs the token: open the URL that prove ui printed (http://127.0.0.1:${port}/t/…/)`,
    );
  }
  const path = (m[2] ?? "/").slice(1);
  const api = path.startsWith("api/");
  const method = request.method;
  if (method !== "GET" && method !== "HEAD" && method !== "POST") {
    return refusal(
      405,
      `prove ui: ${method.slice(0, 20)} is not allowed: the viewer only reads, and adds assessments`,
      {
        api,
        allow: "GET, HEAD, POST",
      },
    );
  }
  if (method === "POST") {
    const origin = request.headers.get("origin");
    const site = request.headers.get("sec-fetch-site");
    if (
      origin === null || !hosts.some((h) => origin === `http://${h}`) ||
      (site !== null && site !== "same-origin")
    ) {
      return refusal(403, "prove ui: refused a POST that is not from the viewer's own page", { api });
    }
  }
  const parts = decodeParts(path);
  if (typeof parts === "string") return refusal(400, `prove ui: ${parts}`, { api });
  return {
    method: method === "POST" ? "POST" : "GET",
    head: method === "HEAD",
    parts,
    path,
    query: url.searchParams,
    api,
  };
}

/**
 * The parts of a path, each percent-decoded once; or why it is refused: bad percent-encoding, an empty part
 * (`//`), a dot part, or a part that decodes to a slash, a backslash or a control character.
 */
function decodeParts(path: string): string[] | string {
  if (path === "") return [];
  const raw = path.split("/");
  // One slash at the end is the same address without it.
  if (raw.length > 1 && raw.at(-1) === "") raw.pop();
  const parts: string[] = [];
  for (const piece of raw) {
    const shown = JSON.stringify(piece.length > 60 ? piece.slice(0, 60) + "…" : piece);
    if (piece === "") return "the address has an empty part (//): remove the extra slash";
    let part: string;
    try {
      part = decodeURIComponent(piece);
    } catch {
      return `the address part ${shown} has bad percent-encoding: a % must be followed by two hex digits`;
    }
    if (part === "." || part === "..") return `the address part ${shown} is a dot part, which names no page`;
    // deno-lint-ignore no-control-regex
    if (/[/\\\u0000-\u001f\u007f]/.test(part)) {
      return `the address part ${shown} holds a slash, a backslash or a control character`;
    }
    parts.push(part);
  }
  return parts;
}

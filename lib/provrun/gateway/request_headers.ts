/**
 * A program's request headers as the gateway reads them, in one pass: the few it looks at (the token, the body's
 * encoding and length) and the ones it forwards, less those of the connection and of identity. One lookup in a
 * `Headers` costs about as much as walking all of a request's headers once, and every model call waits for
 * these: so they are walked once, not looked up one by one.
 * @module
 */

/** The headers a request is forwarded without: the connection's, the body's framing, and identity. */
const DROPPED = new Set([
  "host",
  "connection",
  "keep-alive",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "content-length",
  "accept-encoding",
  "content-encoding",
  "authorization",
  "x-api-key",
  "api-key",
  "cookie",
  "forwarded",
  "x-real-ip",
  // the key decides its organization and project, not the program
  "openai-organization",
  "openai-project",
]);

/** What the gateway reads of a request's headers. */
export interface RequestHeaders {
  /** The key the program sent: `x-api-key`, else the token of `Authorization: Bearer`, else empty. */
  given: string;
  /** The body's `content-encoding`, in lower case (`identity` when there is none). */
  encoding: string;
  /** The body's `content-length` as sent, or null. */
  length: string | null;
  /** True when the body came with a `transfer-encoding`. */
  transferEncoded: boolean;
  /** The headers to forward, as pairs, which `fetch` reads once (the real key is added to them). */
  forwarded: [string, string][];
}

/**
 * Reads a request's headers in one pass.
 *
 * @param headers The request's headers.
 * @returns What the gateway reads of them.
 * @example
 * ```ts
 * import { requestHeaders } from "./request_headers.ts";
 * requestHeaders(new Headers({ "x-api-key": "t", "anthropic-version": "2023-06-01", host: "127.0.0.1:1" }));
 * // { given: "t", encoding: "identity", length: null, transferEncoded: false,
 * //   forwarded: [["anthropic-version", "2023-06-01"]] }
 * ```
 */
export function requestHeaders(headers: Headers): RequestHeaders {
  let key: string | null = null;
  let authorization: string | null = null;
  let encoding: string | null = null;
  let length: string | null = null;
  let transferEncoded = false;
  const forwarded: [string, string][] = [];
  // names come in lower case, a name sent twice once with its values joined, as `get` gives them; `forEach`
  // walks them at less than half the cost of an iterator
  headers.forEach((value, name) => {
    if (name === "x-api-key") key = value;
    else if (name === "authorization") authorization = value;
    else if (name === "content-encoding") encoding = value;
    else if (name === "content-length") length = value;
    else if (name === "transfer-encoding") transferEncoded = true;
    if (!DROPPED.has(name) && !name.startsWith("x-forwarded-")) forwarded.push([name, value]);
  });
  const bearer = authorization === null ? undefined : /^Bearer\s+(.+)$/i.exec(authorization)?.[1];
  return {
    given: key ?? bearer ?? "",
    encoding: (encoding ?? "identity").toLowerCase(),
    length,
    transferEncoded,
    forwarded,
  };
}

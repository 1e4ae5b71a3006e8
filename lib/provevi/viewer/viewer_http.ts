/**
 * The viewer's answers: JSON, text and streams with the same security headers on every one, refusals of one
 * line, and the one place that turns an error into a status (a user's mistake is a 4xx, never a 500).
 * @module
 */
import { ProveviError, RunNotFound } from "../evidence/errors.ts";

/** The headers of every answer: a strict content policy, no sniffing, no referrer, no cache. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  // The token is in every address of the viewer: no request that leaves it may carry one.
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
  "cross-origin-resource-policy": "same-origin",
  "x-frame-options": "DENY",
};

/** A request the viewer refuses, with its status and one line that says why and what to do. */
export class ViewerRefusal extends ProveviError {
  /**
   * @param status The HTTP status, a 4xx.
   * @param message One line: what was refused and the fix.
   */
  constructor(readonly status: number, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ViewerRefusal";
  }
}

/** A JSON answer: 200 unless `init` says otherwise. */
export function json(
  value: unknown,
  init: { status?: number; headers?: Record<string, string> } = {},
): Response {
  return new Response(JSON.stringify(value), {
    status: init.status ?? 200,
    headers: { ...SECURITY_HEADERS, ...init.headers, "content-type": "application/json; charset=utf-8" },
  });
}

/** A text answer of a type (`text/css`, `text/plain`, …). */
export function text(body: string | ReadableStream<Uint8Array>, type: string): Response {
  return new Response(body, { headers: { ...SECURITY_HEADERS, "content-type": `${type}; charset=utf-8` } });
}

/**
 * A refusal: one line, as JSON `{ error }` for the API (its script reads it) and as text otherwise.
 *
 * @param status The status.
 * @param message The line.
 * @param options `api`: answer as JSON; `allow`: the methods of a 405.
 */
export function refusal(
  status: number,
  message: string,
  options: { api?: boolean; allow?: string } = {},
): Response {
  const line = message.replace(/[\r\n]+/g, " ");
  const headers: Record<string, string> = options.allow ? { allow: options.allow } : {};
  if (options.api) return json({ error: line }, { status, headers });
  return new Response(line + "\n", {
    status,
    headers: { ...SECURITY_HEADERS, ...headers, "content-type": "text/plain; charset=utf-8" },
  });
}

/**
 * The answer to an error a route threw: a refusal's own status; 404 for a run that is not there; 400 for any
 * other mistake a user can make (and for a programmer's TypeError or RangeError, which a bad request reaches
 * first); 500 only for what is the viewer's own failure, with one line.
 */
export function errorResponse(error: unknown, api: boolean): Response {
  const message = (error as Error)?.message ?? String(error);
  if (error instanceof ViewerRefusal) return refusal(error.status, message, { api });
  if (error instanceof RunNotFound) return refusal(404, message, { api });
  if (error instanceof ProveviError) return refusal(400, message, { api });
  if (error instanceof TypeError || error instanceof RangeError) return refusal(400, message, { api });
  return refusal(500, `prove ui: ${message}`, { api });
}

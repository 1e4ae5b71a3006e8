/**
 * The viewer's JSON API as the script calls it: each answer typed by the server's own types, and a refusal's
 * one line as the error.
 * @module
 */
import type { ViewerInfo } from "../viewer_routes.ts";
import { href } from "./nav.ts";

export type { ViewerInfo };

/** What `api/info` said, once the script asked. */
export const state: { info: ViewerInfo | null } = { info: null };

/**
 * Calls the API.
 *
 * @param path The path under the base, with its query (`api/runs?limit=50`).
 * @param init The request's method, headers and body.
 * @returns The answer's JSON.
 * @throws Error with the viewer's one line, when it refuses.
 */
export async function api<T>(path: string, init: RequestInit = {}): Promise<T> {
  const r = await fetch(href(path), { credentials: "same-origin", ...init });
  const body = await r.text();
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(body);
  } catch { /* a refusal before the API, in text */ }
  if (!r.ok) {
    const said = (parsed as { error?: string } | null)?.error ?? body.trim();
    throw new Error(said || `the viewer answered ${r.status}`);
  }
  return parsed as T;
}

/** A run's API path, with `untrusted=1` in its query when the page asked for unverified content. */
export function runPath(id: string, rest: string, options: { untrusted?: boolean } = {}): string {
  const path = `api/runs/${encodeURIComponent(id)}${rest}`;
  return options.untrusted ? path + (path.includes("?") ? "&" : "?") + "untrusted=1" : path;
}

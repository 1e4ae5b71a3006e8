/**
 * The viewer's addresses, shared by the server and the page's script: the pages (each drawn by the script,
 * each served as the one HTML page by the server), and how an address's decoded parts match a pattern such as
 * `runs/:run`. It imports nothing, so the script's bundle holds it as it is.
 * @module
 */

/** The pages of the viewer, as patterns of the path under the viewer's base. */
export const PAGES = ["", "runs/:run", "traces/:trace", "agents", "experiments", "compare"] as const;

/** A page's pattern. */
export type PagePath = typeof PAGES[number];

/** The values of a pattern's `:name` parts. */
export type PathParams = Record<string, string>;

/**
 * Matches decoded parts of a path against a pattern: each part of the pattern is a word, or `:name`, which
 * takes any one part.
 *
 * @param pattern The pattern, such as `api/runs/:run/events/:seq` (`""` for the base itself).
 * @param parts The path's parts, each decoded once.
 * @returns The values of the `:name` parts, or null when the path does not match.
 * @example
 * ```ts
 * import { matchPath } from "./viewer_paths.ts";
 * matchPath("runs/:run", ["runs", "run-1"]); // { run: "run-1" }
 * matchPath("runs/:run", ["runs"]); // null
 * ```
 */
export function matchPath(pattern: string, parts: readonly string[]): PathParams | null {
  const words = pattern === "" ? [] : pattern.split("/");
  if (words.length !== parts.length) return null;
  const params: PathParams = {};
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (word.startsWith(":")) params[word.slice(1)] = parts[i]!;
    else if (word !== parts[i]) return null;
  }
  return params;
}

/**
 * The decoded parts of a path under the base, as the page's script reads its own address (the server reads
 * and checks a request's in `viewer_request.ts`): `runs/run%2D1` → `["runs", "run-1"]`.
 *
 * @param path The path after the base, percent-encoded.
 * @returns The parts, or null when a part's percent-encoding is bad.
 */
export function pathParts(path: string): string[] | null {
  const raw = path.split("/").filter((p, i, all) => !(p === "" && i === all.length - 1));
  try {
    return raw.map((p) => decodeURIComponent(p));
  } catch {
    return null;
  }
}

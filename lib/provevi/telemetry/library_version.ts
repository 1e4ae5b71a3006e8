/**
 * Whether an installed npm package's version is one that a policy approves, as a semver range.
 * @module
 */
import semver from "semver";

/**
 * The problem of a text as a library's `versions`, or `null` when it is a semver range. A Python specifier
 * with commas or `==` is refused with the npm spelling to use instead.
 *
 * @param range The text.
 * @returns The problem, or null.
 * @example
 * ```ts
 * import { rangeProblem } from "./library_version.ts";
 * rangeProblem(">=2.64 <2.65"); // null
 * rangeProblem(">=2.64,<2.65"); // "… is not a semver range; write >=2.64 <2.65 …"
 * ```
 */
export function rangeProblem(range: unknown): string | null {
  if (typeof range !== "string" || range.trim() === "") return 'is not a semver range such as ">=2.64 <2.65"';
  if (range.length > 500) return "is longer than 500 characters";
  if (/[,]|==|~=|!=/.test(range) || semver.validRange(range) === null) {
    const hint = range.replace(/\s*,\s*/g, " ").replace(/==/g, "").replace(/~=/g, "~");
    return `${JSON.stringify(range)} is not a semver range; write an npm range such as ${
      JSON.stringify(hint)
    }`;
  }
  return null;
}

/** The exact version texts (operator `=` or none) that one comparator set of a range names. */
function exactVersions(set: string): string[] {
  const found: string[] = [];
  for (const token of set.trim().split(/\s+/)) {
    const m = /^=?v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)$/.exec(token);
    if (m) found.push(m[1]!);
  }
  return found;
}

/**
 * True when a range approves an installed version. A local build such as `2.64.0+patched` passes only when the
 * range names that build exactly (`2.64.0+patched`), because semver ignores build metadata and the build is not
 * the release that was tested; a range that names a build approves only that build.
 *
 * @param version The installed version, such as `2.64.0` or `2.64.0+patched`.
 * @param range The policy's `versions`.
 * @returns True when the version is approved.
 * @example
 * ```ts
 * import { versionApproved } from "./library_version.ts";
 * versionApproved("2.64.3", ">=2.64 <2.65"); // true
 * versionApproved("2.64.0+patched", ">=2.64 <2.65"); // false
 * versionApproved("2.64.0+patched", "2.64.0+patched"); // true
 * ```
 */
export function versionApproved(version: string, range: string): boolean {
  const parsed = semver.parse(version);
  if (parsed === null || rangeProblem(range) !== null) return false;
  const full = version.replace(/^[=v]+/, "");
  const build = parsed.build.length > 0;
  for (const set of range.split("||")) {
    if (!semver.satisfies(parsed, set)) continue;
    const exact = exactVersions(set);
    const builds = exact.filter((v) => v.includes("+"));
    if (build && !exact.includes(full)) continue;
    if (builds.some((v) => v !== full)) continue;
    return true;
  }
  return false;
}

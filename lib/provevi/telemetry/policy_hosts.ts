/**
 * The `hosts` entries of a telemetry policy: what an entry may be, and which hosts it covers.
 * @module
 */

const HOST_LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;
const IPV4 =
  /^(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])$/;
const IPV6 = /^\[[0-9a-f:.]+\]$/;

/**
 * The problem of a `hosts` entry, or `null`. An entry is a lowercase host name, an IPv4 address, a bracketed
 * IPv6 address, or a domain with a leading dot and two labels at least (`.amazonaws.com`, not `.com`).
 *
 * @param entry A lowercase entry.
 * @returns What is wrong with it, to follow the entry in a message, or null.
 * @example
 * ```ts
 * import { hostEntryProblem } from "./policy_hosts.ts";
 * hostEntryProblem(".amazonaws.com"); // null
 * hostEntryProblem("*.example.com"); // "has a *; write a leading dot instead, such as .example.com"
 * ```
 */
export function hostEntryProblem(entry: string): string | null {
  if (entry.includes("@")) return "names a user; a host entry holds only the host";
  if (entry.includes("*")) return "has a *; write a leading dot instead, such as .example.com";
  if (entry.includes("/") || entry.includes("://")) return "is a URL; write only its host";
  if (IPV6.test(entry)) return null;
  if (entry.includes(":")) return "has a port or a password; write only the host";
  // deno-lint-ignore no-control-regex
  if (/[^\x00-\x7f]/.test(entry)) return "is not ASCII; write an international name in its xn-- form";
  const domain = entry.startsWith(".");
  const labels = (domain ? entry.slice(1) : entry).split(".");
  if (labels.some((l) => l === "")) return "has an empty label, such as a trailing dot";
  if (!labels.every((l) => HOST_LABEL.test(l))) return "is not a host name of letters, digits, - and .";
  const numeric = /^(?:0x[0-9a-f]*|[0-9]+)$/.test(labels[labels.length - 1]!);
  if (domain && labels.length < 2) {
    return "is a domain with one label; a leading dot needs two labels at least";
  }
  if (domain && numeric) return "is an address with a leading dot; name the address itself";
  if (numeric && !IPV4.test(entry)) {
    return "is a number that parsers read differently; write four decimal parts";
  }
  return null;
}

/**
 * True when a host is in a list of host entries: named exactly, or under a domain that an entry names with a
 * leading dot (which does not name the domain itself).
 *
 * @param host A lowercase host, such as an endpoint's.
 * @param hosts The entries.
 * @returns True when the host is covered.
 * @example
 * ```ts
 * import { hostCovered } from "./policy_hosts.ts";
 * hostCovered("s3.amazonaws.com", [".amazonaws.com"]); // true
 * hostCovered("amazonaws.com", [".amazonaws.com"]); // false
 * ```
 */
export function hostCovered(host: string, hosts: Iterable<string>): boolean {
  for (const entry of hosts) {
    if (entry === host) return true;
    if (entry.startsWith(".") && host.length > entry.length && host.endsWith(entry)) return true;
  }
  return false;
}

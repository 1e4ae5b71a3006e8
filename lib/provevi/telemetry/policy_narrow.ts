/**
 * Narrowing a telemetry policy by a run file's `telemetry` section, which may only take away: fewer hosts,
 * fewer destinations, a lower level, fewer destinations per library.
 * @module
 */
import { isLevel, levelRank } from "./attributes.ts";
import { endpointParts } from "./endpoint.ts";
import { TelemetryPolicyError } from "../evidence/errors.ts";
import { isMapping, show, showEntry } from "./_policy_text.ts";
import type { Destination, LibraryApproval } from "./policy_types.ts";
import { hostCovered, hostEntryProblem } from "./policy_hosts.ts";

const SECTION_KEYS = new Set(["libraries", "destinations", "hosts"]);

/** What narrowing reads of a policy: its hosts, destinations and libraries. */
export interface PolicyParts {
  readonly libraries: readonly LibraryApproval[];
  readonly destinations: readonly Destination[];
  readonly hosts: readonly string[];
  library(name: string): LibraryApproval | null;
  destination(name: string): Destination | null;
}

/** What a narrowed policy holds. */
export interface NarrowedParts {
  libraries: LibraryApproval[];
  destinations: Destination[];
  hosts: string[];
}

/**
 * The libraries, destinations and hosts of a policy narrowed by a run file's `telemetry` section;
 * {@linkcode TelemetryPolicy.narrow} makes the policy of them.
 *
 * @param policy The policy.
 * @param section The run file's `telemetry` section, not null.
 * @returns What the narrowed policy holds.
 * @throws TelemetryPolicyError when the section would widen the policy in any way, or contradicts itself.
 * @example
 * ```ts
 * import { TelemetryPolicy } from "./policy.ts";
 * import { narrowedParts } from "./policy_narrow.ts";
 * const policy = TelemetryPolicy.fromDict({ version: 1, hosts: ["a.example.com", "b.example.com"] });
 * narrowedParts(policy, { hosts: ["a.example.com"] }).hosts; // ["a.example.com"]
 * ```
 */
export function narrowedParts(policy: PolicyParts, section: unknown): NarrowedParts {
  const problems: string[] = [];
  const what = "the run file's telemetry section";
  if (!isMapping(section)) throw new TelemetryPolicyError(what, ["it is not a mapping"]);
  for (const key of Object.keys(section)) {
    if (!SECTION_KEYS.has(key)) {
      problems.push(`${show(key)}: unknown key; use libraries, destinations and hosts`);
    }
  }

  // hosts
  let hosts = [...policy.hosts];
  if ("hosts" in section) {
    const list = section.hosts;
    if (!Array.isArray(list)) problems.push("hosts: is not a list");
    else {
      hosts = [];
      for (const entry of list) {
        const host = typeof entry === "string" ? entry.trim().toLowerCase() : null;
        if (host === null || hostEntryProblem(host) !== null) {
          problems.push(`hosts: ${showEntry(entry)} is not a host entry`);
        } else if (!entryCovered(policy, host)) {
          problems.push(
            `hosts: ${showEntry(entry)} is not in the policy's hosts; a section cannot add one`,
          );
        } else if (!hosts.includes(host)) hosts.push(host);
      }
    }
  }

  // destinations
  const named = new Set<string>();
  let destinations = [...policy.destinations];
  if ("destinations" in section) {
    const map = section.destinations;
    if (!isMapping(map)) problems.push("destinations: is not a mapping");
    else {
      destinations = [];
      for (const [name, spec] of Object.entries(map)) {
        const at = `destinations.${name}`;
        const base = policy.destination(name);
        named.add(name);
        if (base === null) {
          problems.push(`${at}: the policy names no such destination; a section cannot add one`);
          continue;
        }
        const s = spec === null || spec === undefined ? {} : spec;
        if (!isMapping(s)) {
          problems.push(`${at}: is not a mapping`);
          continue;
        }
        let receives = base.receives;
        for (const [key, value] of Object.entries(s)) {
          if (key === "receives") {
            if (!isLevel(value)) problems.push(`${at}.receives: ${show(value)} is not a level`);
            else if (levelRank(value) > levelRank(base.receives)) {
              problems.push(`${at}.receives: ${value} is above the policy's ${base.receives}`);
            } else receives = value;
          } else if (key === "kind" || key === "endpoint") {
            const current = key === "kind" ? base.kind : base.endpoint;
            if (value !== current) problems.push(`${at}.${key}: a section cannot change the ${key}`);
          } else problems.push(`${at}: ${show(key)} is an unknown key`);
        }
        destinations.push({ ...base, receives });
      }
    }
  }

  // libraries
  let libraries = policy.libraries.map((l) => ({ ...l, telemetry: [...l.telemetry], explicit: false }));
  if ("libraries" in section) {
    const map = section.libraries;
    if (!isMapping(map)) problems.push("libraries: is not a mapping");
    else {
      libraries = [];
      for (const [name, spec] of Object.entries(map)) {
        const at = `libraries.${name}`;
        const base = policy.library(name);
        if (base === null) {
          problems.push(`${at}: the policy does not approve it; a section cannot add a library`);
          continue;
        }
        const s = spec === null || spec === undefined ? {} : spec;
        if (!isMapping(s)) {
          problems.push(`${at}: is not a mapping`);
          continue;
        }
        let telemetry = [...base.telemetry];
        let explicit = false;
        for (const [key, value] of Object.entries(s)) {
          if (key === "versions") {
            if (value !== base.versions) {
              problems.push(`${at}.versions: a section cannot change the versions`);
            }
          } else if (key === "telemetry") {
            if (!Array.isArray(value)) problems.push(`${at}.telemetry: is not a list`);
            else {
              telemetry = [];
              explicit = true;
              for (const dest of value) {
                if (typeof dest !== "string" || !base.telemetry.includes(dest)) {
                  problems.push(`${at}.telemetry: the policy does not let it feed ${show(dest)}`);
                } else if (!telemetry.includes(dest)) {
                  telemetry.push(dest);
                  named.add(dest);
                }
              }
            }
          } else problems.push(`${at}: ${show(key)} is an unknown key`);
        }
        libraries.push({ ...base, telemetry, explicit });
      }
    }
  }

  // A destination on a host that the section cut is dropped, unless the section names it.
  const kept: Destination[] = [];
  for (const d of destinations) {
    const host = d.endpoint === null ? null : tryHost(d.endpoint);
    if (host !== null && !hostCovered(host, hosts)) {
      if (named.has(d.name)) {
        problems.push(`destinations.${d.name}: the section names it, but cuts its host ${host} from hosts`);
      }
      continue;
    }
    kept.push(d);
  }
  const keptNames = new Set(kept.map((d) => d.name));
  for (const l of libraries) {
    for (const dest of l.telemetry) {
      if (!keptNames.has(dest) && l.explicit) {
        problems.push(`libraries.${l.name}.telemetry: names ${dest}, which the section drops`);
      }
    }
    l.telemetry = l.telemetry.filter((dest) => keptNames.has(dest));
  }
  if (problems.length) throw new TelemetryPolicyError(what, problems);
  return { libraries: libraries.map(({ explicit: _, ...l }) => l), destinations: kept, hosts };
}

/** True when a section's host entry is no wider than one of the policy's entries. */
function entryCovered(policy: PolicyParts, entry: string): boolean {
  if (policy.hosts.includes(entry)) return true;
  const name = entry.startsWith(".") ? entry.slice(1) : entry;
  return policy.hosts.some((h) => h.startsWith(".") && name.length > h.length - 1 && `.${name}`.endsWith(h));
}

function tryHost(endpoint: string): string | null {
  try {
    return endpointParts(endpoint).host;
  } catch {
    return null;
  }
}

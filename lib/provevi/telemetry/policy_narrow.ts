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
import { PolicyProblems } from "./policy_problems.ts";

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
  const problems = new PolicyProblems();
  const what = "the run file's telemetry section";
  if (!isMapping(section)) {
    problems.add("policy.shape", "it is not a mapping");
    throw new TelemetryPolicyError(what, problems.list);
  }
  for (const key of Object.keys(section)) {
    if (!SECTION_KEYS.has(key)) {
      problems.add("policy.unknown_key", `${show(key)}: unknown key; use libraries, destinations and hosts`);
    }
  }
  const context: Narrowing = { policy, problems, named: new Set() };
  const hosts = "hosts" in section ? narrowHosts(section.hosts, context) : [...policy.hosts];
  const destinations = "destinations" in section
    ? narrowDestinations(section.destinations, context)
    : [...policy.destinations];
  const libraries = "libraries" in section
    ? narrowLibraries(section.libraries, context)
    : policy.libraries.map((l) => ({ ...l, telemetry: [...l.telemetry], explicit: false }));
  const kept = keptDestinations(destinations, { ...context, hosts });
  const keptNames = new Set(kept.map((d) => d.name));
  for (const l of libraries) {
    for (const dest of l.telemetry) {
      if (!keptNames.has(dest) && l.explicit) {
        problems.add(
          "policy.section_contradicts",
          `libraries.${l.name}.telemetry: names ${dest}, which the section drops`,
        );
      }
    }
    l.telemetry = l.telemetry.filter((dest) => keptNames.has(dest));
  }
  if (problems.length) throw new TelemetryPolicyError(what, problems.list);
  return { libraries: libraries.map(({ explicit: _, ...l }) => l), destinations: kept, hosts };
}

/** What the narrowing of each part reads and adds to. */
interface Narrowing {
  policy: PolicyParts;
  problems: PolicyProblems;
  /** The destinations the section names itself, in destinations or a library's telemetry. */
  named: Set<string>;
}

/** The section's hosts: each one no wider than one of the policy's. */
function narrowHosts(list: unknown, { policy, problems }: Narrowing): string[] {
  if (!Array.isArray(list)) {
    problems.add("policy.shape", "hosts: is not a list");
    return [...policy.hosts];
  }
  const hosts: string[] = [];
  for (const entry of list) {
    const host = typeof entry === "string" ? entry.trim().toLowerCase() : null;
    if (host === null || hostEntryProblem(host) !== null) {
      problems.add("policy.host", `hosts: ${showEntry(entry)} is not a host entry`);
    } else if (!entryCovered(policy, host)) {
      problems.add(
        "policy.section_widens",
        `hosts: ${showEntry(entry)} is not in the policy's hosts; a section cannot add one`,
      );
    } else if (!hosts.includes(host)) hosts.push(host);
  }
  return hosts;
}

/** The section's destinations: each one the policy's, at its level or lower, its kind and endpoint kept. */
function narrowDestinations(map: unknown, context: Narrowing): Destination[] {
  const { policy, problems } = context;
  if (!isMapping(map)) {
    problems.add("policy.shape", "destinations: is not a mapping");
    return [...policy.destinations];
  }
  const out: Destination[] = [];
  for (const [name, spec] of Object.entries(map)) {
    const at = `destinations.${name}`;
    const base = policy.destination(name);
    context.named.add(name);
    if (base === null) {
      problems.add(
        "policy.section_widens",
        `${at}: the policy names no such destination; a section cannot add one`,
      );
      continue;
    }
    const s = spec === null || spec === undefined ? {} : spec;
    if (!isMapping(s)) {
      problems.add("policy.shape", `${at}: is not a mapping`);
      continue;
    }
    let receives = base.receives;
    for (const [key, value] of Object.entries(s)) {
      if (key === "receives") {
        if (!isLevel(value)) problems.add("policy.level", `${at}.receives: ${show(value)} is not a level`);
        else if (levelRank(value) > levelRank(base.receives)) {
          problems.add(
            "policy.section_widens",
            `${at}.receives: ${value} is above the policy's ${base.receives}`,
          );
        } else receives = value;
      } else if (key === "kind" || key === "endpoint") {
        const current = key === "kind" ? base.kind : base.endpoint;
        if (value !== current) {
          problems.add("policy.section_widens", `${at}.${key}: a section cannot change the ${key}`);
        }
      } else problems.add("policy.unknown_key", `${at}: ${show(key)} is an unknown key`);
    }
    out.push({ ...base, receives });
  }
  return out;
}

type NarrowedLibrary = Omit<LibraryApproval, "telemetry"> & { telemetry: string[]; explicit: boolean };

/** The section's libraries: each one the policy approves, its versions kept, feeding fewer destinations. */
function narrowLibraries(map: unknown, context: Narrowing): NarrowedLibrary[] {
  const { policy, problems } = context;
  if (!isMapping(map)) {
    problems.add("policy.shape", "libraries: is not a mapping");
    return policy.libraries.map((l) => ({ ...l, telemetry: [...l.telemetry], explicit: false }));
  }
  const out: NarrowedLibrary[] = [];
  for (const [name, spec] of Object.entries(map)) {
    const at = `libraries.${name}`;
    const base = policy.library(name);
    if (base === null) {
      problems.add(
        "policy.section_widens",
        `${at}: the policy does not approve it; a section cannot add a library`,
      );
      continue;
    }
    const s = spec === null || spec === undefined ? {} : spec;
    if (!isMapping(s)) {
      problems.add("policy.shape", `${at}: is not a mapping`);
      continue;
    }
    let telemetry = [...base.telemetry];
    let explicit = false;
    for (const [key, value] of Object.entries(s)) {
      if (key === "versions") {
        if (value !== base.versions) {
          problems.add("policy.section_widens", `${at}.versions: a section cannot change the versions`);
        }
      } else if (key === "telemetry") {
        const fed = narrowFeeds(value, { ...context, at, base });
        if (fed !== null) [telemetry, explicit] = [fed, true];
      } else problems.add("policy.unknown_key", `${at}: ${show(key)} is an unknown key`);
    }
    out.push({ ...base, telemetry, explicit });
  }
  return out;
}

/** A library's destinations in the section: each one the policy lets it feed; null when it is not a list. */
function narrowFeeds(
  value: unknown,
  context: Narrowing & { at: string; base: LibraryApproval },
): string[] | null {
  const { problems, at, base } = context;
  if (!Array.isArray(value)) {
    problems.add("policy.shape", `${at}.telemetry: is not a list`);
    return null;
  }
  const telemetry: string[] = [];
  for (const dest of value) {
    if (typeof dest !== "string" || !base.telemetry.includes(dest)) {
      problems.add("policy.section_widens", `${at}.telemetry: the policy does not let it feed ${show(dest)}`);
    } else if (!telemetry.includes(dest)) {
      telemetry.push(dest);
      context.named.add(dest);
    }
  }
  return telemetry;
}

/** The destinations left: one on a host that the section cut is dropped, unless the section names it. */
function keptDestinations(
  destinations: Destination[],
  context: Narrowing & { hosts: string[] },
): Destination[] {
  const kept: Destination[] = [];
  for (const d of destinations) {
    const host = d.endpoint === null ? null : tryHost(d.endpoint);
    if (host !== null && !hostCovered(host, context.hosts)) {
      if (context.named.has(d.name)) {
        context.problems.add(
          "policy.section_contradicts",
          `destinations.${d.name}: the section names it, but cuts its host ${host} from hosts`,
        );
      }
      continue;
    }
    kept.push(d);
  }
  return kept;
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

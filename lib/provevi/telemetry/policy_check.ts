/**
 * The check of a parsed telemetry policy (provevi-reference.txt, "Check a telemetry policy"): its version,
 * hosts, destinations and libraries, every problem at once, each with its `policy.*` code.
 * @module
 */
import { isLevel } from "./attributes.ts";
import { endpointParts } from "./endpoint.ts";
import { ProveviError } from "../evidence/errors.ts";
import { isMapping, show, showEntry } from "./_policy_text.ts";
import { hostCovered, hostEntryProblem } from "./policy_hosts.ts";
import {
  type Destination,
  DESTINATION_KINDS,
  type DestinationKind,
  type LibraryApproval,
  LOGFIRE_ENDPOINT,
} from "./policy_types.ts";
import { rangeProblem } from "./library_version.ts";
import type { PolicyProblems } from "./policy_problems.ts";

const TOP_KEYS = new Set(["version", "libraries", "destinations", "hosts"]);
const LIBRARY_KEYS = new Set(["versions", "telemetry"]);
const DESTINATION_KEYS = new Set(["kind", "receives", "endpoint"]);
const NPM_NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;
const DESTINATION_NAME = /^(?!__)[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$/; // not __proto__

/** What the check could read of a policy. */
export interface Checked {
  libraries: LibraryApproval[];
  destinations: Destination[];
  hosts: string[];
}

/**
 * Checks a parsed policy, adding every problem; gives what it could read.
 *
 * @param raw The parsed policy.
 * @param problems Where the problems go.
 * @param versionOk The version's text as written (`true` when it is `1`, a text when it is another, such as
 *   `1.0`), or null when only the parsed value is known.
 * @returns What it could read.
 * @example
 * ```ts
 * import { checkPolicy } from "./policy_check.ts";
 * import { PolicyProblems } from "./policy_problems.ts";
 * const problems = new PolicyProblems();
 * checkPolicy({ version: 2 }, problems, null);
 * problems.list[0]!.code; // "policy.version"
 * ```
 */
export function checkPolicy(
  raw: unknown,
  problems: PolicyProblems,
  versionOk: true | string | null,
): Checked {
  const out: Checked = { libraries: [], destinations: [], hosts: [] };
  if (!isMapping(raw)) {
    problems.add(
      "policy.shape",
      "the file is not a mapping with the keys version, libraries, destinations and hosts",
    );
    return out;
  }
  for (const key of Object.keys(raw)) {
    if (!TOP_KEYS.has(key)) {
      problems.add(
        "policy.unknown_key",
        `${show(key)}: unknown key; a policy has only version, libraries, destinations and hosts`,
      );
    }
  }
  if (!("version" in raw)) problems.add("policy.version", "version: missing; write version: 1");
  else if (raw.version !== 1 || typeof raw.version !== "number" || typeof versionOk === "string") {
    const written = typeof versionOk === "string" ? versionOk : show(raw.version);
    problems.add("policy.version", `version: ${written} is not the integer 1; write version: 1`);
  }
  // hosts first, so that each endpoint's host can be checked against them.
  out.hosts = checkHosts(raw.hosts ?? [], problems);
  const destinations = raw.destinations ?? {};
  if (!isMapping(destinations)) {
    problems.add("policy.shape", "destinations: is not a mapping of names to destinations");
  } else out.destinations = checkDestinations(destinations, { problems, hosts: out.hosts });
  const libraries = raw.libraries ?? {};
  if (!isMapping(libraries)) {
    problems.add("policy.shape", "libraries: is not a mapping of npm package names to approvals");
  } else {
    const names = isMapping(destinations) ? new Set(Object.keys(destinations)) : new Set<string>();
    for (const [name, spec] of Object.entries(libraries)) {
      const library = checkLibrary(name, spec, { problems, names, destinations: out.destinations });
      if (library) out.libraries.push(library);
    }
  }
  return out;
}

/** The policy's hosts, each lowercased, once. */
function checkHosts(hosts: unknown, problems: PolicyProblems): string[] {
  const out: string[] = [];
  if (!Array.isArray(hosts)) {
    problems.add("policy.shape", "hosts: is not a list; write one host on each line, as - host");
    return out;
  }
  hosts.forEach((entry, i) => {
    if (typeof entry !== "string") {
      problems.add("policy.host", `hosts[${i}]: ${show(entry)} is not a text`);
      return;
    }
    const host = entry.trim().toLowerCase();
    const problem = hostEntryProblem(host);
    if (problem) problems.add("policy.host", `hosts[${i}]: ${showEntry(entry)} ${problem}`);
    else if (out.includes(host)) {
      problems.add("policy.host", `hosts[${i}]: ${showEntry(entry)} is named twice`);
    } else out.push(host);
  });
  return out;
}

/** The policy's destinations: each one's kind, level and endpoint, one live viewer, no endpoint twice. */
function checkDestinations(
  destinations: Record<string, unknown>,
  context: { problems: PolicyProblems; hosts: string[] },
): Destination[] {
  const { problems } = context;
  const out: Destination[] = [];
  const endpoints = new Map<string, string>();
  let live: string | null = null;
  for (const [name, spec] of Object.entries(destinations)) {
    const d = checkDestination(name, spec, context);
    if (d === null) continue;
    const at = `destinations.${name}`;
    if (d.kind === "live") {
      if (live !== null) {
        problems.add(
          "policy.live_twice",
          `${at}: a policy names one live viewer at most, and ${live} is one`,
        );
      }
      live = name;
    } else if (typeof d.kind === "string") {
      const key = `${d.kind} ${d.normal ?? "(no endpoint)"}`;
      const other = endpoints.get(key);
      if (other !== undefined && (d.normal !== null || d.endpoint === null)) {
        problems.add(
          "policy.destination",
          `${at}: has the same kind and endpoint as ${other}; a URL must match one destination`,
        );
      }
      endpoints.set(key, name);
    }
    if ((DESTINATION_KINDS as readonly unknown[]).includes(d.kind) && isLevel(d.receives)) {
      out.push({
        name,
        kind: d.kind as DestinationKind,
        receives: d.receives,
        endpoint: d.endpoint,
        normalEndpoint: d.normal,
      });
    }
  }
  return out;
}

/** One destination as written: its kind and level (checked), its endpoint and the endpoint's normal form. */
function checkDestination(
  name: string,
  spec: unknown,
  context: { problems: PolicyProblems; hosts: string[] },
): { kind: unknown; receives: unknown; endpoint: string | null; normal: string | null } | null {
  const { problems } = context;
  const at = `destinations.${name}`;
  if (!DESTINATION_NAME.test(name)) {
    problems.add(
      "policy.destination",
      `${at}: the name is not letters, digits, _, . and -, not starting with __`,
    );
    return null;
  }
  if (!isMapping(spec)) {
    problems.add("policy.shape", `${at}: is not a mapping with kind, receives and endpoint`);
    return null;
  }
  for (const key of Object.keys(spec)) {
    if (!DESTINATION_KEYS.has(key)) {
      problems.add(
        "policy.unknown_key",
        `${at}: ${show(key)} is an unknown key; a destination has kind, receives and endpoint`,
      );
    }
  }
  const kind = spec.kind;
  if (!(DESTINATION_KINDS as readonly unknown[]).includes(kind)) {
    problems.add("policy.kind", `${at}.kind: ${show(kind)} is not one of ${DESTINATION_KINDS.join(", ")}`);
  }
  if (!isLevel(spec.receives)) {
    problems.add("policy.level", `${at}.receives: ${show(spec.receives)} is not one of names, usage, bodies`);
  }
  const { endpoint, normal } = checkEndpoint(spec.endpoint, { ...context, at, kind });
  return { kind, receives: spec.receives, endpoint, normal };
}

/** A destination's endpoint: a URL its kind takes, no user or password, its host in hosts. */
function checkEndpoint(
  endpoint: unknown,
  context: { problems: PolicyProblems; hosts: string[]; at: string; kind: unknown },
): { endpoint: string | null; normal: string | null } {
  const { problems, at, kind } = context;
  const none = { endpoint: null, normal: null };
  // Logfire's own endpoint unless the policy names another (a region, a self-hosted Logfire); its host must
  // still be in hosts, as any endpoint's.
  if ((endpoint === undefined || endpoint === null) && kind === "logfire") endpoint = LOGFIRE_ENDPOINT;
  if (endpoint === undefined || endpoint === null) {
    if (kind === "otlp") {
      problems.add(
        "policy.endpoint",
        `${at}.endpoint: missing; a ${kind} destination needs an http or https URL`,
      );
    }
    return none;
  }
  if (typeof endpoint !== "string") {
    problems.add("policy.endpoint", `${at}.endpoint: ${show(endpoint)} is not a text`);
    return none;
  }
  if (kind === "live") {
    problems.add("policy.endpoint", `${at}.endpoint: a live destination has no endpoint; drop it`);
    return none;
  }
  try {
    const parts = endpointParts(endpoint);
    if (parts.hadUser) {
      problems.add(
        "policy.endpoint",
        `${at}.endpoint: names a user or a password; the policy holds no secrets, so give them in the environment`,
      );
    }
    if (parts.scheme !== "http" && parts.scheme !== "https" && kind !== "mlflow") {
      problems.add("policy.endpoint", `${at}.endpoint: a ${String(kind)} endpoint is an http or https URL`);
    }
    if (parts.host !== null && !hostCovered(parts.host, context.hosts)) {
      problems.add(
        "policy.endpoint_host",
        `${at}.endpoint: its host ${parts.host} is not in hosts; add it to hosts`,
      );
    }
    return { endpoint, normal: parts.normal };
  } catch (error) {
    if (!(error instanceof ProveviError)) throw error;
    problems.add("policy.endpoint", `${at}.endpoint: ${error.message}`);
    return { endpoint, normal: null };
  }
}

/** One library's approval: an npm name, a version range, and the destinations it feeds. */
function checkLibrary(
  name: string,
  spec: unknown,
  context: { problems: PolicyProblems; names: ReadonlySet<string>; destinations: readonly Destination[] },
): LibraryApproval | null {
  const { problems } = context;
  const at = `libraries.${name}`;
  if (!NPM_NAME.test(name) || name.length > 214) {
    problems.add("policy.library", `${at}: ${show(name)} is not an npm package name`);
  }
  if (!isMapping(spec)) {
    problems.add("policy.shape", `${at}: is not a mapping with versions and telemetry`);
    return null;
  }
  for (const key of Object.keys(spec)) {
    if (!LIBRARY_KEYS.has(key)) {
      problems.add(
        "policy.unknown_key",
        `${at}: ${show(key)} is an unknown key; a library has versions and telemetry`,
      );
    }
  }
  const rangeIssue = "versions" in spec ? rangeProblem(spec.versions) : "missing; give the tested versions";
  if (rangeIssue) problems.add("policy.versions", `${at}.versions: ${rangeIssue}`);
  const telemetry = spec.telemetry ?? [];
  const feeds: string[] = [];
  if (!Array.isArray(telemetry)) {
    problems.add("policy.shape", `${at}.telemetry: is not a list; write [${show(telemetry)}]`);
  } else {
    for (const dest of telemetry) {
      if (typeof dest !== "string" || !context.names.has(dest)) {
        problems.add("policy.feeds", `${at}.telemetry: ${show(dest)} is not a destination of the policy`);
      } else if (context.destinations.find((d) => d.name === dest)?.kind === "live") {
        problems.add("policy.feeds", `${at}.telemetry: ${dest} is a live viewer, and no library feeds it`);
      } else if (feeds.includes(dest)) {
        problems.add("policy.feeds", `${at}.telemetry: ${dest} is named twice`);
      } else feeds.push(dest);
    }
  }
  return rangeIssue ? null : { name, versions: spec.versions as string, telemetry: feeds };
}

/**
 * The telemetry policy: which libraries may feed telemetry, to which destinations, at which level, and on
 * which hosts (provevi-reference.txt, "Check a telemetry policy"). provevi reads and checks the policy;
 * provrun applies it.
 * @module
 */
import canonicalize from "canonicalize";
import { isScalar, parseDocument } from "yaml";
import { readBoundedText } from "../evidence/read_text.ts";
import { isLevel, type Level } from "./attributes.ts";
import { endpointParts, tryNormalEndpoint } from "./endpoint.ts";
import { ProveviError, TelemetryPolicyError } from "../evidence/errors.ts";
import { isMapping, show, showEntry } from "./_policy_text.ts";
import { hostCovered, hostEntryProblem } from "./policy_hosts.ts";
import { narrowedParts } from "./policy_narrow.ts";
import {
  type Destination,
  DESTINATION_KINDS,
  type DestinationKind,
  type LibraryApproval,
  type PolicyData,
} from "./policy_types.ts";
import { sha256Hex } from "../evidence/hash.ts";
import { rangeProblem, versionApproved } from "./library_version.ts";

/** The largest policy file read: a policy is a few dozen lines. */
const MAX_POLICY_BYTES = 1 << 20;

const TOP_KEYS = new Set(["version", "libraries", "destinations", "hosts"]);
const LIBRARY_KEYS = new Set(["versions", "telemetry"]);
const DESTINATION_KEYS = new Set(["kind", "receives", "endpoint"]);
const NPM_NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;
const DESTINATION_NAME = /^(?!__)[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$/; // not __proto__

interface Checked {
  libraries: LibraryApproval[];
  destinations: Destination[];
  hosts: string[];
}

/** Checks a parsed policy, pushing every problem; gives what it could read. */
function check(raw: unknown, problems: string[], versionOk: true | string | null): Checked {
  const out: Checked = { libraries: [], destinations: [], hosts: [] };
  if (!isMapping(raw)) {
    problems.push("the file is not a mapping with the keys version, libraries, destinations and hosts");
    return out;
  }
  for (const key of Object.keys(raw)) {
    if (!TOP_KEYS.has(key)) {
      problems.push(
        `${show(key)}: unknown key; a policy has only version, libraries, destinations and hosts`,
      );
    }
  }
  if (!("version" in raw)) problems.push("version: missing; write version: 1");
  else if (raw.version !== 1 || typeof raw.version !== "number" || typeof versionOk === "string") {
    const written = typeof versionOk === "string" ? versionOk : show(raw.version);
    problems.push(`version: ${written} is not the integer 1; write version: 1`);
  }

  // hosts first, so that each endpoint's host can be checked against them.
  const hosts = raw.hosts ?? [];
  if (!Array.isArray(hosts)) problems.push("hosts: is not a list; write one host on each line, as - host");
  else {
    const seen = new Set<string>();
    hosts.forEach((entry, i) => {
      if (typeof entry !== "string") {
        problems.push(`hosts[${i}]: ${show(entry)} is not a text`);
        return;
      }
      const host = entry.trim().toLowerCase();
      const problem = hostEntryProblem(host);
      if (problem) problems.push(`hosts[${i}]: ${showEntry(entry)} ${problem}`);
      else if (seen.has(host)) problems.push(`hosts[${i}]: ${showEntry(entry)} is named twice`);
      else {
        seen.add(host);
        out.hosts.push(host);
      }
    });
  }

  const destinations = raw.destinations ?? {};
  if (!isMapping(destinations)) problems.push("destinations: is not a mapping of names to destinations");
  else {
    const endpoints = new Map<string, string>();
    let live: string | null = null;
    for (const [name, spec] of Object.entries(destinations)) {
      const at = `destinations.${name}`;
      if (!DESTINATION_NAME.test(name)) {
        problems.push(`${at}: the name is not letters, digits, _, . and -, not starting with __`);
        continue;
      }
      if (!isMapping(spec)) {
        problems.push(`${at}: is not a mapping with kind, receives and endpoint`);
        continue;
      }
      for (const key of Object.keys(spec)) {
        if (!DESTINATION_KEYS.has(key)) {
          problems.push(
            `${at}: ${show(key)} is an unknown key; a destination has kind, receives and endpoint`,
          );
        }
      }
      const kind = spec.kind;
      if (!(DESTINATION_KINDS as readonly unknown[]).includes(kind)) {
        problems.push(`${at}.kind: ${show(kind)} is not one of ${DESTINATION_KINDS.join(", ")}`);
      }
      if (!isLevel(spec.receives)) {
        problems.push(`${at}.receives: ${show(spec.receives)} is not one of names, usage, bodies`);
      }
      let endpoint: string | null = null;
      let normal: string | null = null;
      if (spec.endpoint !== undefined && spec.endpoint !== null) {
        if (typeof spec.endpoint !== "string") {
          problems.push(`${at}.endpoint: ${show(spec.endpoint)} is not a text`);
        } else if (kind === "live") {
          problems.push(`${at}.endpoint: a live destination has no endpoint; drop it`);
        } else {
          endpoint = spec.endpoint;
          try {
            const parts = endpointParts(endpoint);
            const web = parts.scheme === "http" || parts.scheme === "https";
            if (parts.hadUser) {
              problems.push(
                `${at}.endpoint: names a user or a password; the policy holds no secrets, so give them in the environment`,
              );
            }
            if (!web && kind !== "mlflow") {
              problems.push(`${at}.endpoint: a ${String(kind)} endpoint is an http or https URL`);
            }
            if (parts.host !== null && !hostCovered(parts.host, out.hosts)) {
              problems.push(`${at}.endpoint: its host ${parts.host} is not in hosts; add it to hosts`);
            }
            normal = parts.normal;
          } catch (error) {
            if (!(error instanceof ProveviError)) throw error;
            problems.push(`${at}.endpoint: ${error.message}`);
          }
        }
      } else if (kind === "otlp" || kind === "logfire") {
        problems.push(`${at}.endpoint: missing; a ${kind} destination needs an http or https URL`);
      }
      if (kind === "live") {
        if (live !== null) problems.push(`${at}: a policy names one live viewer at most, and ${live} is one`);
        live = name;
      }
      if (typeof kind === "string" && kind !== "live") {
        const key = `${kind} ${normal ?? "(no endpoint)"}`;
        const other = endpoints.get(key);
        if (other !== undefined && (normal !== null || endpoint === null)) {
          problems.push(
            `${at}: has the same kind and endpoint as ${other}; a URL must match one destination`,
          );
        }
        endpoints.set(key, name);
      }
      if ((DESTINATION_KINDS as readonly unknown[]).includes(kind) && isLevel(spec.receives)) {
        out.destinations.push({
          name,
          kind: kind as DestinationKind,
          receives: spec.receives,
          endpoint,
          normalEndpoint: normal,
        });
      }
    }
  }
  const named = new Map(out.destinations.map((d) => [d.name, d]));
  const destinationNames = isMapping(destinations) ? new Set(Object.keys(destinations)) : new Set<string>();

  const libraries = raw.libraries ?? {};
  if (!isMapping(libraries)) problems.push("libraries: is not a mapping of npm package names to approvals");
  else {
    for (const [name, spec] of Object.entries(libraries)) {
      const at = `libraries.${name}`;
      if (!NPM_NAME.test(name) || name.length > 214) {
        problems.push(`${at}: ${show(name)} is not an npm package name`);
      }
      if (!isMapping(spec)) {
        problems.push(`${at}: is not a mapping with versions and telemetry`);
        continue;
      }
      for (const key of Object.keys(spec)) {
        if (!LIBRARY_KEYS.has(key)) {
          problems.push(`${at}: ${show(key)} is an unknown key; a library has versions and telemetry`);
        }
      }
      const rangeIssue = "versions" in spec
        ? rangeProblem(spec.versions)
        : "missing; give the tested versions";
      if (rangeIssue) problems.push(`${at}.versions: ${rangeIssue}`);
      const telemetry = spec.telemetry ?? [];
      const feeds: string[] = [];
      if (!Array.isArray(telemetry)) {
        problems.push(`${at}.telemetry: is not a list; write [${show(telemetry)}]`);
      } else {
        for (const dest of telemetry) {
          if (typeof dest !== "string" || !destinationNames.has(dest)) {
            problems.push(`${at}.telemetry: ${show(dest)} is not a destination of the policy`);
          } else if (named.get(dest)?.kind === "live") {
            problems.push(`${at}.telemetry: ${dest} is a live viewer, and no library feeds it`);
          } else if (feeds.includes(dest)) {
            problems.push(`${at}.telemetry: ${dest} is named twice`);
          } else feeds.push(dest);
        }
      }
      if (!rangeIssue) out.libraries.push({ name, versions: spec.versions as string, telemetry: feeds });
    }
  }
  return out;
}

/**
 * A checked telemetry policy. A library or a destination that the policy does not name gets nothing.
 *
 * @example
 * ```ts
 * import { TelemetryPolicy } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const policy = TelemetryPolicy.fromDict({
 *   version: 1,
 *   destinations: { collector: { kind: "otlp", receives: "usage", endpoint: "https://otel.example.com/v1/traces" } },
 *   hosts: ["otel.example.com"],
 * });
 * assert.equal(policy.matchDestination("otlp", "https://OTEL.example.com:443/v1/traces")?.name, "collector");
 * ```
 */
export class TelemetryPolicy {
  /** The approved libraries, in the policy's order. */
  readonly libraries: readonly LibraryApproval[];
  /** The destinations, in the policy's order. */
  readonly destinations: readonly Destination[];
  /** The hosts that destinations may send to, lowercase, in the policy's order. */
  readonly hosts: readonly string[];
  /** Where the policy came from, for messages: a file, or `a policy` for one built from an object. */
  readonly source: string;

  private constructor(checked: Checked, source: string) {
    this.libraries = Object.freeze(
      checked.libraries.map((l) => Object.freeze({ ...l, telemetry: Object.freeze([...l.telemetry]) })),
    );
    this.destinations = Object.freeze(checked.destinations.map((d) => Object.freeze({ ...d })));
    this.hosts = Object.freeze([...checked.hosts]);
    this.source = source;
  }

  /**
   * The policy of a run with no policy file: it approves nothing.
   *
   * @example
   * ```ts
   * import { TelemetryPolicy } from "./policy.ts";
   * TelemetryPolicy.denyAll().matchDestination("otlp", "https://otel.example.com"); // null
   * ```
   */
  static denyAll(): TelemetryPolicy {
    return new TelemetryPolicy(
      { libraries: [], destinations: [], hosts: [] },
      "the policy that approves nothing",
    );
  }

  /**
   * Checks a policy given as an object, such as parsed JSON.
   *
   * @param data The policy.
   * @param options `source`: what to call it in messages.
   * @returns The policy.
   * @throws TelemetryPolicyError listing every problem.
   * @example
   * ```ts
   * import { TelemetryPolicy } from "./policy.ts";
   * const policy = TelemetryPolicy.fromDict({ version: 1, destinations: { browser: { kind: "live", receives: "names" } } });
   * policy.liveLevel(); // "names"
   * ```
   */
  static fromDict(data: unknown, options: { source?: string } = {}): TelemetryPolicy {
    const problems: string[] = [];
    const checked = check(data, problems, null);
    const source = options.source ?? "the telemetry policy";
    if (problems.length) throw new TelemetryPolicyError(source, problems);
    return new TelemetryPolicy(checked, source);
  }

  /**
   * Reads and checks a policy file, YAML or JSON. A key named twice in one mapping is refused, in JSON too.
   *
   * @param text The file's text.
   * @param options `source`: the file's name, for messages.
   * @returns The policy.
   * @throws TelemetryPolicyError listing every problem.
   * @example
   * ```ts
   * import { TelemetryPolicy } from "./policy.ts";
   * TelemetryPolicy.parse("version: 1\nhosts: [otel.example.com]\n").hosts; // ["otel.example.com"]
   * ```
   */
  static parse(text: string, options: { source?: string } = {}): TelemetryPolicy {
    const source = options.source ?? "the telemetry policy";
    const doc = parseDocument(text, { uniqueKeys: true, merge: false, prettyErrors: false, strict: true });
    const problems: string[] = [];
    let fatal = false;
    for (const error of [...doc.errors, ...doc.warnings]) {
      const where = `line ${text.slice(0, error.pos[0]).split("\n").length}: `;
      const first = error.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "");
      if (error.code === "DUPLICATE_KEY") {
        const key = keyAt(text, error.pos[0]);
        problems.push(`${where}the key ${key ? show(key) + " " : ""}is named twice in one mapping; keep one`);
      } else {
        problems.push(`${where}${first}`);
        fatal = true;
      }
    }
    let checked: Checked | null = null;
    if (!fatal) {
      const node = doc.get("version", true);
      const source = isScalar(node) && typeof node.source === "string" ? node.source : null;
      let value: unknown = null;
      try {
        value = doc.toJS({ maxAliasCount: 100 });
      } catch (error) {
        // yaml refuses a tree of aliases that expands too far (a "billion laughs") with a ReferenceError.
        problems.push(`cannot be expanded: ${(error as Error).message}; use fewer aliases (*name)`);
        fatal = true;
      }
      if (!fatal) checked = check(value, problems, source === null ? null : source === "1" ? true : source);
    }
    if (problems.length) {
      const what = options.source === undefined ? source : `the telemetry policy ${source}`;
      throw new TelemetryPolicyError(what, problems);
    }
    // No problems means the YAML was read and checked once above; what that check read is the policy.
    return new TelemetryPolicy(checked!, source);
  }

  /**
   * Reads and checks a policy file, YAML or JSON.
   *
   * @param file The file's path.
   * @returns The policy.
   * @throws TelemetryPolicyError listing every problem; ProveviError when the file cannot be read.
   * @example
   * ```ts
   * import { TelemetryPolicy } from "./policy.ts";
   * const policy = await TelemetryPolicy.load("fixtures/policies/telemetry-policy.yaml");
   * ```
   */
  static async load(file: string): Promise<TelemetryPolicy> {
    if (typeof file !== "string" || file === "") throw new TypeError("load() needs a file's path");
    // A regular file only, its size checked while it is read: a FIFO or /dev/zero never hangs the reader.
    const text = await readBoundedText(file, { limit: MAX_POLICY_BYTES, what: "the telemetry policy" });
    return TelemetryPolicy.parse(text, { source: file });
  }

  /**
   * The policy a run or a copy applies: the file that `file` names, or else the file that
   * `PROVRUN_TELEMETRY_POLICY` names, or else {@linkcode TelemetryPolicy.denyAll}.
   *
   * @param options `file`: a policy file, such as `--policy FILE`; `environ`: the variables (the process's
   *   `PROVRUN_TELEMETRY_POLICY` by default).
   * @returns The policy.
   * @throws TelemetryPolicyError or ProveviError when the named file cannot be read.
   * @example
   * ```ts
   * import { TelemetryPolicy } from "./policy.ts";
   * const policy = await TelemetryPolicy.fromEnvironment({ environ: {} }); // approves nothing
   * ```
   */
  static async fromEnvironment(
    options: { file?: string | null; environ?: Readonly<Record<string, string | undefined>> } = {},
  ): Promise<TelemetryPolicy> {
    if (options.file) return await TelemetryPolicy.load(options.file);
    let named: string | undefined;
    if (options.environ) named = options.environ.PROVRUN_TELEMETRY_POLICY;
    else {
      try {
        named = Deno.env.get("PROVRUN_TELEMETRY_POLICY");
      } catch (error) {
        throw new ProveviError(
          "cannot read PROVRUN_TELEMETRY_POLICY: allow it with --allow-env=PROVRUN_TELEMETRY_POLICY",
          { cause: error },
        );
      }
    }
    return named && named.trim() !== "" ? await TelemetryPolicy.load(named) : TelemetryPolicy.denyAll();
  }

  /**
   * The hosts for Deno's `--allow-net`: the policy's hosts, with a leading-dot domain written `*.domain`, then
   * `extra` (such as the model providers' hosts). Deno's `*.domain` also allows the domain itself, so it is a
   * little wider than the policy's `.domain`; list hosts one by one where that matters.
   *
   * @param options `extra`: more hosts, such as `api.openai.com`.
   * @returns The entries, each once, in order.
   * @example
   * ```ts
   * import { TelemetryPolicy } from "./policy.ts";
   * const policy = TelemetryPolicy.fromDict({ version: 1, hosts: [".amazonaws.com", "otel.example.com"] });
   * policy.allowNet({ extra: ["api.openai.com"] }).join(","); // "*.amazonaws.com,otel.example.com,api.openai.com"
   * ```
   */
  allowNet(options: { extra?: Iterable<string> } = {}): string[] {
    const out: string[] = [];
    for (const host of [...this.hosts, ...(options.extra ?? [])]) {
      const entry = host.startsWith(".") ? `*${host}` : host;
      if (!out.includes(entry)) out.push(entry);
    }
    return out;
  }

  /**
   * The policy as data, with defaults filled in: what {@linkcode TelemetryPolicy.digest} hashes.
   *
   * @example
   * ```ts
   * import { TelemetryPolicy } from "./policy.ts";
   * TelemetryPolicy.denyAll().toJSON(); // { version: 1, libraries: {}, destinations: {}, hosts: [] }
   * ```
   */
  toJSON(): PolicyData {
    const libraries: PolicyData["libraries"] = {};
    for (const l of this.libraries) libraries[l.name] = { versions: l.versions, telemetry: [...l.telemetry] };
    const destinations: PolicyData["destinations"] = {};
    for (const d of this.destinations) {
      destinations[d.name] = {
        kind: d.kind,
        receives: d.receives,
        ...(d.endpoint === null ? {} : { endpoint: d.endpoint }),
      };
    }
    return { version: 1, libraries, destinations, hosts: [...this.hosts] };
  }

  /**
   * The SHA-256 of the policy's canonical JSON (RFC 8785), for a run to record which policy it ran under. A
   * YAML file and a JSON file of the same policy give the same digest.
   *
   * @example
   * ```ts
   * import { TelemetryPolicy } from "./policy.ts";
   * TelemetryPolicy.denyAll().digest().length; // 64
   * ```
   */
  digest(): string {
    return sha256Hex(canonicalize(this.toJSON())!);
  }

  /**
   * The approval of a library, or `null` when the policy does not name it.
   *
   * @example
   * ```ts
   * import { TelemetryPolicy } from "./policy.ts";
   * TelemetryPolicy.denyAll().library("ai"); // null
   * ```
   */
  library(name: string): LibraryApproval | null {
    return this.libraries.find((l) => l.name === name) ?? null;
  }

  /**
   * The destination of that name, or `null`.
   *
   * @example
   * ```ts
   * import { TelemetryPolicy } from "./policy.ts";
   * TelemetryPolicy.denyAll().destination("logfire"); // null
   * ```
   */
  destination(name: string): Destination | null {
    return this.destinations.find((d) => d.name === name) ?? null;
  }

  /**
   * True when the policy lets a library's instrumentation feed a destination.
   *
   * @param library The npm package name.
   * @param destination The destination's name.
   * @example
   * ```ts
   * import { TelemetryPolicy } from "./policy.ts";
   * TelemetryPolicy.denyAll().feeds("ai", "logfire"); // false
   * ```
   */
  feeds(library: string, destination: string): boolean {
    return this.library(library)?.telemetry.includes(destination) ?? false;
  }

  /**
   * True when a library is approved at an installed version (see `versionApproved`).
   *
   * @param library The npm package name.
   * @param version The installed version.
   * @example
   * ```ts
   * import { TelemetryPolicy } from "./policy.ts";
   * const p = TelemetryPolicy.fromDict({ version: 1, libraries: { ai: { versions: ">=7 <8" } } });
   * p.approvesVersion("ai", "7.0.173"); // true
   * ```
   */
  approvesVersion(library: string, version: string): boolean {
    const approval = this.library(library);
    return approval !== null && versionApproved(version, approval.versions);
  }

  /**
   * True when a host is in the policy's hosts.
   *
   * @example
   * ```ts
   * import { TelemetryPolicy } from "./policy.ts";
   * TelemetryPolicy.fromDict({ version: 1, hosts: [".amazonaws.com"] }).hostAllowed("s3.amazonaws.com"); // true
   * ```
   */
  hostAllowed(host: string): boolean {
    return hostCovered(host.toLowerCase(), this.hosts);
  }

  /**
   * The destination of that kind whose endpoint is the URL, once both are in normal form, or `null`. A URL that
   * {@linkcode normalEndpoint} refuses matches nothing. `url` `null` or `undefined` asks for the mlflow
   * destination with no endpoint: the copy in the store's own file (MLFLOW_TRACKING_URI unset).
   *
   * @param kind The kind of destination.
   * @param url The URL a variable names, such as OTEL_EXPORTER_OTLP_ENDPOINT's.
   * @returns The destination, or `null`: provrun then sends nothing and writes `telemetry_blocked`.
   * @example
   * ```ts
   * import { TelemetryPolicy } from "./policy.ts";
   * const policy = TelemetryPolicy.fromDict({
   *   version: 1,
   *   destinations: { tracking: { kind: "mlflow", receives: "bodies", endpoint: "postgresql://db.example.com/mlflow" } },
   *   hosts: ["db.example.com"],
   * });
   * policy.matchDestination("mlflow", "postgresql+psycopg://u:pw@db.example.com:5432/mlflow")?.name; // "tracking"
   * ```
   */
  matchDestination(kind: DestinationKind, url: string | null | undefined): Destination | null {
    if (!(DESTINATION_KINDS as readonly string[]).includes(kind)) {
      throw new TypeError(`"${kind}" is not a kind of destination: use ${DESTINATION_KINDS.join(", ")}`);
    }
    if (kind === "live") return null;
    if (url === null || url === undefined) {
      if (kind !== "mlflow") return null;
      return this.destinations.find((d) => d.kind === "mlflow" && d.endpoint === null) ?? null;
    }
    const normal = tryNormalEndpoint(url);
    if (normal === null) return null;
    return this.destinations.find((d) => d.kind === kind && d.normalEndpoint === normal) ?? null;
  }

  /**
   * The level of the policy's live viewer, or `null` when it names none; with `null`, a run shows nothing live.
   *
   * @example
   * ```ts
   * import { TelemetryPolicy } from "./policy.ts";
   * TelemetryPolicy.denyAll().liveLevel(); // null
   * ```
   */
  liveLevel(): Level | null {
    return this.destinations.find((d) => d.kind === "live")?.receives ?? null;
  }

  /**
   * The policy narrowed for one run by a run file's `telemetry` section. Each of the section's keys
   * (`libraries`, `destinations`, `hosts`) replaces the policy's list with a smaller one; a destination can
   * receive a lower level and a library can feed fewer destinations. A library or destination that the section
   * names without a change keeps what the policy gives it. A destination whose endpoint's host the section cuts
   * is dropped, and no library feeds it; one that the section names itself is refused instead.
   *
   * @param section The run file's `telemetry` section; `null` or `undefined` gives this policy.
   * @returns The narrowed policy.
   * @throws TelemetryPolicyError when the section would widen the policy in any way, or contradicts itself.
   * @example
   * ```ts
   * import { TelemetryPolicy } from "./policy.ts";
   * const policy = TelemetryPolicy.fromDict({ version: 1, destinations: { browser: { kind: "live", receives: "bodies" } } });
   * policy.narrow({ destinations: { browser: { receives: "names" } } }).liveLevel(); // "names"
   * ```
   */
  narrow(section: unknown): TelemetryPolicy {
    if (section === null || section === undefined) return this;
    return new TelemetryPolicy(narrowedParts(this, section), `${this.source}, narrowed`);
  }

  /**
   * The problems of installed versions: one text for each approved library installed at a version that the
   * policy does not name.
   *
   * @param installed The installed version of each package, as {@linkcode readInstalledPackages} gives.
   * @returns Texts such as `ai 6.0.0 is installed, but the policy approves >=7 <8`.
   * @example
   * ```ts
   * import { TelemetryPolicy } from "./policy.ts";
   * const p = TelemetryPolicy.fromDict({ version: 1, libraries: { ai: { versions: ">=7 <8" } } });
   * p.versionProblems(new Map([["ai", "6.0.0"]])); // ["ai 6.0.0 is installed, but the policy approves >=7 <8"]
   * ```
   */
  versionProblems(installed: ReadonlyMap<string, string>): string[] {
    const problems: string[] = [];
    for (const l of this.libraries) {
      const version = installed.get(l.name);
      if (version !== undefined && !versionApproved(version, l.versions)) {
        problems.push(`${l.name} ${version} is installed, but the policy approves ${l.versions}`);
      }
    }
    return problems;
  }
}

/** The key whose text starts at a position of a YAML or JSON text, for a message. */
function keyAt(text: string, pos: number): string | null {
  const m = /^\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([^:\n]+?))\s*:/.exec(text.slice(pos, pos + 300));
  if (!m) return null;
  return m[1] ?? m[2] ?? m[3] ?? null;
}

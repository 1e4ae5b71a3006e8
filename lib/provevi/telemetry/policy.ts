/**
 * The telemetry policy: which libraries may feed telemetry, to which destinations, at which level, and on
 * which hosts (provevi-reference.txt, "Check a telemetry policy"). provevi reads and checks the policy;
 * provrun applies it.
 * @module
 */
import canonicalize from "canonicalize";
import { isScalar, parseDocument } from "yaml";
import { readBoundedText } from "../evidence/read_text.ts";
import type { Level } from "./attributes.ts";
import { tryNormalEndpoint } from "./endpoint.ts";
import { ProveviError, TelemetryPolicyError } from "../evidence/errors.ts";
import { show } from "./_policy_text.ts";
import { hostCovered } from "./policy_hosts.ts";
import { type Checked, checkPolicy } from "./policy_check.ts";
import { PolicyProblems } from "./policy_problems.ts";
import type { Problem } from "../evidence/problem.ts";
import { narrowedParts } from "./policy_narrow.ts";
import {
  type Destination,
  DESTINATION_KINDS,
  type DestinationKind,
  type LibraryApproval,
  type PolicyData,
} from "./policy_types.ts";
import { sha256Hex } from "../evidence/hash.ts";
import { versionApproved } from "./library_version.ts";

/** The largest policy file read: a policy is a few dozen lines. */
const MAX_POLICY_BYTES = 1 << 20;

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
    const problems = new PolicyProblems();
    const checked = checkPolicy(data, problems, null);
    const source = options.source ?? "the telemetry policy";
    if (problems.length) throw new TelemetryPolicyError(source, problems.list);
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
    const problems = new PolicyProblems(options.source ?? null);
    let fatal = false;
    for (const error of [...doc.errors, ...doc.warnings]) {
      const where = `line ${text.slice(0, error.pos[0]).split("\n").length}: `;
      const first = error.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "");
      if (error.code === "DUPLICATE_KEY") {
        const key = keyAt(text, error.pos[0]);
        problems.add(
          "policy.duplicate_key",
          `${where}the key ${key ? show(key) + " " : ""}is named twice in one mapping; keep one`,
        );
      } else {
        problems.add("policy.syntax", `${where}${first}`);
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
        problems.add(
          "policy.syntax",
          `cannot be expanded: ${(error as Error).message}; use fewer aliases (*name)`,
        );
        fatal = true;
      }
      if (!fatal) {
        checked = checkPolicy(value, problems, source === null ? null : source === "1" ? true : source);
      }
    }
    if (problems.length) {
      const what = options.source === undefined ? source : `the telemetry policy ${source}`;
      throw new TelemetryPolicyError(what, problems.list);
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
   * The problems of installed versions: one `policy.version_unapproved` for each approved library installed at
   * a version that the policy does not name.
   *
   * @param installed The installed version of each package, as {@linkcode readInstalledPackages} gives.
   * @param options `file`: the policy's file, which each problem names.
   * @returns Problems whose messages read `ai 6.0.0 is installed, but the policy approves >=7 <8`.
   * @example
   * ```ts
   * import { TelemetryPolicy } from "./policy.ts";
   * const p = TelemetryPolicy.fromDict({ version: 1, libraries: { ai: { versions: ">=7 <8" } } });
   * p.versionProblems(new Map([["ai", "6.0.0"]]))[0]!.code; // "policy.version_unapproved"
   * ```
   */
  versionProblems(installed: ReadonlyMap<string, string>, options: { file?: string } = {}): Problem[] {
    const problems = new PolicyProblems(options.file ?? null);
    for (const l of this.libraries) {
      const version = installed.get(l.name);
      if (version !== undefined && !versionApproved(version, l.versions)) {
        problems.add(
          "policy.version_unapproved",
          `${l.name} ${version} is installed, but the policy approves ${l.versions}`,
        );
      }
    }
    return problems.list;
  }
}

/** The key whose text starts at a position of a YAML or JSON text, for a message. */
function keyAt(text: string, pos: number): string | null {
  const m = /^\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([^:\n]+?))\s*:/.exec(text.slice(pos, pos + 300));
  if (!m) return null;
  return m[1] ?? m[2] ?? m[3] ?? null;
}

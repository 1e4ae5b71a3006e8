/**
 * What a run's variables say about telemetry: which telemetry variables are set, which destinations they name
 * and whether the policy approves each one, what cannot be turned off from inside the process (Deno's own
 * OpenTelemetry export, a global tracer provider), and the guard that refuses a run whose process may reach a
 * destination host that the policy does not list.
 * @module
 */
import { otlpTracesTarget } from "../../provevi/telemetry/mod.ts";
import { ProveviError } from "../../provevi/evidence/mod.ts";
import type { TelemetryPolicy } from "../../provevi/mod.ts";
import type { Destination, DestinationKind, Environ } from "../../provevi/telemetry/mod.ts";
import type { Json, Level } from "../../provevi/mod.ts";

/** The proxy variables, in both cases: they could send a matched URL somewhere else. */
export const PROXY_VARIABLES: readonly string[] = ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"]
  .flatMap((n) => [n, n.toLowerCase()]);

/** The variable that holds the Logfire write token (Logfire's SDKs read the same one); never recorded. */
export const LOGFIRE_TOKEN = "LOGFIRE_TOKEN";

const SIGNALS = ["", "TRACES_", "METRICS_", "LOGS_"];
const OTLP_SETTINGS = [
  "ENDPOINT",
  "HEADERS",
  "PROTOCOL",
  "TIMEOUT",
  "COMPRESSION",
  "INSECURE",
  "CERTIFICATE",
  "CLIENT_KEY",
  "CLIENT_CERTIFICATE",
];

/**
 * The OpenTelemetry variables that a process with a narrow `--allow-env=OTEL_*` can still be asked for one by
 * one (it cannot list its variables): the SDK's, the OTLP exporter's for each signal, and Deno's own.
 */
export const OTEL_VARIABLES: readonly string[] = [
  "OTEL_SDK_DISABLED",
  "OTEL_SERVICE_NAME",
  "OTEL_RESOURCE_ATTRIBUTES",
  "OTEL_LOG_LEVEL",
  "OTEL_PROPAGATORS",
  "OTEL_TRACES_SAMPLER",
  "OTEL_TRACES_SAMPLER_ARG",
  "OTEL_TRACES_EXPORTER",
  "OTEL_METRICS_EXPORTER",
  "OTEL_LOGS_EXPORTER",
  ...SIGNALS.flatMap((s) => OTLP_SETTINGS.map((k) => `OTEL_EXPORTER_OTLP_${s}${k}`)),
  "OTEL_EXPORTER_ZIPKIN_ENDPOINT",
  "OTEL_BSP_SCHEDULE_DELAY",
  "OTEL_BSP_EXPORT_TIMEOUT",
  "OTEL_BSP_MAX_QUEUE_SIZE",
  "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
  "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT",
  "OTEL_ATTRIBUTE_COUNT_LIMIT",
  "OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT",
  "OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT",
  "OTEL_SPAN_EVENT_COUNT_LIMIT",
  "OTEL_SPAN_LINK_COUNT_LIMIT",
  "OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT",
  "OTEL_LINK_ATTRIBUTE_COUNT_LIMIT",
  "OTEL_DENO",
  "OTEL_DENO_CONSOLE",
  "OTEL_DENO_PROPAGATORS",
];

/** The variables that name where telemetry goes or how it gets there, read one by one when needed. */
const NAMED = [
  ...OTEL_VARIABLES,
  "MLFLOW_TRACKING_URI",
  ...PROXY_VARIABLES,
  "PROVRUN_TELEMETRY_POLICY",
  LOGFIRE_TOKEN,
];

/**
 * The telemetry variables of the process, each read by name. It never lists the whole environment
 * (`Deno.env.toObject()`), which a task that names its variables does not allow: with a prompt on a terminal,
 * it would stop and ask. A name the process may not read is reported, so a run can say what it could not
 * check.
 *
 * @returns The variables, and the names that could not be read.
 * @example
 * ```ts
 * import { processEnviron } from "./telemetry_env.ts";
 * const { environ, unreadable } = processEnviron();
 * ```
 */
export function processEnviron(): { environ: Environ; unreadable: string[] } {
  const environ: Record<string, string> = {};
  const unreadable: string[] = [];
  for (const name of NAMED) {
    try {
      const value = Deno.env.get(name);
      if (value !== undefined) environ[name] = value;
    } catch {
      unreadable.push(name);
    }
  }
  return { environ, unreadable };
}

/** A variable that names a place telemetry may go. */
export interface NamedDestination {
  /** The variable, such as `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  variable: string;
  /** The kind of destination it names. */
  kind: DestinationKind;
  /** The URL the sender would use (for OTLP, the traces URL), as the variable gives it. */
  url: string;
  /** The OTLP protocol, for an OTLP destination. */
  protocol: string | null;
  /** The policy's destination that the URL matches, or `null`: nothing is sent there. */
  destination: Destination | null;
  /** True for the OTLP traces target, the one place provrun's spans may go; false for a place only guarded. */
  traces: boolean;
}

/**
 * The destinations that the variables name, each matched against the policy.
 *
 * @param environ The variables.
 * @param policy The run's (narrowed) policy.
 * @returns One entry per variable that names a place: the OTLP traces target, each Logfire destination of the
 *   policy when `LOGFIRE_TOKEN` is set (Logfire's traces URL, `<endpoint>/v1/traces`), `MLFLOW_TRACKING_URI`.
 * @throws ProveviError when an OTLP protocol variable holds an unknown protocol.
 * @example
 * ```ts
 * import { TelemetryPolicy } from "../../provevi/mod.ts";
 * import { namedDestinations } from "./telemetry_env.ts";
 * namedDestinations({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://otel.example.com" }, TelemetryPolicy.denyAll());
 * // [{ variable: "OTEL_EXPORTER_OTLP_ENDPOINT", kind: "otlp", url: "https://otel.example.com/v1/traces", destination: null, … }]
 * ```
 */
export function namedDestinations(environ: Environ, policy: TelemetryPolicy): NamedDestination[] {
  const out: NamedDestination[] = [];
  const target = otlpTracesTarget(environ);
  if (target !== null) {
    const variable = set(environ, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
      ? "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
      : "OTEL_EXPORTER_OTLP_ENDPOINT";
    out.push({
      variable,
      kind: "otlp",
      url: target.url,
      protocol: target.protocol,
      destination: policy.matchDestination("otlp", target.url),
      traces: true,
    });
  }
  // The general endpoint names a place that metrics, logs or another program's exporter send to, whether or
  // not traces go there (the traces variable may override it, OTEL_TRACES_EXPORTER may turn traces off): it is
  // matched, recorded and guarded too, but provrun's spans go only to the traces target.
  if (set(environ, "OTEL_EXPORTER_OTLP_ENDPOINT")) {
    const {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: _traces,
      OTEL_TRACES_EXPORTER: _exporter,
      OTEL_SDK_DISABLED: _off,
      ...rest
    } = environ;
    const general = otlpTracesTarget(rest);
    if (general !== null && general.url !== target?.url) {
      out.push({
        variable: "OTEL_EXPORTER_OTLP_ENDPOINT",
        kind: "otlp",
        url: general.url,
        protocol: general.protocol,
        destination: policy.matchDestination("otlp", general.url),
        traces: false,
      });
    }
  }
  // A Logfire destination of the policy is sent to once its write token is set: the policy names the place
  // (Logfire's own endpoint unless it says otherwise), the token is the user's consent and key.
  if (set(environ, LOGFIRE_TOKEN)) {
    for (const d of policy.destinations) {
      if (d.kind !== "logfire" || d.endpoint === null) continue;
      const url = d.endpoint.endsWith("/") ? `${d.endpoint}v1/traces` : `${d.endpoint}/v1/traces`;
      out.push({
        variable: LOGFIRE_TOKEN,
        kind: "logfire",
        url,
        protocol: "http/protobuf",
        destination: d,
        traces: true,
      });
    }
  }
  const mlflow = environ.MLFLOW_TRACKING_URI?.trim();
  if (mlflow) {
    out.push({
      variable: "MLFLOW_TRACKING_URI",
      kind: "mlflow",
      url: mlflow,
      protocol: null,
      destination: policy.matchDestination("mlflow", mlflow),
      traces: false,
    });
  }
  return out;
}

function set(environ: Environ, name: string): boolean {
  const value = environ[name];
  return value !== undefined && value.trim() !== "";
}

/**
 * A URL as a run may record it: no user, no password, no query or fragment (they may hold keys); a text that
 * is not a URL is recorded as `(not a URL)`.
 *
 * @param url The URL a variable gives.
 * @returns The URL without what may be secret.
 * @example
 * ```ts
 * import { recordableUrl } from "./telemetry_env.ts";
 * recordableUrl("https://u:pw@otel.example.com/v1/traces?key=x"); // "https://otel.example.com/v1/traces"
 * ```
 */
export function recordableUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "(not a URL)";
  }
  parsed.username = "";
  parsed.password = "";
  parsed.search = "";
  parsed.hash = "";
  return parsed.href;
}

/** What `run_created` records of the run's telemetry. */
export interface TelemetryFacts {
  /** The SHA-256 of the run's policy (narrowed by the run file). */
  policy_digest: string;
  /** The telemetry variables that are set, by name (values may hold keys, so none is recorded). */
  telemetry_variables: string[];
  /** The proxy variables that are set, by name. provrun's senders do not use them. */
  proxy_variables: string[];
  /** Each variable that names a destination, the URL without secrets, and the policy's destination it matches. */
  telemetry_destinations: {
    variable: string;
    kind: string;
    url: string;
    destination: string | null;
    receives: Level | null;
  }[];
  /** Variables that the process was not allowed to read, so could not be checked. */
  unreadable_variables: string[];
  [key: string]: Json;
}

/**
 * The facts `run_created` records: the set telemetry variables (`OTEL_*`, `MLFLOW_TRACKING_URI`,
 * `LOGFIRE_TOKEN`: names only, never values), the proxy
 * variables, the policy's digest and which destinations the variables match.
 *
 * @param environ The variables.
 * @param policy The run's policy.
 * @param named The destinations the variables name (see {@linkcode namedDestinations}).
 * @param unreadable Variables the process could not read.
 * @returns The facts.
 * @example
 * ```ts
 * import { TelemetryPolicy } from "../../provevi/mod.ts";
 * import { telemetryFacts } from "./telemetry_env.ts";
 * telemetryFacts({ OTEL_SERVICE_NAME: "x" }, TelemetryPolicy.denyAll(), [], []).telemetry_variables; // ["OTEL_SERVICE_NAME"]
 * ```
 */
export function telemetryFacts(
  environ: Environ,
  policy: TelemetryPolicy,
  named: readonly NamedDestination[],
  unreadable: readonly string[],
): TelemetryFacts {
  const names = Object.keys(environ).filter((n) => environ[n] !== undefined).sort();
  return {
    policy_digest: policy.digest(),
    telemetry_variables: names.filter((n) =>
      n.startsWith("OTEL_") || n === "MLFLOW_TRACKING_URI" || n === LOGFIRE_TOKEN
    ),
    proxy_variables: names.filter((n) => PROXY_VARIABLES.includes(n)),
    telemetry_destinations: named.map((d) => ({
      variable: d.variable,
      kind: d.kind,
      url: recordableUrl(d.url),
      destination: d.destination?.name ?? null,
      receives: d.destination?.receives ?? null,
    })),
    unreadable_variables: [...unreadable],
  };
}

/**
 * True when Deno's own OpenTelemetry export is on (`OTEL_DENO=true` or `1`). Deno reads it when the process
 * starts, so a run cannot turn it off: it writes `telemetry_problem`.
 *
 * @example
 * ```ts
 * import { denoExportsTelemetry } from "./telemetry_env.ts";
 * denoExportsTelemetry({ OTEL_DENO: "1" }); // true
 * ```
 */
export function denoExportsTelemetry(environ: Environ): boolean {
  const value = environ.OTEL_DENO?.trim().toLowerCase();
  return value === "true" || value === "1";
}

const OTEL_API_GLOBAL = Symbol.for("opentelemetry.js.api.1");

/**
 * True when some code registered a global tracer provider with `@opentelemetry/api` 1.x (any copy of it in the
 * process: the API keeps its globals under one symbol for each major version). provrun never uses it.
 *
 * @example
 * ```ts
 * import { globalTracerProviderSet } from "./telemetry_env.ts";
 * globalTracerProviderSet(); // false, unless a library called trace.setGlobalTracerProvider()
 * ```
 */
export function globalTracerProviderSet(): boolean {
  const api = (globalThis as Record<symbol, unknown>)[OTEL_API_GLOBAL] as { trace?: unknown } | undefined;
  return api?.trace !== undefined && api.trace !== null;
}

/**
 * A run refused because its process may reach a destination host that the telemetry policy does not list.
 *
 * @example
 * ```ts
 * import { ProveviError, TelemetryRefused } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const error = new TelemetryRefused("OTEL_EXPORTER_OTLP_ENDPOINT", "evil.example:443");
 * assert.ok(error instanceof ProveviError);
 * assert.equal(error.host, "evil.example:443");
 * ```
 */
export class TelemetryRefused extends ProveviError {
  /** The host, with its port. */
  readonly host: string;
  /**
   * @param variable The variable that names the host.
   * @param host The host and port.
   */
  constructor(variable: string, host: string) {
    super(
      `cannot start the run: ${variable} names ${host}, which the telemetry policy's hosts do not list, and ` +
        `this process may connect to it; unset ${variable}, add the host to the policy, or leave it out of --allow-net`,
    );
    this.name = "TelemetryRefused";
    this.host = host;
  }
}

const DEFAULT_PORTS: Record<string, string> = { "http:": "80", "https:": "443", "postgresql:": "5432" };

/**
 * The guard against a misconfigured destination: for each destination variable whose host the policy does not
 * list, asks Deno whether this process may connect to it, and refuses the run when it may. provrun never sends
 * to an unmatched destination anyway; the guard makes a wrong variable plus an open `--allow-net` fail loudly
 * instead of relying on that alone. A URL that is not a URL is not checked: nothing can be sent to it.
 *
 * @param named The destinations the variables name.
 * @param policy The run's policy.
 * @throws TelemetryRefused naming the first such host.
 * @example
 * ```ts
 * import { TelemetryPolicy } from "../../provevi/mod.ts";
 * import { guardNet, namedDestinations, TelemetryRefused } from "./telemetry_env.ts";
 * import assert from "node:assert/strict";
 *
 * const policy = TelemetryPolicy.denyAll();
 * const named = namedDestinations({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://evil.example" }, policy);
 * // Refused while this process may connect to it (--allow-net); passes under --allow-net=api.openai.com.
 * if ((await Deno.permissions.query({ name: "net", host: "evil.example:443" })).state === "granted") {
 *   await assert.rejects(guardNet(named, policy), TelemetryRefused);
 * }
 * ```
 */
export async function guardNet(named: readonly NamedDestination[], policy: TelemetryPolicy): Promise<void> {
  for (const d of named) {
    let url: URL;
    try {
      url = new URL(d.url);
    } catch {
      continue;
    }
    const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
    if (hostname === "" || policy.hostAllowed(url.hostname)) continue;
    const port = url.port || DEFAULT_PORTS[url.protocol] || "";
    const host = port ? `${url.hostname}:${port}` : url.hostname;
    const status = await Deno.permissions.query({ name: "net", host });
    if (status.state === "granted") throw new TelemetryRefused(d.variable, host);
  }
}

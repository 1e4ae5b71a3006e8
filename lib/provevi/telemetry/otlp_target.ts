/**
 * Where provrun's OpenTelemetry exporter sends traces, read from the variables as the OpenTelemetry
 * specification says (provevi-reference.txt, "otlp_traces_target").
 * @module
 */
import { ProveviError } from "../evidence/errors.ts";

/** The OTLP protocols. */
export type OtlpProtocol = "http/protobuf" | "http/json" | "grpc";

const PROTOCOLS: readonly OtlpProtocol[] = ["http/protobuf", "http/json", "grpc"];

/** `OTEL_TRACES_EXPORTER` names of OTLP exporters, and the protocol each one speaks. */
const EXPORTERS: Readonly<Record<string, OtlpProtocol | null>> = {
  otlp: null,
  otlp_proto_http: "http/protobuf",
  otlp_proto_grpc: "grpc",
  otlp_json_http: "http/json",
  otlp_http_json: "http/json",
  otlp_grpc: "grpc",
};

/** A protocol and an address for traces. */
export interface OtlpTarget {
  /** The protocol. */
  protocol: OtlpProtocol;
  /** The traces URL, as the variables give it. */
  url: string;
}

/** Variables, as `Deno.env.toObject()` gives them. */
export type Environ = Readonly<Record<string, string | undefined>>;

function read(environ: Environ, name: string): string | null {
  const value = environ[name];
  return value === undefined || value.trim() === "" ? null : value.trim();
}

/**
 * The protocol and the address to which provrun's OTLP exporter sends traces, or `null` when neither endpoint
 * variable is set (provrun then makes no OTLP exporter; a library left to itself would send to
 * localhost:4318). `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` wins, as it is; otherwise
 * `OTEL_EXPORTER_OTLP_ENDPOINT`, with `/v1/traces` added over HTTP. The protocol comes from
 * `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, then `OTEL_EXPORTER_OTLP_PROTOCOL`, then `OTEL_TRACES_EXPORTER`, and is
 * `http/protobuf` when none is set. A variable that is set but empty counts as not set. An
 * `OTEL_TRACES_EXPORTER` that names no OTLP exporter (such as `none` or `console`) gives `null`, and so does
 * `OTEL_SDK_DISABLED=true`, whatever the protocol variables say: the operator turned traces off.
 *
 * The URL is given as the variables write it; match it with `policy.matchDestination("otlp", url)` before
 * sending anything.
 *
 * @param environ The variables.
 * @returns The target, or `null`.
 * @throws ProveviError when a protocol variable names no OTLP protocol.
 * @example
 * ```ts
 * import { otlpTracesTarget } from "./otlp_target.ts";
 * otlpTracesTarget({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://OTEL.example.com:443/" });
 * // { protocol: "http/protobuf", url: "https://OTEL.example.com:443/v1/traces" }
 * ```
 */
export function otlpTracesTarget(environ: Environ): OtlpTarget | null {
  if (typeof environ !== "object" || environ === null) throw new TypeError("environ must be an object");
  // OTEL_SDK_DISABLED and an exporter list with no OTLP exporter turn traces off whatever the protocol says.
  if (read(environ, "OTEL_SDK_DISABLED")?.toLowerCase() === "true") return null;
  let exported: OtlpProtocol | null = null;
  const exporters = read(environ, "OTEL_TRACES_EXPORTER");
  if (exporters !== null) {
    const names = exporters.split(",").map((s) => s.trim().toLowerCase()).filter((s) => s !== "");
    const otlp = names.find((n) => n in EXPORTERS);
    if (otlp === undefined) return null;
    exported = EXPORTERS[otlp] ?? null;
  }
  let protocol: OtlpProtocol = "http/protobuf";
  const named = read(environ, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") !== null
    ? "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
    : read(environ, "OTEL_EXPORTER_OTLP_PROTOCOL") !== null
    ? "OTEL_EXPORTER_OTLP_PROTOCOL"
    : null;
  if (named !== null) {
    const value = read(environ, named)!.toLowerCase();
    if (!(PROTOCOLS as readonly string[]).includes(value)) {
      throw new ProveviError(`${named} is "${value}"; set it to one of ${PROTOCOLS.join(", ")}`);
    }
    protocol = value as OtlpProtocol;
  } else if (exported !== null) protocol = exported;
  const traces = read(environ, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  if (traces !== null) return { protocol, url: traces };
  const base = read(environ, "OTEL_EXPORTER_OTLP_ENDPOINT");
  if (base === null) return null;
  if (protocol === "grpc") return { protocol, url: base };
  return { protocol, url: base.endsWith("/") ? `${base}v1/traces` : `${base}/v1/traces` };
}

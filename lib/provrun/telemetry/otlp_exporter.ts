/**
 * The OTLP span exporter of a run, over HTTP (protobuf or JSON) or gRPC: OpenTelemetry's own export delegate
 * (its queue, retries over HTTP, and time limit) over its HTTP transport or `otlp_grpc.ts`, with two changes.
 * Its headers and time limit are the run's (`OTEL_EXPORTER_OTLP_TRACES_HEADERS`, else
 * `OTEL_EXPORTER_OTLP_HEADERS`, sent as metadata over gRPC; `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`, else
 * `OTEL_EXPORTER_OTLP_TIMEOUT`, in milliseconds; from the variables the run was given), and an attribute that
 * the GenAI conventions type as double goes as a double even when its value is whole: OpenTelemetry's
 * serializer writes every whole number as an integer, so a temperature of 0 would reach a backend as the
 * integer 0.
 * @module
 */
import type { SpanExporter } from "@opentelemetry/sdk-trace-base";
import {
  createOtlpNetworkExportDelegate,
  ExporterMetrics,
  getSharedConfigurationDefaults,
  mergeOtlpSharedConfigurationWithDefaults,
  OTLPExporterBase,
} from "@opentelemetry/otlp-exporter-base";
import {
  convertLegacyHttpOptions,
  createOtlpHttpExportDelegate,
} from "@opentelemetry/otlp-exporter-base/node-http";
import {
  type ISerializer,
  JsonTraceSerializer,
  ProtobufTraceSerializer,
  TraceExporterMetricsHelper,
} from "@opentelemetry/otlp-transformer";
import { DOUBLE_KEYS, type Environ } from "../../provevi/telemetry/mod.ts";
import { OTLP_TRACE_REQUEST } from "../../provevi/telemetry/otlp_proto.ts";
import { GrpcTraceTransport } from "./otlp_grpc.ts";

/** Options of {@linkcode otlpExporter}. */
export interface OtlpExporterOptions {
  /** The traces URL. */
  url: string;
  /** `http/json`, `http/protobuf` or `grpc` (where `url` is the collector's `http://` or `https://` address). */
  protocol: "http/json" | "http/protobuf" | "grpc";
  /** The run's variables, for the headers. */
  environ: Environ;
  /** How long one export may take, unless the run's variables say otherwise. */
  timeoutMillis: number;
  /** The headers to send instead of those of the OTLP variables (Logfire's `Authorization`). */
  headers?: Record<string, string>;
}

/**
 * The headers an OTLP variable gives (`key=value,key2=value2`, each part URL-decoded), as the OpenTelemetry
 * specification reads them; a part without `=` is left out.
 *
 * @example
 * ```ts
 * import { otlpHeaders } from "./otlp_exporter.ts";
 * otlpHeaders("x-mlflow-experiment-id=7,api-key=a%3Db"); // { "x-mlflow-experiment-id": "7", "api-key": "a=b" }
 * ```
 */
export function otlpHeaders(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (text ?? "").split(",")) {
    const i = part.indexOf("=");
    if (i <= 0) continue;
    try {
      const key = decodeURIComponent(part.slice(0, i).trim());
      if (key !== "" && key !== "__proto__") out[key] = decodeURIComponent(part.slice(i + 1).trim());
    } catch { /* a part that is not URL-encoded right names no header */ }
  }
  return out;
}

type Value = { [key: string]: unknown };

/** A whole number as a number, from a number or a protobuf Long. */
const wholeNumber = (v: unknown): number =>
  typeof v === "object" && v !== null && "toNumber" in v
    ? (v as { toNumber(): number }).toNumber()
    : Number(v);

/**
 * Makes each double key's whole value a double, in place, in a request as JSON (`intValue`) or as the decoded
 * protobuf message (`int_value`, which is re-encoded as it was decoded: a fixed64 time stays a Long).
 */
function doubles(request: Value, names: { int: string; double: string }): boolean {
  let changed = false;
  const fix = (attributes: unknown) => {
    for (const kv of Array.isArray(attributes) ? attributes as Value[] : []) {
      const value = kv.value as Value | undefined;
      if (!value || !DOUBLE_KEYS.has(kv.key as string) || !Object.hasOwn(value, names.int)) continue;
      value[names.double] = wholeNumber(value[names.int]);
      delete value[names.int];
      changed = true;
    }
  };
  for (const rs of (request.resourceSpans ?? request.resource_spans ?? []) as Value[]) {
    for (const ss of (rs.scopeSpans ?? rs.scope_spans ?? []) as Value[]) {
      for (const span of (ss.spans ?? []) as Value[]) fix(span.attributes);
    }
  }
  return changed;
}

/** A serializer that writes the double keys as doubles. */
function withDoubles<R>(inner: ISerializer<unknown, R>, json: boolean): ISerializer<unknown, R> {
  return {
    serializeRequest(spans) {
      const body = inner.serializeRequest(spans);
      if (body === undefined) return body;
      if (json) {
        const request = JSON.parse(new TextDecoder().decode(body)) as Value;
        return doubles(request, { int: "intValue", double: "doubleValue" })
          ? new TextEncoder().encode(JSON.stringify(request))
          : body;
      }
      const request = OTLP_TRACE_REQUEST.decode(body);
      if (!doubles(request as unknown as Value, { int: "int_value", double: "double_value" })) return body;
      return OTLP_TRACE_REQUEST.encode(request).finish();
    },
    deserializeResponse: (data) => inner.deserializeResponse(data),
  };
}

/** The gRPC exporter: OpenTelemetry's export delegate over the gRPC transport, the run's headers as metadata. */
function grpcExporter(
  url: string,
  options: { headers: Record<string, string>; timeoutMillis: number },
): SpanExporter {
  const config = mergeOtlpSharedConfigurationWithDefaults(
    { timeoutMillis: options.timeoutMillis },
    {},
    getSharedConfigurationDefaults(),
  );
  const metrics = new ExporterMetrics({
    componentType: "otlp_grpc_span_exporter",
    metricsHelper: TraceExporterMetricsHelper as never,
    url,
    meterProvider: undefined, // no meter: the run's exporter reports to the run, as telemetry problems
    responseAttributesFromError: () => ({}),
  });
  const delegate = createOtlpNetworkExportDelegate(
    config,
    withDoubles(ProtobufTraceSerializer as ISerializer<unknown, unknown>, false),
    metrics,
    new GrpcTraceTransport(url, options.headers),
  );
  return new OTLPExporterBase(delegate) as unknown as SpanExporter;
}

/**
 * The run's OTLP span exporter.
 *
 * @param options The URL, the protocol, the run's variables and the time limit.
 * @returns A span exporter, for a batch span processor.
 * @example
 * ```ts
 * import { otlpExporter } from "./otlp_exporter.ts";
 * const exporter = otlpExporter({
 *   url: "http://127.0.0.1:4318/v1/traces",
 *   protocol: "http/protobuf",
 *   environ: {},
 *   timeoutMillis: 5000,
 * });
 * await exporter.shutdown();
 * ```
 */
export function otlpExporter(options: OtlpExporterOptions): SpanExporter {
  const json = options.protocol === "http/json";
  const { environ } = options;
  const headers = options.headers ?? otlpHeaders(
    environ.OTEL_EXPORTER_OTLP_TRACES_HEADERS ?? environ.OTEL_EXPORTER_OTLP_HEADERS,
  );
  const timeout = Number(environ.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT ?? environ.OTEL_EXPORTER_OTLP_TIMEOUT);
  const timeoutMillis = Number.isSafeInteger(timeout) && timeout > 0 ? timeout : options.timeoutMillis;
  if (options.protocol === "grpc") return grpcExporter(options.url, { headers, timeoutMillis });
  const config = convertLegacyHttpOptions(
    { url: options.url, timeoutMillis, headers },
    "TRACES",
    "v1/traces",
    { "Content-Type": json ? "application/json" : "application/x-protobuf" },
  );
  const serializer = withDoubles(
    (json ? JsonTraceSerializer : ProtobufTraceSerializer) as ISerializer<unknown, unknown>,
    json,
  );
  const delegate = createOtlpHttpExportDelegate(
    config,
    serializer,
    json ? "otlp_http_json_span_exporter" : "otlp_http_span_exporter",
    TraceExporterMetricsHelper as never,
    undefined,
  );
  return new OTLPExporterBase(delegate) as unknown as SpanExporter;
}

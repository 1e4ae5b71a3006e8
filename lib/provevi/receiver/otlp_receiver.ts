/**
 * An OTLP/HTTP trace receiver: decodes `ExportTraceServiceRequest` protobuf bodies into plain spans. The schema is
 * the one in `telemetry/otlp_proto.ts`.
 *
 * The tests use it to check what a run's exporter really sends; `receiver()` (run_receiver.ts) and `prove serve`
 * build on its decoder.
 * @module
 */
import { OTLP_TRACE_REQUEST, OTLP_TRACE_RESPONSE } from "../telemetry/otlp_proto.ts";

const REQUEST = OTLP_TRACE_REQUEST;
const RESPONSE = OTLP_TRACE_RESPONSE;

/** An attribute value as OTLP carries it: a text, number, yes or no, list, mapping or bytes. */
export type OtlpValue = string | number | boolean | Uint8Array | null | OtlpValue[] | {
  [key: string]: OtlpValue;
};

/** One span as a receiver decoded it. */
export interface ReceivedSpan {
  /** Lowercase hex, 32 characters. */
  traceId: string;
  /** Lowercase hex, 16 characters. */
  spanId: string;
  /** Lowercase hex, or `null` for a root span. */
  parentSpanId: string | null;
  name: string;
  /** The OTLP span kind number (1 internal, 2 server, 3 client, …). */
  kind: number;
  /** Nanoseconds since the epoch, as a decimal text (it does not fit a number). */
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Record<string, OtlpValue>;
  events: { name: string; timeUnixNano: string; attributes: Record<string, OtlpValue> }[];
  links: { traceId: string; spanId: string; attributes: Record<string, OtlpValue> }[];
  /** 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string };
  /** The instrumentation scope that made the span. */
  scope: { name: string; version: string };
  /** The attributes of the resource that sent the span. */
  resource: Record<string, OtlpValue>;
}

interface KeyValueMessage {
  key?: string;
  value?: AnyValueMessage;
}
interface AnyValueMessage {
  string_value?: string;
  bool_value?: boolean;
  int_value?: string;
  double_value?: number;
  array_value?: { values?: AnyValueMessage[] };
  kvlist_value?: { values?: KeyValueMessage[] };
  bytes_value?: Uint8Array;
}

const hex = (bytes: Uint8Array | undefined): string =>
  bytes ? Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("") : "";

function value(v: AnyValueMessage | undefined): OtlpValue {
  if (v === undefined) return null;
  if (v.string_value !== undefined) return v.string_value;
  if (v.bool_value !== undefined) return v.bool_value;
  if (v.int_value !== undefined) {
    const n = Number(v.int_value);
    return Number.isSafeInteger(n) ? n : v.int_value;
  }
  if (v.double_value !== undefined) return v.double_value;
  if (v.array_value !== undefined) return (v.array_value.values ?? []).map(value);
  if (v.kvlist_value !== undefined) return attributes(v.kvlist_value.values);
  if (v.bytes_value !== undefined) return v.bytes_value;
  return null;
}

function attributes(list: KeyValueMessage[] | undefined): Record<string, OtlpValue> {
  const out: Record<string, OtlpValue> = {};
  for (const kv of list ?? []) {
    Object.defineProperty(out, kv.key ?? "", {
      value: value(kv.value),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/**
 * Decodes the body of an OTLP/HTTP protobuf trace export (`ExportTraceServiceRequest`) into spans.
 *
 * @param body The request's bytes.
 * @returns The spans, in the order of the request.
 * @throws Error from protobufjs when the bytes are not such a message.
 * @example
 * ```ts
 * import { decodeTraceRequest } from "./otlp_receiver.ts";
 * decodeTraceRequest(new Uint8Array()); // [] (an empty request)
 * ```
 */
export function decodeTraceRequest(body: Uint8Array): ReceivedSpan[] {
  const message = REQUEST.toObject(REQUEST.decode(body), { longs: String, arrays: true, defaults: false });
  const spans: ReceivedSpan[] = [];
  // deno-lint-ignore no-explicit-any
  for (const rs of (message.resource_spans ?? []) as any[]) {
    const resource = attributes(rs.resource?.attributes);
    // deno-lint-ignore no-explicit-any
    for (const ss of (rs.scope_spans ?? []) as any[]) {
      const scope = { name: ss.scope?.name ?? "", version: ss.scope?.version ?? "" };
      // deno-lint-ignore no-explicit-any
      for (const s of (ss.spans ?? []) as any[]) {
        const parent = hex(s.parent_span_id);
        spans.push({
          traceId: hex(s.trace_id),
          spanId: hex(s.span_id),
          parentSpanId: parent === "" ? null : parent,
          name: s.name ?? "",
          kind: s.kind ?? 0,
          startTimeUnixNano: s.start_time_unix_nano ?? "0",
          endTimeUnixNano: s.end_time_unix_nano ?? "0",
          attributes: attributes(s.attributes),
          // deno-lint-ignore no-explicit-any
          events: (s.events ?? []).map((e: any) => ({
            name: e.name ?? "",
            timeUnixNano: e.time_unix_nano ?? "0",
            attributes: attributes(e.attributes),
          })),
          // deno-lint-ignore no-explicit-any
          links: (s.links ?? []).map((l: any) => ({
            traceId: hex(l.trace_id),
            spanId: hex(l.span_id),
            attributes: attributes(l.attributes),
          })),
          status: { code: s.status?.code ?? 0, message: s.status?.message ?? "" },
          scope,
          resource,
        });
      }
    }
  }
  return spans;
}

/** Options of {@linkcode OtlpReceiver.start}. */
export interface OtlpReceiverOptions {
  /** The address to listen on; `127.0.0.1` by default. */
  hostname?: string;
  /** The port; a free one by default. */
  port?: number;
  /** Called with the spans of each request, after they are kept. */
  onSpans?: (spans: ReceivedSpan[]) => void;
}

/**
 * An OTLP/HTTP receiver of traces (`POST /v1/traces`, `application/x-protobuf`) on 127.0.0.1 at a free port. It
 * keeps every span it decodes, and counts every request, decodable or not, so a test can tell that nothing at
 * all arrived.
 *
 * @example
 * ```ts
 * import { OtlpReceiver } from "./otlp_receiver.ts";
 * await using receiver = await OtlpReceiver.start();
 * console.log(receiver.tracesUrl); // http://127.0.0.1:PORT/v1/traces
 * // … send spans there, then read receiver.spans
 * ```
 */
export class OtlpReceiver implements AsyncDisposable {
  /** The spans received, in order. */
  readonly spans: ReceivedSpan[] = [];
  /** Every request that reached the receiver, with its path and content type. */
  readonly requests: { path: string; contentType: string | null }[] = [];
  readonly #server: Deno.HttpServer<Deno.NetAddr>;
  readonly #onSpans: ((spans: ReceivedSpan[]) => void) | null;

  private constructor(server: Deno.HttpServer<Deno.NetAddr>, onSpans: ((s: ReceivedSpan[]) => void) | null) {
    this.#server = server;
    this.#onSpans = onSpans;
  }

  /**
   * Starts a receiver.
   *
   * @param options The address, the port and a callback.
   * @returns The receiver, listening.
   */
  static start(options: OtlpReceiverOptions = {}): Promise<OtlpReceiver> {
    // Deno.serve binds before it returns, so the address is known at once; onListen only silences the log.
    const server: Deno.HttpServer<Deno.NetAddr> = Deno.serve({
      hostname: options.hostname ?? "127.0.0.1",
      port: options.port ?? 0,
      onListen: () => {},
    }, (request): Promise<Response> => receiver.#handle(request));
    const receiver = new OtlpReceiver(server, options.onSpans ?? null);
    return Promise.resolve(receiver);
  }

  /** The base URL, such as `http://127.0.0.1:43210`. */
  get url(): string {
    const { hostname, port } = this.#server.addr;
    return `http://${hostname}:${port}`;
  }

  /** The traces URL, `<url>/v1/traces`. */
  get tracesUrl(): string {
    return `${this.url}/v1/traces`;
  }

  /** The port it listens on. */
  get port(): number {
    return this.#server.addr.port;
  }

  async #handle(request: Request): Promise<Response> {
    const path = new URL(request.url).pathname;
    const contentType = request.headers.get("content-type");
    this.requests.push({ path, contentType });
    const body = new Uint8Array(await request.arrayBuffer());
    if (request.method !== "POST" || path !== "/v1/traces") {
      return new Response("not found: POST /v1/traces", { status: 404 });
    }
    if (!contentType?.startsWith("application/x-protobuf")) {
      return new Response("send application/x-protobuf", { status: 415 });
    }
    let spans: ReceivedSpan[];
    try {
      spans = decodeTraceRequest(body);
    } catch (error) {
      return new Response(`not an ExportTraceServiceRequest: ${(error as Error).message}`, { status: 400 });
    }
    this.spans.push(...spans);
    this.#onSpans?.(spans);
    return new Response(new Uint8Array(RESPONSE.encode(RESPONSE.create({})).finish()), {
      headers: { "content-type": "application/x-protobuf" },
    });
  }

  /** Stops listening. */
  async close(): Promise<void> {
    await this.#server.shutdown();
  }

  /** Stops listening (`await using`). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

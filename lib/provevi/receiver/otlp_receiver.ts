/**
 * An OTLP/HTTP trace receiver: decodes `ExportTraceServiceRequest` protobuf bodies into plain spans. The schema is
 * the one in `telemetry/otlp_proto.ts`.
 *
 * The tests use it to check what a run's exporter really sends; `receiver()` (run_receiver.ts) and `prove serve`
 * build on its decoder.
 * @module
 */
import { serveDoor } from "../guard/mod.ts";
import { OTLP_TRACE_RESPONSE } from "../telemetry/otlp_proto.ts";
import { decodeTraceWire, type ReceivedSpan } from "./otlp_wire.ts";

const RESPONSE = OTLP_TRACE_RESPONSE;

export type { OtlpValue, ReceivedSpan } from "./otlp_wire.ts";

/**
 * Decodes the body of an OTLP/HTTP protobuf trace export (`ExportTraceServiceRequest`) into spans.
 *
 * @param body The request's bytes.
 * @returns The spans, in the order of the request.
 * @throws Error when the bytes are not such a message.
 * @example
 * ```ts
 * import { decodeTraceRequest } from "./otlp_receiver.ts";
 * decodeTraceRequest(new Uint8Array()); // [] (an empty request)
 * ```
 */
export function decodeTraceRequest(body: Uint8Array): ReceivedSpan[] {
  return decodeTraceWire(body);
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
    // the door binds before it returns, so the address is known at once
    const server: Deno.HttpServer<Deno.NetAddr> = serveDoor({
      hostname: options.hostname ?? "127.0.0.1",
      port: options.port ?? 0,
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

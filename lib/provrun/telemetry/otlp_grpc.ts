/**
 * OTLP over gRPC: the unary call `TraceService/Export` on `node:http2`, as an OpenTelemetry exporter transport
 * (the OTLP export delegate of `@opentelemetry/otlp-exporter-base` keeps its queue and time limit).
 *
 * Why not `@opentelemetry/exporter-trace-otlp-grpc`: it works under Deno 2.9 (checked against Phoenix), but it
 * brings `@grpc/grpc-js`, whose `@grpc/proto-loader` pulls `protobufjs` 7 with an install script; Deno, with no
 * `node_modules` folder, then prints a warning box the first time each project folder runs a command, which every
 * command of the toolkit would print to a new user. A gRPC unary call is small and specified (a 5-byte frame, a
 * `grpc-status` trailer), and the message is the same protobuf as over HTTP, so it is written here.
 * @module
 */
import { connect, type IncomingHttpHeaders } from "node:http2";
import type { ExportResponse, IExporterTransport } from "@opentelemetry/otlp-exporter-base";

/** The method of the OTLP trace service. */
const EXPORT_PATH = "/opentelemetry.proto.collector.trace.v1.TraceService/Export";

/** The gRPC status names, for messages. */
const STATUS_NAMES = [
  "OK",
  "CANCELLED",
  "UNKNOWN",
  "INVALID_ARGUMENT",
  "DEADLINE_EXCEEDED",
  "NOT_FOUND",
  "ALREADY_EXISTS",
  "PERMISSION_DENIED",
  "RESOURCE_EXHAUSTED",
  "FAILED_PRECONDITION",
  "ABORTED",
  "OUT_OF_RANGE",
  "UNIMPLEMENTED",
  "INTERNAL",
  "UNAVAILABLE",
  "DATA_LOSS",
  "UNAUTHENTICATED",
];

/** A gRPC status code and message as one line. */
function statusText(code: number, message: string): string {
  const name = STATUS_NAMES[code] ?? "UNKNOWN";
  return `gRPC status ${code} ${name}${message ? `: ${decodeURIComponent(message)}` : ""}`;
}

/** A protobuf message in a gRPC frame: not compressed, its length in 4 bytes, big-endian. */
function framed(message: Uint8Array): Uint8Array {
  const frame = new Uint8Array(5 + message.length);
  new DataView(frame.buffer).setUint32(1, message.length);
  frame.set(message, 5);
  return frame;
}

/** The `grpc-status` and `grpc-message` of headers or trailers, or `null` when they hold none. */
function grpcStatus(headers: IncomingHttpHeaders): { code: number; message: string } | null {
  const code = headers["grpc-status"];
  if (code === undefined) return null;
  const message = headers["grpc-message"];
  return { code: Number(code), message: typeof message === "string" ? message : "" };
}

/**
 * An OTLP/gRPC transport to one collector: `http://` for plain text (h2c), `https://` for TLS. One HTTP/2
 * session, opened on the first export and again after it closes; headers go as metadata.
 *
 * @example
 * ```ts
 * import { GrpcTraceTransport } from "./otlp_grpc.ts";
 * const transport = new GrpcTraceTransport("http://127.0.0.1:4317", { "x-team": "q" });
 * transport.shutdown();
 * ```
 */
export class GrpcTraceTransport implements IExporterTransport {
  readonly #origin: string;
  readonly #metadata: Record<string, string>;
  #session: ReturnType<typeof connect> | null = null;

  /**
   * @param url The collector's address (its path is not used: the method names the call).
   * @param metadata The headers to send with each call.
   * @throws TypeError when the URL is not an http or https URL.
   */
  constructor(url: string, metadata: Record<string, string>) {
    const parsed = new URL(url);
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
      throw new TypeError(`an OTLP/gRPC address is http:// or https://, not ${parsed.protocol}`);
    }
    this.#origin = parsed.origin;
    this.#metadata = Object.fromEntries(Object.entries(metadata).map(([k, v]) => [k.toLowerCase(), v]));
  }

  #open(): ReturnType<typeof connect> {
    const open = this.#session;
    if (open && !open.closed && !open.destroyed) return open;
    const session = connect(this.#origin);
    // a refused connection fails the call that waits on it, which reports it
    session.on("error", () => {});
    this.#session = session;
    return session;
  }

  /** Sends one export request and waits for its status. */
  send(data: Uint8Array, timeoutMillis: number): Promise<ExportResponse> {
    return new Promise((resolve) => {
      let settled = false;
      const done = (response: ExportResponse) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(response);
      };
      const fail = (why: string) => done({ status: "failure", error: new Error(why) });
      const timer = setTimeout(() => {
        call.close();
        fail(`no answer within ${timeoutMillis} ms`);
      }, timeoutMillis);
      let call: ReturnType<ReturnType<typeof connect>["request"]>;
      try {
        call = this.#open().request({
          ":method": "POST",
          ":path": EXPORT_PATH,
          "content-type": "application/grpc",
          te: "trailers",
          "grpc-timeout": `${Math.max(1, Math.ceil(timeoutMillis))}m`,
          ...this.#metadata,
        });
      } catch (error) {
        return fail(`no gRPC call: ${(error as Error).message}`);
      }
      let status: { code: number; message: string } | null = null;
      call.on("response", (headers) => {
        if (headers[":status"] !== 200) {
          return fail(`HTTP status ${headers[":status"]} from the gRPC endpoint`);
        }
        status = grpcStatus(headers); // a call that fails at once answers with headers only
      });
      call.on("trailers", (trailers) => status = grpcStatus(trailers) ?? status);
      call.on("data", () => {}); // the response holds at most a partial success, which changes nothing here
      call.on("end", () => {
        if (status === null) fail("the gRPC endpoint closed the call without a status");
        else if (status.code === 0) done({ status: "success" });
        else fail(statusText(status.code, status.message));
      });
      call.on("error", (error: Error) => fail(`no gRPC call: ${error.message}`));
      call.end(framed(data));
    });
  }

  /** Closes the session. */
  shutdown(): void {
    this.#session?.close();
    this.#session = null;
  }
}

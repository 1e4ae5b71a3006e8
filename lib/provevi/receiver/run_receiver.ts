/**
 * `receiver(store, run)`: the span receiver of one open run, a scoped resource (`await using`) that listens on
 * 127.0.0.1 at a free port and takes OTLP/HTTP traces (`POST /v1/traces`, protobuf or JSON, gzip or not) for
 * that run only. An agent program in another process (Claude Code, Codex) exports its spans here; each becomes
 * evidence of the run because it reached the run's address. It takes nothing after the run is sealed, and it
 * sends nothing anywhere: what of these spans may go on to a destination is the telemetry policy's to decide.
 * @module
 */
import { type IntakeOptions, type ReceiverRun, type SpanRows, takeTraces } from "./span_intake.ts";

/** Options of {@linkcode receiver}. */
export interface ReceiverOptions extends IntakeOptions {
  /** The port; a free one by default. */
  port?: number;
}

/**
 * A listening span receiver of one run.
 */
export interface RunReceiver extends AsyncDisposable {
  /** `http://127.0.0.1:<port>`: the base an OTLP exporter takes as `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  readonly url: string;
  /** `<url>/v1/traces`: the traces URL (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`). */
  readonly tracesUrl: string;
  /** The host and port, `127.0.0.1:<port>`. */
  readonly host: string;
  /** The spans taken so far. */
  readonly spans: number;
  /** The requests refused so far (400, 409, 413, 415). */
  readonly refused: number;
  /** Stops listening, after the requests under way are answered. */
  close(): Promise<void>;
}

/**
 * Starts the span receiver of one open run.
 *
 * @param store The store whose span rows take the spans (its `addSpans`).
 * @param run The run: its recorder (`runId`, `sealed`, `record`, `payload`).
 * @param options The port and the body size limit.
 * @returns The receiver, listening.
 * @example
 * ```ts
 * import { receiver } from "./run_receiver.ts";
 * import type { ReceiverRun } from "./span_intake.ts";
 * declare const run: ReceiverRun;
 * await using spans = receiver({}, run);
 * // OTEL_EXPORTER_OTLP_ENDPOINT=spans.url for the program the run starts
 * ```
 */
export function receiver(store: SpanRows, run: ReceiverRun, options: ReceiverOptions = {}): RunReceiver {
  let spans = 0;
  let refused = 0;
  const onResult: IntakeOptions["onResult"] = (r) => {
    if (r.status === 200) spans += r.spans;
    else refused++;
    options.onResult?.(r);
  };
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: options.port ?? 0, onListen: () => {} },
    (request) => {
      const path = new URL(request.url).pathname;
      if (path !== "/v1/traces") {
        return new Response(`not found: the receiver takes spans at POST /v1/traces`, { status: 404 });
      }
      return takeTraces(request, { run, rows: store }, { ...options, onResult });
    },
  );
  const host = `127.0.0.1:${server.addr.port}`;
  let closed: Promise<void> | null = null;
  const close = () => closed ??= server.shutdown();
  return {
    url: `http://${host}`,
    tracesUrl: `http://${host}/v1/traces`,
    host,
    get spans() {
      return spans;
    },
    get refused() {
      return refused;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

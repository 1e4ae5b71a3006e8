/**
 * `receiver(store, run)`: the span receiver of one open run, a scoped resource (`await using`) that listens on
 * 127.0.0.1 at a free port and takes OTLP/HTTP traces (`POST /v1/traces`, protobuf or JSON, gzip or not) for
 * that run only. An agent program in another process (Claude Code, Codex) exports its spans here; each becomes
 * evidence of the run because it reached the run's address with the run's key. It takes nothing after the run is
 * sealed, and it sends nothing anywhere: what of these spans may go on to a destination is the telemetry
 * policy's to decide.
 *
 * Only the run's program may send: every request needs the receiver's random key (`Authorization: Bearer
 * <key>`, which the program gets in its OTLP headers, never in a URL), a `Host` of 127.0.0.1 (against DNS
 * rebinding) and no `Origin` of a web page; anything else is refused (401, 421, 403) before its body is read,
 * and counted (`strangers`). What the run may send in all is bounded as at `prove serve` (`RunBudget`).
 * @module
 */
import { crossSite, localHosts, refusedHost } from "../guard/local_request.ts";
import { bearerOf, newSecret, sameSecret, secretDigest } from "../guard/local_secret.ts";
import { shutdownWithin } from "../guard/local_server.ts";
import { type DoorLimits, dropBody, serveDoor } from "../guard/mod.ts";
import { RunBudget, type RunLimits } from "./run_budget.ts";
import { type IntakeOptions, otlpError, type ReceiverRun, type SpanRows, takeTraces } from "./span_intake.ts";

/** Options of {@linkcode receiver}. */
export interface ReceiverOptions extends IntakeOptions {
  /** The port; a free one by default. */
  port?: number;
  /** What the run may send in all. */
  limits?: RunLimits;
  /** The limits of its door (`serveDoor`): slow heads and bodies, idle connections, how many at once. */
  doorLimits?: DoorLimits;
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
  /**
   * The headers the program sends with each request (`authorization: Bearer <key>`): for its OTLP exporter's
   * headers (`OTEL_EXPORTER_OTLP_HEADERS`, or its config). Keep them out of the record and of any URL.
   */
  readonly headers: Readonly<Record<string, string>>;
  /** The spans taken so far. */
  readonly spans: number;
  /** The requests with the key refused so far (400, 409, 413, 415). */
  readonly refused: number;
  /** The requests refused without the key, or from a web page, or for another host (401, 403, 421). */
  readonly strangers: number;
  /** Stops listening, after the requests under way are answered (within 2 s: a stranger cannot hold it open). */
  close(): Promise<void>;
}

/**
 * Why a request is not from the run's program, as a status and one line, or null when it is.
 *
 * @param request The request.
 * @param door The accepted hosts and the digest of the key.
 */
function stranger(
  request: Request,
  door: { hosts: readonly string[]; key: Uint8Array },
): { status: number; message: string } | null {
  const host = refusedHost(request, door.hosts);
  if (host !== null) {
    return {
      status: 421,
      message: `refused the Host "${host.slice(0, 100)}": send spans to http://${door.hosts[0]}`,
    };
  }
  const site = crossSite(request, door.hosts);
  if (site !== null) return { status: 403, message: `refused a request from a web page (${site})` };
  if (!sameSecret(bearerOf(request), door.key)) {
    return {
      status: 401,
      message: "send the run's key as Authorization: Bearer <key> (the receiver's headers)",
    };
  }
  return null;
}

/**
 * Starts the span receiver of one open run.
 *
 * @param store The store whose span rows take the spans (its `addSpans`).
 * @param run The run: its recorder (`runId`, `sealed`, `record`, `payload`).
 * @param options The port, the body size limit, the run's limits.
 * @returns The receiver, listening.
 * @throws RangeError when a limit is not a whole number above zero.
 * @example
 * ```ts
 * import { receiver } from "./run_receiver.ts";
 * import type { ReceiverRun } from "./span_intake.ts";
 * declare const run: ReceiverRun;
 * await using spans = receiver({}, run);
 * // OTEL_EXPORTER_OTLP_ENDPOINT=spans.url and the headers spans.headers, for the program the run starts
 * ```
 */
export function receiver(store: SpanRows, run: ReceiverRun, options: ReceiverOptions = {}): RunReceiver {
  let spans = 0;
  let refused = 0;
  let strangers = 0;
  const key = newSecret();
  const budget = new RunBudget(options.limits ?? {});
  const intake: IntakeOptions = {
    ...options,
    onResult: (r) => {
      if (r.status === 200) spans += r.spans;
      else refused++;
      options.onResult?.(r);
    },
  };
  let door: { hosts: string[]; key: Uint8Array } | null = null;
  // a connection the door cuts (a slow head or body, an idle or crowding one) is a stranger's: the run's own
  // exporter sends whole requests at once
  const server = serveDoor(
    {
      hostname: "127.0.0.1",
      port: options.port ?? 0,
      ...(options.doorLimits ? { limits: options.doorLimits } : {}),
      onRefusal: () => void strangers++,
      handlerReadsBodies: true,
    },
    (request) => {
      const refusal = stranger(request, door!);
      if (refusal !== null) {
        strangers++;
        void dropBody(request);
        const response = otlpError(
          refusal.status,
          `span receiver: ${refusal.message}`,
          request.headers.get("content-type"),
        );
        if (refusal.status === 401) response.headers.set("www-authenticate", 'Bearer realm="span receiver"');
        return response;
      }
      if (new URL(request.url).pathname !== "/v1/traces") {
        void dropBody(request);
        return new Response(`not found: the receiver takes spans at POST /v1/traces`, { status: 404 });
      }
      return takeTraces(request, { run, rows: store, budget }, intake);
    },
  );
  door = { hosts: localHosts(server.addr.port), key: secretDigest(key) };
  const host = `127.0.0.1:${server.addr.port}`;
  let closed: Promise<void> | null = null;
  // a stranger's request that never ends cannot hold the run at its close
  const close = () => closed ??= shutdownWithin(server).then(() => {});
  return {
    url: `http://${host}`,
    tracesUrl: `http://${host}/v1/traces`,
    host,
    headers: Object.freeze({ authorization: `Bearer ${key}` }),
    get spans() {
      return spans;
    },
    get refused() {
      return refused;
    },
    get strangers() {
      return strangers;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

/**
 * A network door that a slow or greedy client cannot hold: `Deno.serve` with the limits of `door_limits.ts`.
 *
 * `Deno.serve` has no header-read or idle timeout and no cap on connections (denoland/deno#3515), and no hook
 * per connection. So the door accepts connections itself (`Deno.listen`) and hands each to Deno's own HTTP
 * server for one connection (`serveHttpOnConnection`, what `Deno.serve` runs on each connection it accepts),
 * with a signal of its own: aborting it closes that connection at once, whatever it was doing. A clock a second
 * checks every connection against the limits. The HTTP parsing stays Deno's (hyper); the door only counts and
 * times. A Deno without that function gets `Deno.serve` with the limit it can keep inside a request (the body's),
 * and `guarded` says "requests".
 * @module
 */
import { doorLimits, type DoorRefusal, type FullDoorLimits } from "./door_limits.ts";
import { bodyTooSlow, streamedBody, type Watch, watchedAnswer } from "./door_watch.ts";
import {
  bareError,
  busyRequest,
  isLoopback,
  MAX_STREAMS,
  newWatch,
  tell,
  watchedOrNot,
} from "./door_refusal.ts";
import { requestDoor } from "./request_door.ts";

export { requestDoor };
export type { DoorOptions, DoorServer } from "./door_options.ts";
import type { DoorOptions, DoorServer } from "./door_options.ts";

type OnConnection = (
  conn: Deno.Conn,
  signal: AbortSignal,
  handler: Deno.ServeHandler<Deno.NetAddr>,
  onError: (error: unknown) => Response | Promise<Response>,
  onListen: () => void,
) => Deno.HttpServer<Deno.NetAddr>;

interface Connection {
  readonly conn: Deno.Conn;
  readonly remote: string;
  readonly local: boolean;
  readonly control: AbortController;
  /** The requests under way on it, each with its watch and its refusal of a slow body. */
  readonly requests: Map<Watch, () => void>;
  /** Whether it has had a request yet; and since when it has had none under way. */
  served: boolean;
  idleSince: number;
  server: Deno.HttpServer<Deno.NetAddr> | null;
  /** Set when its server finished: aborting it then would throw inside Deno, uncaught (an event listener). */
  ended: boolean;
}

const TICK_MS = 500;
const LINGER_MS = 1000;
const BUSY_TEXT = "the server holds too many connections now: try again in a moment\n";
const BUSY = new TextEncoder().encode(
  "HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\ncontent-type: text/plain; charset=utf-8\r\n" +
    `retry-after: 1\r\ncontent-length: ${BUSY_TEXT.length}\r\n\r\n${BUSY_TEXT}`,
);

function onConnection(): OnConnection | null {
  const deno = Deno as unknown as Record<symbol, Record<string, unknown> | undefined>;
  const internal = (Deno as unknown as { internal?: symbol }).internal;
  const found = internal === undefined ? undefined : deno[internal]?.serveHttpOnConnection;
  return typeof found === "function" ? found as OnConnection : null;
}

/**
 * Serves HTTP on a door with limits: what `Deno.serve` does, and a client that sends its request slowly, keeps a
 * connection idle, stops reading its answer, or opens too many connections is cut off (see `DoorLimits`):
 * with 408 when a request's body is too slow (its head was read), 503 to a connection past the cap, and a closed
 * connection otherwise, each told to `onRefusal`.
 *
 * @param options The address, the port, the limits, the refusal callback.
 * @param handler The handler of each request.
 * @returns The server, listening.
 * @throws Deno.errors.AddrInUse when the port is taken.
 * @throws RangeError for a limit that is not a whole number above zero.
 * @example
 * ```ts
 * import { serveDoor } from "./door_server.ts";
 * await using door = serveDoor({ limits: { headerMs: 5000 } }, () => new Response("ok"));
 * const answer = await fetch(`http://127.0.0.1:${door.addr.port}/`);
 * await answer.text(); // "ok"
 * ```
 */
export function serveDoor(options: DoorOptions, handler: Deno.ServeHandler<Deno.NetAddr>): DoorServer {
  const limits = doorLimits(options.limits);
  const on = onConnection();
  return on === null
    ? requestDoor(options, limits, handler)
    : new ConnectionDoor(options, { limits, on, handler });
}

class ConnectionDoor implements DoorServer {
  readonly guarded = "connections" as const;
  readonly addr: Deno.NetAddr;
  readonly finished: Promise<void>;
  readonly #listener: Deno.TcpListener;
  readonly #open = new Set<Connection>();
  readonly #limits: FullDoorLimits;
  readonly #on: OnConnection;
  readonly #handler: Deno.ServeHandler<Deno.NetAddr>;
  readonly #options: DoorOptions;
  readonly #clock: ReturnType<typeof setInterval>;
  #closing = false;
  #referenced = true;
  /** The requests under way over all its connections. */
  #underWay = 0;

  constructor(
    options: DoorOptions,
    parts: { limits: FullDoorLimits; on: OnConnection; handler: Deno.ServeHandler<Deno.NetAddr> },
  ) {
    this.#options = options;
    this.#limits = parts.limits;
    this.#on = parts.on;
    this.#handler = parts.handler;
    this.#listener = Deno.listen({ hostname: options.hostname ?? "127.0.0.1", port: options.port ?? 0 });
    this.addr = this.#listener.addr;
    this.#clock = setInterval(() => this.#check(Date.now()), TICK_MS);
    Deno.unrefTimer(this.#clock);
    this.finished = this.#accept();
  }

  get connections(): number {
    return this.#open.size;
  }

  async #accept(): Promise<void> {
    while (!this.#closing) {
      let conn: Deno.TcpConn;
      try {
        conn = await this.#listener.accept();
      } catch (error) {
        if (this.#closing || error instanceof Deno.errors.BadResource) break;
        // out of descriptors, or a connection reset before it was taken: wait a moment, keep the door open
        await new Promise((resolve) => setTimeout(resolve, 50));
        continue;
      }
      this.#take(conn);
    }
    clearInterval(this.#clock);
    while (this.#open.size) await Promise.allSettled([...this.#open].map((c) => c.server?.finished));
  }

  #take(conn: Deno.TcpConn): void {
    const remote = conn.remoteAddr.hostname;
    // the machine itself (all of 127.0.0.0/8): every local client shares it, so it has no cap of its own
    const local = isLoopback(remote);
    const crowded = !local &&
      [...this.#open].filter((c) => c.remote === remote).length >= this.#limits.maxPerAddress;
    const full = !crowded && this.#open.size >= this.#limits.maxConnections && !this.#evict();
    if (full || crowded) {
      this.#refused(crowded ? "address" : "connections", 503, remote);
      void conn.write(BUSY).catch(() => {}).finally(() => closeQuietly(conn));
      return;
    }
    const connection: Connection = {
      conn,
      remote,
      local,
      control: new AbortController(),
      requests: new Map(),
      served: false,
      idleSince: Date.now(),
      server: null,
      ended: false,
    };
    this.#open.add(connection);
    const server = this.#on(
      conn,
      connection.control.signal,
      (request, info) => this.#serve(connection, request, info),
      this.#options.onError ?? bareError,
      () => {},
    );
    connection.server = server;
    if (!this.#referenced) server.unref();
    void server.finished.catch(() => {}).finally(() => {
      connection.ended = true;
      this.#open.delete(connection);
    });
  }

  /** Closes the connection that has waited longest for a request, to make room; false when none waits. */
  #evict(): boolean {
    let oldest: Connection | null = null;
    for (const c of this.#open) {
      if (c.requests.size === 0 && (oldest === null || c.idleSince < oldest.idleSince)) oldest = c;
    }
    if (oldest === null) return false;
    this.#close(oldest, oldest.served ? "idle" : "header");
    return true;
  }

  async #serve(connection: Connection, request: Request, info: Deno.ServeHandlerInfo<Deno.NetAddr>) {
    const watch = newWatch("working");
    connection.served = true;
    const busy = connection.requests.size >= MAX_STREAMS
      ? "streams"
      : this.#underWay >= this.#limits.maxRequests
      ? "requests"
      : null;
    if (busy !== null) {
      this.#refused(busy, 503, connection.remote);
      return busyRequest(
        request,
        busy === "streams"
          ? `send at most ${MAX_STREAMS} requests at once on one connection`
          : "the server has too many requests under way now",
      );
    }
    connection.requests.set(watch, () => {});
    this.#underWay += 1;
    void info.completed.catch(() => {}).finally(() => {
      this.#underWay -= 1;
      connection.requests.delete(watch);
      if (connection.requests.size === 0) connection.idleSince = Date.now();
    });
    if (request.body === null || this.#options.watchBodies === false) {
      return this.#answer(watch, await this.#handler(request, info));
    }
    watch.phase = "body";
    const watched = watchedOrNot(request, watch, this.#options);
    const refused = Promise.withResolvers<Response>();
    connection.requests.set(watch, () => {
      watched.stop(new Deno.errors.TimedOut("the request's body came too slowly"));
      refused.resolve(
        new Response(
          `the request's body came too slowly: send it at ${this.#limits.bodyBytesPerSecond} bytes/s`,
          {
            status: 408,
            headers: { connection: "close", "content-type": "text/plain; charset=utf-8" },
          },
        ),
      );
      // a lingering close: closing at once, with the rest of the body unread, sends a reset that may wipe the
      // 408 from the client before it reads it
      void info.completed.catch(() => {}).finally(() => setTimeout(() => cut(connection), LINGER_MS));
    });
    const handled = Promise.resolve(this.#handler(watched.request, info));
    handled.catch(() => {}); // a refused request's handler fails on its body; the 408 is the answer
    return this.#answer(watch, await Promise.race([handled, refused.promise]));
  }

  #answer(watch: Watch, response: Response): Response {
    watch.phase = "answer";
    watch.since = Date.now();
    if (this.#options.watchAnswers === false || !streamedBody(response)) return response;
    return new Response(watchedAnswer(response.body!, watch), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  }

  #check(now: number): void {
    const limits = this.#limits;
    for (const c of this.#open) {
      if (c.requests.size === 0) {
        if (now - c.idleSince > (c.served ? limits.idleMs : limits.headerMs)) {
          this.#close(c, c.served ? "idle" : "header");
        }
        continue;
      }
      for (const [watch, refuse] of c.requests) {
        if (bodyTooSlow(watch, limits, now)) {
          watch.phase = "working";
          this.#refused("body", 408, c.remote);
          refuse();
        } else if (watch.phase === "answer" && watch.stalled > 0 && now - watch.stalled > limits.answerMs) {
          this.#close(c, "answer");
          break;
        }
      }
    }
  }

  #close(connection: Connection, limit: "header" | "idle" | "answer"): void {
    this.#open.delete(connection);
    this.#refused(limit, 0, connection.remote);
    cut(connection);
  }

  #refused(limit: DoorRefusal["limit"], status: DoorRefusal["status"], remote: string): void {
    tell(this.#options.onRefusal, { limit, status, remote }, this.#limits);
  }

  async shutdown(): Promise<void> {
    this.#closing = true;
    closeQuietly(this.#listener);
    await Promise.allSettled([...this.#open].map((c) => c.server?.shutdown()));
    await this.finished;
  }

  ref(): void {
    this.#referenced = true;
    this.#listener.ref();
    for (const c of this.#open) c.server?.ref();
  }

  unref(): void {
    this.#referenced = false;
    this.#listener.unref();
    for (const c of this.#open) c.server?.unref();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.shutdown();
  }
}

/**
 * Closes a connection at once, whatever it was doing. Only from a timer: its server's `finished` settles in the
 * same turn as Deno closes it, so by then `ended` is set.
 */
function cut(connection: Connection): void {
  if (!connection.ended && !connection.control.signal.aborted) connection.control.abort();
}

function closeQuietly(closer: { close(): void }): void {
  try {
    closer.close();
  } catch { /* already closed */ }
}

/**
 * What both forms of a door say when they refuse: the one line a log gives each limit, the 503 of a request
 * past a cap, and the owner's callback told safely. Shared by the door that guards connections
 * (`door_server.ts`) and the one that guards requests only (`request_door.ts`).
 * @module
 */
import type { DoorOptions } from "./door_options.ts";
import type { DoorRefusal, FullDoorLimits } from "./door_limits.ts";
import { type Watch, watchedRequest } from "./door_watch.ts";
import { handedRequest } from "./door_body.ts";

/**
 * Requests under way at once on one connection. HTTP/1.1 has one; HTTP/2 lets a client open 200 streams on a
 * connection, each with a body read ahead and a handler, which multiplied every per-connection bound by 200.
 */
export const MAX_STREAMS = 8;

/** The one line a door's log gives a refusal. */
export function refusalLine(limit: DoorRefusal["limit"], limits: FullDoorLimits, remote: string): string {
  const what = {
    header: `sent no whole request head in ${limits.headerMs} ms`,
    idle: `kept its connection idle past ${limits.idleMs} ms`,
    body:
      `sent its body slower than ${limits.bodyBytesPerSecond} bytes/s after ${limits.bodyFloorMs} ms (408)`,
    answer: `took none of its answer for ${limits.answerMs} ms`,
    connections: `found ${limits.maxConnections} connections open, none idle (503)`,
    address: `already holds ${limits.maxPerAddress} connections (503)`,
    streams: `had ${MAX_STREAMS} requests under way on one connection (503)`,
    requests: `found ${limits.maxRequests} requests under way at the door (503)`,
  }[limit];
  return `closed a connection of ${remote}: it ${what}`;
}

/** Tells the door's owner of a refusal; an owner's callback that throws must not stop the door's clock. */
export function tell(
  onRefusal: DoorOptions["onRefusal"],
  refusal: Omit<DoorRefusal, "message">,
  limits: FullDoorLimits,
): void {
  try {
    onRefusal?.({ ...refusal, message: refusalLine(refusal.limit, limits, refusal.remote) });
  } catch { /* the owner's own failure: the door keeps its limits */ }
}

/**
 * The 503 of a request past a cap of requests under way, its body left unread: `connection: close`, since an
 * HTTP/1.1 connection cannot carry the next request past a body it did not read (HTTP/2 ends the stream only).
 */
export function busyRequest(request: Request, text: string): Response {
  request.body?.cancel().catch(() => {});
  return new Response(`${text}: try again in a moment\n`, {
    status: 503,
    headers: { "retry-after": "1", connection: "close", "content-type": "text/plain; charset=utf-8" },
  });
}

/**
 * The request with its body watched: read by its handler through `bodyReader` with `handlerReadsBodies`, else
 * through the door's stream; or, for a method that a `Request` cannot be made with (CONNECT, TRACE, TRACK), the
 * request itself: its body then counts as arriving at no speed, so a handler that waits for it has the body's
 * floor of time, and is refused with the connection after it.
 */
export function watchedOrNot(
  request: Request,
  watch: Watch,
  options: DoorOptions = {},
): ReturnType<typeof watchedRequest> {
  if (options.handlerReadsBodies) return handedRequest(request, watch);
  try {
    return watchedRequest(request, watch);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    return { request, stop: () => {} };
  }
}

/** A watch of a request just come, in `phase`. */
export function newWatch(phase: Watch["phase"]): Watch {
  return { phase, since: Date.now(), received: 0, waitedMs: 0, waitingSince: 0, stalled: 0 };
}

/** Whether an address is the machine itself (all of 127.0.0.0/8): every local client shares it. */
export function isLoopback(remote: string): boolean {
  return remote.startsWith("127.") || remote === "::1" || remote.startsWith("::ffff:127.");
}

/** The answer to a handler that throws, when the owner gives none. */
export const bareError = (): Response => new Response("Internal Server Error", { status: 500 });

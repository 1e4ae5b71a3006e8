/**
 * The door of a Deno without its per-connection HTTP server (`serveHttpOnConnection`): `Deno.serve`, with every
 * limit that can be kept from inside a request. It cannot see a connection before its first request's head, nor
 * one left idle between requests, so it has no header or idle time and no cap on connections (docs/doors.md says
 * what it lacks); it keeps the body's rate, a stalled answer's time, and caps on requests under way: over the
 * whole door, and from one address other than the machine's own.
 * @module
 */
import type { DoorOptions, DoorServer } from "./door_options.ts";
import type { DoorRefusal, FullDoorLimits } from "./door_limits.ts";
import { bodyTooSlow, streamedBody, type Watch, watchedAnswer } from "./door_watch.ts";
import { bareError, busyRequest, isLoopback, newWatch, tell, watchedOrNot } from "./door_refusal.ts";

const TICK_MS = 500;

/**
 * `Deno.serve` with the limits it can keep inside a request, what `serveDoor` gives on a Deno without
 * `serveHttpOnConnection`: exported so that its tests run on a Deno that has it.
 *
 * @param options The address, the port, the refusal callback, whether bodies and answers are watched.
 * @param limits The limits, filled (`doorLimits`).
 * @param handler The handler of each request.
 * @returns The server, listening, with `guarded` "requests".
 */
export function requestDoor(
  options: DoorOptions,
  limits: FullDoorLimits,
  handler: Deno.ServeHandler<Deno.NetAddr>,
): DoorServer {
  const underWay = new Map<string, number>();
  let total = 0;
  const refuse = (limit: DoorRefusal["limit"], status: DoorRefusal["status"], remote: string) =>
    tell(options.onRefusal, { limit, status, remote }, limits);
  const server = Deno.serve({
    hostname: options.hostname ?? "127.0.0.1",
    port: options.port ?? 0,
    onListen: () => {},
    onError: options.onError ?? bareError,
  }, async (request, info) => {
    const remote = info.remoteAddr.hostname;
    const mine = underWay.get(remote) ?? 0;
    if (!isLoopback(remote) && mine >= limits.maxPerAddress) {
      refuse("address", 503, remote);
      return busyRequest(request, "this address has too many requests under way now");
    }
    if (total >= limits.maxRequests) {
      refuse("requests", 503, remote);
      return busyRequest(request, "the server has too many requests under way now");
    }
    total += 1;
    underWay.set(remote, mine + 1);
    void info.completed.catch(() => {}).finally(() => {
      total -= 1;
      const left = (underWay.get(remote) ?? 1) - 1;
      if (left === 0) underWay.delete(remote);
      else underWay.set(remote, left);
    });
    return await guarded(request, info, { options, limits, handler, refuse });
  });
  return Object.assign(server, { guarded: "requests" as const, connections: 0 });
}

/** One request under the limits: its body's rate while it comes, then its answer's stalls while it goes. */
async function guarded(
  request: Request,
  info: Deno.ServeHandlerInfo<Deno.NetAddr>,
  parts: {
    options: DoorOptions;
    limits: FullDoorLimits;
    handler: Deno.ServeHandler<Deno.NetAddr>;
    refuse: (limit: DoorRefusal["limit"], status: DoorRefusal["status"], remote: string) => void;
  },
): Promise<Response> {
  const { options, limits, handler, refuse } = parts;
  const watchBody = request.body !== null && options.watchBodies !== false;
  const watch: Watch = newWatch(watchBody ? "body" : "working");
  const watched = watchBody ? watchedOrNot(request, watch, options) : { request, stop: () => {} };
  const stopAnswer = new AbortController();
  const timer = setInterval(() => {
    const now = Date.now();
    if (bodyTooSlow(watch, limits, now)) {
      watch.phase = "working";
      refuse("body", 408, info.remoteAddr.hostname);
      watched.stop(new Deno.errors.TimedOut("the request's body came too slowly"));
    } else if (watch.phase === "answer" && watch.stalled > 0 && now - watch.stalled > limits.answerMs) {
      clearInterval(timer);
      refuse("answer", 0, info.remoteAddr.hostname);
      // erroring the answer makes Deno end it: the connection with it on HTTP/1.1, the stream on HTTP/2
      stopAnswer.abort(new Deno.errors.TimedOut("the client took none of its answer"));
    }
  }, TICK_MS);
  void info.completed.catch(() => {}).finally(() => clearInterval(timer));
  let response: Response;
  try {
    response = await handler(watched.request, info);
  } catch (error) {
    clearInterval(timer);
    throw error;
  }
  watch.phase = "answer";
  if (options.watchAnswers === false || !streamedBody(response)) {
    clearInterval(timer);
    return response;
  }
  const body = watchedAnswer(response.body!, watch).pipeThrough(new TransformStream(), {
    signal: stopAnswer.signal,
  });
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/**
 * What a door watches inside one request: how fast its body arrives, and whether the client takes a streamed
 * answer. Each is a pass-through stream that notes its progress on the request's watch; the door's clock
 * (`door_server.ts`) compares that with the limits.
 * @module
 */
import { ownChunk } from "./body_bytes.ts";

/**
 * Where one request is, for the door's clock. A connection may carry several at once (HTTP/2), so each has its
 * own.
 */
export interface Watch {
  /** body: its body is arriving; working: the handler's turn; answer: its answer is being sent. */
  phase: "body" | "working" | "answer";
  /** When the phase began (ms since the epoch). */
  since: number;
  /** Bytes of the body so far. */
  received: number;
  /**
   * Milliseconds the door has waited on the client for the body, and since when it waits now (0: it does not):
   * the body is read ahead of the handler up to a bound, so a handler that is slow to read (its run's lock
   * held) does not count against the client, and a client that is slow to send does.
   */
  waitedMs: number;
  waitingSince: number;
  /** When a chunk of a streamed answer began to wait for the client (0: none waits). */
  stalled: number;
}

/** How much of a body the door reads ahead of the handler: past it, the client waits on the handler. */
export const READ_AHEAD = 64 * 1024;
/** The methods the Fetch standard forbids a `Request` to have. */
const FORBIDDEN = /^(connect|trace|track)$/i;

/**
 * The request, its body read ahead of the handler (up to 64 KiB) and counted as it arrives; the body ends (and
 * the phase turns to `working`) when it has all come, or is cancelled or errored. The returned `stop` errors
 * the body, for a refusal.
 *
 * @param request The request as the server gave it.
 * @param watch The request's watch.
 * @returns The request the handler gets, and a function that ends its body with an error.
 * @throws TypeError for a method that a `Request` cannot be made with (CONNECT, TRACE, TRACK).
 */
export function watchedRequest(
  request: Request,
  watch: Watch,
): { request: Request; stop: (reason: Error) => void } {
  const reader = request.body!.getReader();
  const source = () => reader;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const done = () => {
    if (watch.phase === "body") watch.phase = "working";
  };
  const waited = () => {
    if (watch.waitingSince) watch.waitedMs += Date.now() - watch.waitingSince;
    watch.waitingSince = 0;
  };
  // checked before the body is read ahead, which begins as soon as the stream is made
  if (FORBIDDEN.test(request.method)) throw new TypeError(`a Request cannot be made with ${request.method}`);
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
    async pull(c) {
      watch.waitingSince = Date.now();
      try {
        const { done: end, value } = await source().read();
        waited();
        if (end) {
          done();
          c.close();
          return;
        }
        watch.received += value.byteLength;
        // read ahead by bytes: a chunk of a byte must not hold its read's 64 KiB
        c.enqueue(ownChunk(value));
      } catch (error) {
        waited();
        done();
        c.error(error);
      }
    },
    cancel(reason) {
      waited();
      done();
      return source().cancel(reason);
    },
  }, new ByteLengthQueuingStrategy({ highWaterMark: READ_AHEAD }));
  const init: RequestInit & { duplex: "half" } = {
    method: request.method,
    headers: request.headers,
    body,
    duplex: "half",
    // not request.signal: reading it makes Deno print a warning about its legacy abort; info.completed tells
  };
  return {
    request: new Request(request.url, init),
    stop: (reason) => {
      waited();
      done();
      // the server's own body is left alone: cancelling it would drop the connection before the 408 is sent
      try {
        controller.error(reason);
      } catch { /* already ended */ }
    },
  };
}

/**
 * Whether a request's body is too slow: the door has waited on the client for it past the floor, and what has
 * come is under the rate over that wait.
 *
 * @param watch The request's watch.
 * @param limits The floor and the rate.
 * @param now The time (ms since the epoch).
 * @returns True when the body is to be refused.
 */
export function bodyTooSlow(
  watch: Watch,
  limits: { bodyFloorMs: number; bodyBytesPerSecond: number },
  now: number,
): boolean {
  if (watch.phase !== "body") return false;
  const waited = watch.waitedMs + (watch.waitingSince ? now - watch.waitingSince : 0);
  return waited > limits.bodyFloorMs && watch.received * 1000 < limits.bodyBytesPerSecond * waited;
}

/**
 * A streamed answer that notes when a chunk waits for the client: the server takes the next chunk only when the
 * client has taken enough of the last ones, so a chunk that waits long is a client that stopped reading.
 *
 * @param body The answer's stream.
 * @param watch The request's watch.
 * @returns The stream to send instead.
 */
export function watchedAnswer(body: ReadableStream<Uint8Array>, watch: Watch): ReadableStream<Uint8Array> {
  const source = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(c) {
      watch.stalled = 0;
      const { done, value } = await source.read();
      if (done) {
        c.close();
        return;
      }
      c.enqueue(value);
      watch.stalled = Date.now();
    },
    cancel(reason) {
      watch.stalled = 0;
      return source.cancel(reason);
    },
  }, { highWaterMark: 0 });
}

let responseSlot: symbol | null | undefined;

/**
 * Whether an answer's body is a stream (a byte or text body is handed to the server whole, and `completed`
 * says when it is sent). Reading `response.body` would turn a byte body into a stream, which costs a byte answer
 * about a tenth of a millisecond, so the answer's inner body is looked at where Deno keeps it; a Deno that keeps
 * it elsewhere gets false (its streamed answers are then bounded by the connection limit only).
 *
 * @param response The answer.
 * @returns True for a streamed body.
 */
export function streamedBody(response: Response): boolean {
  if (responseSlot === undefined) {
    responseSlot = Object.getOwnPropertySymbols(response).find((s) => s.description === "response") ?? null;
  }
  if (responseSlot === null) return false;
  const inner = (response as unknown as Record<symbol, { body?: { streamOrStatic?: unknown } | null }>)[
    responseSlot
  ];
  return inner?.body?.streamOrStatic instanceof ReadableStream;
}

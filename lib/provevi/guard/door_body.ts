/**
 * A body its handler reads itself, counted for the door as it is read (a door with `handlerReadsBodies`). The
 * door's stream (`watchedRequest`) passes each chunk through a stream of its own and a new `Request` before the
 * handler's read collects it again; here the handler reads the server's own body through
 * {@linkcode bodyReader}, and that read reports to the request's watch, so the bytes pass once. The door still
 * reads ahead of the handler (up to 64 KiB, each chunk held at its own size) from the moment the request comes,
 * and only the time it waits on the client counts against the body's rate, as with the stream: a handler that
 * reads late (behind a run's lock) costs its client nothing, and a client that sends slowly is refused 408
 * whether its handler reads yet or not.
 * @module
 */
import { ownChunk } from "./body_bytes.ts";
import { READ_AHEAD, type Watch } from "./door_watch.ts";

/** What a handler reads a body with: a stream's reader, or the door's for a body it counts. */
export type BodyReader = Pick<ReadableStreamDefaultReader<Uint8Array>, "read" | "cancel" | "releaseLock">;

const HANDED = new WeakMap<Request, HandedBody>();

/** The server's body of one request, read ahead and counted for its watch; its handler reads it as a reader. */
class HandedBody implements BodyReader {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #watch: Watch;
  /** Chunks read ahead, not taken yet, and their bytes. */
  readonly #queue: Uint8Array[] = [];
  #held = 0;
  /** The read of the server's body under way, at most one. */
  #reading: Promise<void> | null = null;
  #ended = false;
  #failed: { reason: unknown } | null = null;
  readonly #stopped = Promise.withResolvers<never>();

  constructor(body: ReadableStream<Uint8Array>, watch: Watch) {
    this.#reader = body.getReader();
    this.#watch = watch;
    this.#stopped.promise.catch(() => {});
    this.#ahead();
  }

  /** Reads ahead while fewer than {@linkcode READ_AHEAD} bytes wait for the handler. */
  #ahead(): void {
    if (this.#held < READ_AHEAD && !this.#ended) void this.#fill();
  }

  /** One read of the server's body, the time it waits on the client counted. */
  #fill(): Promise<void> {
    if (this.#reading !== null) return this.#reading;
    this.#watch.waitingSince = Date.now();
    this.#reading = this.#reader.read().then(({ done, value }) => {
      this.#waited();
      this.#reading = null;
      if (this.#ended) return; // stopped or dropped meanwhile
      if (done) return this.#end();
      this.#watch.received += value.byteLength;
      // a chunk of a byte must not hold its read's 64 KiB
      this.#queue.push(ownChunk(value));
      this.#held += value.byteLength;
      this.#ahead();
    }, (error) => {
      this.#waited();
      this.#reading = null;
      if (this.#ended) return;
      this.#failed = { reason: error };
      this.#end();
    });
    return this.#reading;
  }

  #waited(): void {
    const watch = this.#watch;
    if (watch.waitingSince) watch.waitedMs += Date.now() - watch.waitingSince;
    watch.waitingSince = 0;
  }

  /** The body has all come, or is stopped, dropped or broken: the handler's turn. */
  #end(): void {
    this.#ended = true;
    if (this.#watch.phase === "body") this.#watch.phase = "working";
  }

  /** The next chunk, as a stream's reader gives it; a stopped or broken body fails. */
  async read(): Promise<ReadableStreamReadResult<Uint8Array>> {
    for (;;) {
      if (this.#failed !== null) throw this.#failed.reason;
      const chunk = this.#queue.shift();
      if (chunk !== undefined) {
        this.#held -= chunk.byteLength;
        this.#ahead();
        return { done: false, value: chunk };
      }
      if (this.#ended) return { done: true, value: undefined };
      await Promise.race([this.#fill(), this.#stopped.promise]);
    }
  }

  /** Drops the rest of the body (a refusal): the server's body is cancelled. */
  cancel(reason?: unknown): Promise<void> {
    this.#drop();
    this.#end();
    return this.#reader.cancel(reason).catch(() => {});
  }

  /** Nothing to let go of: the door keeps the server's body. */
  releaseLock(): void {}

  /**
   * Fails the handler's reads (the door's 408). The server's body is left alone: cancelling it would drop the
   * connection before the 408 is sent.
   */
  stop(reason: Error): void {
    if (this.#failed !== null) return;
    this.#failed = { reason };
    this.#drop();
    this.#end();
    this.#stopped.reject(reason);
  }

  #drop(): void {
    this.#waited();
    this.#queue.length = 0;
    this.#held = 0;
  }
}

/**
 * Hands a request to its handler with its body counted as the handler reads it ({@linkcode bodyReader}); the
 * door's read ahead begins at once.
 *
 * @param request The request as the server gave it, with a body.
 * @param watch The request's watch.
 * @returns The same request, and a function that fails the handler's reads, for a refusal.
 */
export function handedRequest(
  request: Request,
  watch: Watch,
): { request: Request; stop: (reason: Error) => void } {
  const body = new HandedBody(request.body!, watch);
  HANDED.set(request, body);
  return { request, stop: (reason) => body.stop(reason) };
}

/**
 * The reader of a request's body: the door's, which counts what is read for the door's watch, when a door with
 * `handlerReadsBodies` handed the request; else a reader of `request.body`. Null for a request without a body.
 *
 * @param request The request the handler got.
 * @returns The reader, or null.
 */
export function bodyReader(request: Request): BodyReader | null {
  return HANDED.get(request) ?? request.body?.getReader() ?? null;
}

/** True when a door counts this request's body as its handler reads it ({@linkcode bodyReader}). */
export function handedBody(request: Request): boolean {
  return HANDED.has(request);
}

/**
 * Drops a request's body unread, for a refusal: through the door's reader when a door handed it, else
 * `request.body.cancel()`. Never fails.
 *
 * @param request The request the handler got.
 * @returns When it is done.
 */
export function dropBody(request: Request): Promise<void> {
  const handed = HANDED.get(request);
  return (handed ? handed.cancel() : request.body?.cancel() ?? Promise.resolve()).catch(() => {});
}

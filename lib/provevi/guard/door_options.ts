/**
 * The options of a door (`serveDoor`, `requestDoor`) and what a door is: apart from the door itself, so that its
 * two forms and their shared refusals name them without importing each other.
 * @module
 */
import type { DoorLimits, DoorRefusal } from "./door_limits.ts";

/** Options of `serveDoor`. */
export interface DoorOptions {
  /** The address to listen on; 127.0.0.1 by default. */
  hostname?: string;
  /** The port; 0 (by default) for a free one. */
  port?: number;
  /** The limits; each left out takes its default. */
  limits?: DoorLimits;
  /** Told of each refusal, to count or log it. */
  onRefusal?: (refusal: DoorRefusal) => void;
  /**
   * Whether a body's rate is watched (true by default). Watching takes the body off Deno's native path, about
   * 0.2 ms of CPU a request; a door that refuses every stranger before it reads a body (the model gateway, whose
   * only client with its token is the run's own program) may leave it off, for its time to first token.
   */
  watchBodies?: boolean;
  /**
   * Whether the handler reads every body it takes through `bodyReader(request)`, and drops the others with
   * `dropBody(request)` (false by default). The door then counts a body as the handler reads it, where its stream
   * would pass each chunk through a stream and a new `Request` of its own: the handler gets the server's request,
   * and the bytes pass once (`door_body.ts`). The limits are the same; a handler that reads `request.body` itself
   * finds it locked.
   */
  handlerReadsBodies?: boolean;
  /**
   * Whether a streamed answer that its client stops taking is cut (true by default). Watching puts one stream
   * between the handler's answer and the server; a door whose only client is the run's own program and whose
   * handler cuts a call that waits too long on its own (the model gateway) may leave it off, for its time to
   * first token.
   */
  watchAnswers?: boolean;
  /** The answer to a handler that throws; a bare 500 by default. */
  onError?: (error: unknown) => Response | Promise<Response>;
}

/** A door: a `Deno.HttpServer`, and what it guards. */
export interface DoorServer extends Deno.HttpServer<Deno.NetAddr> {
  /** "connections" when every limit holds; "requests" when only those inside a request do (see the module). */
  readonly guarded: "connections" | "requests";
  /** The connections open now. */
  readonly connections: number;
}

/**
 * The limits of a network door: how long a client may take to send a request's head, to keep a connection
 * open between requests, to send a body, and to take an answer, and how many connections it may hold. `Deno.serve`
 * has none of these (denoland/deno#3515): a client that sends a header a byte every few seconds, or opens
 * connections and sends nothing, held them as long as it liked, and enough such clients held the door shut.
 * @module
 */

/** The limits of a door ({@linkcode serveDoor}); each left out takes its default ({@linkcode DOOR_LIMITS}). */
export interface DoorLimits {
  /** Milliseconds from a new connection to the end of its first request's head (line and headers). */
  headerMs?: number;
  /**
   * Milliseconds a kept-alive connection may wait between an answer and the end of the next request's head. The
   * server cannot tell a silent connection from one sending a head slowly, so this bounds both after a first
   * request.
   */
  idleMs?: number;
  /** Milliseconds a request's body has in any case; past them it must keep to `bodyBytesPerSecond` on average. */
  bodyFloorMs?: number;
  /** The slowest average a body may arrive at once its `bodyFloorMs` have passed, in bytes a second. */
  bodyBytesPerSecond?: number;
  /** Milliseconds an answer may wait for the client to take its next bytes. */
  answerMs?: number;
  /** Connections open at once; past it the one waiting longest for a request is closed, or the new one refused. */
  maxConnections?: number;
  /** Connections open at once from one address other than the machine's own (a LAN client). */
  maxPerAddress?: number;
  /**
   * Requests under way at once at the door, over all its connections (each holds a handler, and a body read
   * ahead): past it a request is answered 503, its body unread. Without it, 128 connections of HTTP/2 carried
   * 8 requests each, 1,024 handlers.
   */
  maxRequests?: number;
}

/** Every limit of a door, given or defaulted. */
export type FullDoorLimits = Required<DoorLimits>;

/**
 * The defaults: generous for any client that means to send a request (an exporter's batch, a browser's page, an
 * agent SDK's call), short for one that does not.
 */
export const DOOR_LIMITS: Readonly<FullDoorLimits> = Object.freeze({
  headerMs: 10_000,
  idleMs: 30_000,
  bodyFloorMs: 30_000,
  bodyBytesPerSecond: 64 * 1024,
  answerMs: 30_000,
  maxConnections: 128,
  maxPerAddress: 32,
  maxRequests: 256,
});

/**
 * One refusal of a door, for its owner to count or log: which limit, the status the client was answered with (0
 * when the connection was closed without an answer, since no request had been read), and the client's address.
 */
export interface DoorRefusal {
  limit: "header" | "idle" | "body" | "answer" | "connections" | "address" | "streams" | "requests";
  status: 0 | 408 | 503;
  remote: string;
  /** One line for a log. */
  message: string;
}

/**
 * A door's limits, the given ones over the defaults.
 *
 * @param given The limits given.
 * @returns Every limit.
 * @throws RangeError when a limit is not a whole number above zero.
 * @example
 * ```ts
 * import { doorLimits } from "./door_limits.ts";
 * doorLimits({ maxConnections: 8 }).headerMs; // 10000
 * ```
 */
export function doorLimits(given: DoorLimits = {}): FullDoorLimits {
  const limits = { ...DOOR_LIMITS };
  for (const [name, value] of Object.entries(given) as [keyof FullDoorLimits, number | undefined][]) {
    if (value === undefined) continue;
    if (!(name in DOOR_LIMITS)) throw new RangeError(`a door has no limit ${JSON.stringify(name)}`);
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new RangeError(`the door's ${name} is ${value}: give a whole number above zero`);
    }
    limits[name] = value;
  }
  return limits;
}

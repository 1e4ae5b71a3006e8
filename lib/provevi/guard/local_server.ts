/**
 * Stopping a local server that a stranger may hold open. `Deno.HttpServer.shutdown()` waits for every request
 * under way, and a request whose body never ends (a client that sends its headers and then nothing, refused or
 * not) is under way for ever: the owner would wait for ever to close it. So the wait has a deadline, after which
 * the server no longer keeps the process alive and the held connection is left to die with it; no request is
 * taken on it, since a server shutting down keeps no connection alive for another request.
 * @module
 */

/** How long a server's requests under way have to end when it stops, by default: 2 s. */
export const SHUTDOWN_GRACE_MS = 2000;

/**
 * Stops a server: no new connection is taken at once; the requests under way have `graceMs` to end.
 *
 * @param server The server.
 * @param graceMs The deadline, in milliseconds.
 * @returns True when every request ended in time; false when some connection was left held open.
 * @example
 * ```ts
 * import { shutdownWithin } from "./local_server.ts";
 * const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, () => new Response());
 * await shutdownWithin(server); // true
 * ```
 */
export async function shutdownWithin(server: Deno.HttpServer, graceMs = SHUTDOWN_GRACE_MS): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => timer = setTimeout(() => resolve(false), graceMs));
  const ended = await Promise.race([server.shutdown().then(() => true as const), late]);
  clearTimeout(timer);
  if (!ended) server.unref();
  return ended;
}

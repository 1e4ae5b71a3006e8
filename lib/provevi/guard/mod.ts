/**
 * The guard of a service on 127.0.0.1 that only its user may reach (`prove ui`, `prove serve`, a run's span
 * receiver): its secret (random, compared in constant time, kept in a file only its user can read), and the
 * checks of a request before any route: the `Host` against DNS rebinding, the `Origin` and `Sec-Fetch-Site`
 * against a web page's cross-site request, and the bearer credential; and the door every HTTP server of the
 * toolkit listens through (`serveDoor`), which a slow or greedy client cannot hold. Imports nothing else of provevi.
 *
 * @example
 * ```ts
 * import { localHosts, refusedHost } from "./mod.ts";
 * const request = new Request("http://127.0.0.1:5000/", { headers: { host: "evil.example:5000" } });
 * refusedHost(request, localHosts(5000)); // "evil.example:5000"
 * ```
 * @module
 */
export * from "./local_secret.ts";
export * from "./local_request.ts";
export * from "./local_server.ts";
export * from "./door_limits.ts";
export * from "./door_server.ts";
export * from "./body_bytes.ts";
export { type BodyReader, bodyReader, dropBody, handedBody } from "./door_body.ts";

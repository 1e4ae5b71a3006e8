/**
 * A small fake MLflow tracking server on 127.0.0.1 that stands in for a malicious one: by default it answers
 * the calls of a copy as MLflow does, just enough; a test replaces the answer of any path to attack the
 * client (a reply of another shape, an endless reply, an error that echoes the request's credentials).
 * @module
 */

/** What a route answers with, given the request (its headers, to echo them). */
export type Route = (request: Request) => Response | Promise<Response>;

/** A running fake server; closed when disposed. */
export interface HostileMlflow extends AsyncDisposable {
  url: string;
  /** The requests it took, as `METHOD path`. */
  calls: string[];
}

const json = (value: unknown, status = 200) =>
  new Response(JSON.stringify(value), { status, headers: { "content-type": "application/json" } });

/** The answers of a well-behaved server, by `METHOD path` (a path ending in `*` matches its prefix). */
const DEFAULTS: Record<string, Route> = {
  "GET /api/2.0/mlflow/experiments/get-by-name": () => json({ experiment: { experiment_id: "1" } }),
  "POST /api/2.0/mlflow/runs/search": () => json({ runs: [] }),
  "GET /api/3.0/mlflow/traces/*": () =>
    json({ error_code: "RESOURCE_DOES_NOT_EXIST", message: "Trace not found" }, 404),
  "POST /api/2.0/mlflow/runs/create": () =>
    json({ run: { info: { run_id: "0123456789abcdef0123456789abcdef" } } }),
  "POST /v1/traces": () => new Response(new Uint8Array(0), { status: 200 }),
};

/**
 * Starts the fake server.
 *
 * @param routes Answers that replace the defaults, by `METHOD path` (`*` at the end matches a prefix).
 * @returns The server; any call it has no route for gets `{}`.
 */
export function hostileMlflow(routes: Record<string, Route> = {}): HostileMlflow {
  const table = { ...DEFAULTS, ...routes };
  const calls: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    const path = new URL(request.url).pathname;
    const key = `${request.method} ${path}`;
    calls.push(key);
    await request.body?.cancel();
    const exact = table[key];
    if (exact) return await exact(request);
    for (const [pattern, route] of Object.entries(table)) {
      if (pattern.endsWith("*") && key.startsWith(pattern.slice(0, -1))) return await route(request);
    }
    return json({});
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    calls,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

/** A reply that never ends: `chunk` bytes at a time, as fast as they are read, or one every `every` ms. */
export function endless(
  options: { status?: number; chunk?: number; every?: number; start?: string } = {},
): Response {
  const piece = new TextEncoder().encode("x".repeat(options.chunk ?? 1024 * 1024));
  let started = false;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!started && options.start) controller.enqueue(new TextEncoder().encode(options.start));
      started = true;
      if (options.every) await new Promise((r) => setTimeout(r, options.every));
      controller.enqueue(piece);
    },
  });
  return new Response(body, {
    status: options.status ?? 200,
    headers: { "content-type": "application/json" },
  });
}

/** An error reply. */
export function refusal(body: string, status = 500): Response {
  return new Response(body, { status, headers: { "content-type": "application/json" } });
}

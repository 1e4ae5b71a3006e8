/**
 * The viewer's server: `prove ui` serves the store on 127.0.0.1. {@linkcode viewerHandler} answers a request
 * (testable without a server, as Hono's `app.request()` is): it reads the request in one place
 * (`viewer_request.ts`: Host, the token in the path, the method, the origin of a write, the path's parts),
 * finds its row in the routes table (`viewer_routes.ts`, and the pages of `viewer_paths.ts`), checks the row's
 * `:name` parts, and turns any error into a 4xx of one line (a 500 only for the viewer's own failure).
 * {@linkcode serveViewer} listens. The pages, script and style are strings in the module tree, so a compiled
 * binary has them and nothing is fetched from the network.
 * @module
 */
import { ProveviError } from "../evidence/errors.ts";
import { type DoorLimits, type DoorRefusal, serveDoor } from "../guard/mod.ts";
import type { EvidenceStore } from "../store/store.ts";
import type { RunModel } from "./run_model.ts";
import { SingleFlight } from "./single_flight.ts";
import { DigestCache } from "./digest_cache.ts";
import { RunSearch } from "./run_search.ts";
import { pageHtml } from "./viewer_assets.ts";
import { newToken } from "./viewer_guard.ts";
import { errorResponse, refusal, text } from "./viewer_http.ts";
import { matchPath, PAGES } from "./viewer_paths.ts";
import { basePath, readRequest, type ViewerRequest } from "./viewer_request.ts";
import {
  API_ROUTES,
  PARAM_CHECKS,
  type Route,
  type RouteContext,
  type ViewerOptions,
} from "./viewer_routes.ts";

export type { ViewerOptions } from "./viewer_routes.ts";

/** Options of {@linkcode serveViewer}. */
export interface ServeViewerOptions extends ViewerOptions {
  /** The port on 127.0.0.1: 5000 by default; 0 takes a free one. */
  port?: number;
  /** The token; a new random one by default. */
  token?: string;
  /** The limits of its door (`serveDoor`): each left out takes its default. */
  doorLimits?: DoorLimits;
  /** Told of each connection the door cuts, to log it. */
  onDoorRefusal?: (refusal: DoorRefusal) => void;
}

/** A running viewer. */
export interface Viewer extends AsyncDisposable {
  /** The address to open: `http://127.0.0.1:PORT/t/TOKEN/`; every address of the viewer is under it. */
  readonly url: string;
  readonly port: number;
  readonly token: string;
  /** Resolves when the server has stopped. */
  readonly finished: Promise<void>;
  /** Stops the server. */
  shutdown(): Promise<void>;
}

/** The viewer's request handler, and how to close what it opened (the search index). */
export type ViewerHandler = ((request: Request) => Promise<Response>) & {
  /** Stops the search's indexing and removes its index, when it made one. */
  close(): Promise<void>;
};

/**
 * The viewer's request handler, guard included.
 *
 * @param store The store to show.
 * @param options The policy, the catalog, how to open the store to write, and the port and token to check.
 * @returns A function from a request to its response, with `close()` for what it opened.
 * @throws TypeError when the token is not 16 to 256 letters, digits, `_` or `-` (it is a part of every path).
 * @example
 * ```ts
 * import { FileStore, TelemetryPolicy, viewerHandler } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const policy = await TelemetryPolicy.load("fixtures/policies/live-viewer.yaml");
 * await using store = new FileStore({ runs: "fixtures/runs" });
 * const token = "a-token-of-16-or-more";
 * const handle = viewerHandler(store, { policy, port: 5000, token });
 * const url = `http://127.0.0.1:5000/t/${token}/api/runs`;
 * const response = await handle(new Request(url, { headers: { host: "127.0.0.1:5000" } }));
 * assert.equal(response.status, 200);
 * await response.body?.cancel();
 * await handle.close();
 * ```
 */
export function viewerHandler(
  store: EvidenceStore,
  options: ViewerOptions & { port: number; token: string },
): ViewerHandler {
  const page = pageHtml(basePath(options.token));
  const routes: Route[] = [
    ...API_ROUTES,
    ...PAGES.map((path): Route => ({ method: "GET", path, handle: () => text(page, "text/html") })),
  ];
  const models = new SingleFlight<RunModel>();
  const checks = { policy: options.policy, ...(options.catalog ? { catalog: options.catalog } : {}) };
  const digests = new DigestCache(store, checks);
  const search = options.search ?? new RunSearch(store, checks);
  const handle = async (request: Request) => {
    const read = readRequest(request, options);
    if (read instanceof Response) return read;
    const response = await dispatch(routes, read, { store, options, request, models, digests, search });
    if (!read.head) return response;
    await response.body?.cancel();
    return new Response(null, { status: response.status, headers: response.headers });
  };
  // A search given by the caller is the caller's to close.
  return Object.assign(handle, { close: () => (options.search ? Promise.resolve() : search.close()) });
}

/** Finds the request's row, checks its `:name` parts, and runs it; any error is a refusal of one line. */
async function dispatch(
  routes: readonly Route[],
  read: ViewerRequest,
  context: Omit<RouteContext, "params" | "query">,
): Promise<Response> {
  const found = routes.flatMap((route) => {
    const params = matchPath(route.path, read.parts);
    return params === null ? [] : [{ route, params }];
  });
  if (found.length === 0) {
    const shown = read.path.length > 120 ? read.path.slice(0, 120) + "…" : read.path;
    return refusal(404, `prove ui: no such address /${shown}`, { api: read.api });
  }
  const match = found.find((f) => f.route.method === read.method);
  if (!match) {
    const methods = [...new Set(found.map((f) => f.route.method))];
    const allow = [...methods, ...(methods.includes("GET") ? ["HEAD"] : [])].join(", ");
    return refusal(405, `prove ui: ${read.head ? "HEAD" : read.method} is not allowed here: use ${allow}`, {
      api: read.api,
      allow,
    });
  }
  try {
    for (const [name, value] of Object.entries(match.params)) PARAM_CHECKS[name]!(value);
    return await match.route.handle({ ...context, params: match.params, query: read.query });
  } catch (error) {
    return errorResponse(error, read.api);
  }
}

/**
 * Serves the viewer on 127.0.0.1.
 *
 * @param store The store to show; it stays open while the viewer runs, and the caller closes it after.
 * @param options The policy, the port (5000 by default, 0 for a free one), the token (random by default).
 * @returns The running viewer, with the URL to open: `http://127.0.0.1:PORT/t/TOKEN/`.
 * @throws ProveviError when the port is taken.
 * @example
 * ```ts
 * import { FileStore, serveViewer, TelemetryPolicy } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const policy = await TelemetryPolicy.load("fixtures/policies/live-viewer.yaml");
 * await using store = new FileStore({ runs: "fixtures/runs" });
 * await using viewer = await serveViewer(store, { policy, port: 0 });
 * const response = await fetch(`${viewer.url}api/runs`);
 * assert.equal(response.status, 200);
 * await response.body?.cancel();
 * ```
 */
export function serveViewer(store: EvidenceStore, options: ServeViewerOptions): Promise<Viewer> {
  const token = options.token ?? newToken();
  basePath(token);
  const wanted = options.port ?? 5000;
  let handler: ViewerHandler | null = null;
  let server: Deno.HttpServer<Deno.NetAddr>;
  try {
    server = serveDoor({
      hostname: "127.0.0.1",
      port: wanted,
      onError: (error) => refusal(500, `prove ui: ${(error as Error)?.message ?? error}`),
      ...(options.doorLimits ? { limits: options.doorLimits } : {}),
      ...(options.onDoorRefusal ? { onRefusal: options.onDoorRefusal } : {}),
    }, (request) => handler!(request));
  } catch (error) {
    if (error instanceof Deno.errors.AddrInUse) {
      return Promise.reject(
        new ProveviError(`port ${wanted} on 127.0.0.1 is taken: choose another with --port N`, {
          cause: error,
        }),
      );
    }
    return Promise.reject(error);
  }
  const port = server.addr.port;
  handler = viewerHandler(store, { ...options, port, token });
  const shutdown = async () => {
    await server.shutdown();
    await handler?.close();
  };
  return Promise.resolve({
    url: `http://127.0.0.1:${port}${basePath(token)}`,
    port,
    token,
    finished: server.finished,
    shutdown,
    [Symbol.asyncDispose]: shutdown,
  });
}

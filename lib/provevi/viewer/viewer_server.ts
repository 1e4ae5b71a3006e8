/**
 * The viewer's server: `prove ui` serves the store on 127.0.0.1; its runs page is `listRuns`, as `prove runs`. {@linkcode viewerHandler} answers a request
 * (testable without a server, as Hono's `app.request()` is); {@linkcode serveViewer} listens. Every request
 * passes the guard first (Host, token, same-origin POST). The pages, script and style are strings in the module
 * tree, so a compiled binary has them and nothing is fetched from the network.
 * @module
 */
import { ProveviError, RunNotFound } from "../evidence/errors.ts";
import { checkRunIdToRead, type RunRecord } from "../evidence/record.ts";
import type { EvidenceStore } from "../store/store.ts";
import { questionsOf } from "../store/store_questions.ts";
import type { TelemetryPolicy } from "../telemetry/policy.ts";
import { compareRuns } from "./compare_view.ts";
import { liveTail } from "./live_tail.ts";
import { APP_CSS, APP_JS, pageHtml } from "./viewer_assets.ts";
import { guardRequest, newToken } from "./viewer_guard.ts";
import { listRuns, type ListRunsOptions, RUN_LIST_STATUSES, type RunRow } from "../runs/list_runs.ts";
import type { Level } from "../telemetry/attributes.ts";
import { runView, type RunViewOptions } from "./run_view.ts";

/** Options of the viewer. */
export interface ViewerOptions {
  /** The viewer's telemetry policy: its `live` destination decides what the pages show. */
  policy: TelemetryPolicy;
  /** The catalog that reads a committed bundle and a run's experiment, as for `prove verify`. */
  catalog?: RunViewOptions["catalog"];
  /** Opens the store to write, for the one request that writes: adding an assessment. */
  openToWrite?: () => Promise<EvidenceStore>;
}

/** Options of {@linkcode serveViewer}. */
export interface ServeViewerOptions extends ViewerOptions {
  /** The port on 127.0.0.1: 5000 by default; 0 takes a free one. */
  port?: number;
  /** The token; a new random one by default. */
  token?: string;
}

/** A running viewer. */
export interface Viewer extends AsyncDisposable {
  /** The address to open, with the token. */
  readonly url: string;
  readonly port: number;
  readonly token: string;
  /** Resolves when the server has stopped. */
  readonly finished: Promise<void>;
  /** Stops the server. */
  shutdown(): Promise<void>;
}

const SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
};

function json(value: unknown, status = 200): Response {
  return new Response(JSON.stringify(value), {
    status,
    headers: { ...SECURITY_HEADERS, "content-type": "application/json; charset=utf-8" },
  });
}

function text(body: string, type: string): Response {
  return new Response(body, { headers: { ...SECURITY_HEADERS, "content-type": `${type}; charset=utf-8` } });
}

function errorResponse(error: unknown): Response {
  if (error instanceof RunNotFound) return json({ error: error.message }, 404);
  if (error instanceof ProveviError) return json({ error: error.message }, 400);
  if (error instanceof TypeError || error instanceof RangeError) return json({ error: error.message }, 400);
  return json({ error: `prove ui: ${(error as Error)?.message ?? String(error)}` }, 500);
}

function number(value: string | null): number | undefined {
  return value === null || value === "" || !/^\d+$/.test(value) ? undefined : Number(value);
}

/**
 * The viewer's request handler, guard included.
 *
 * @param store The store to show.
 * @param options The policy, the catalog, how to open the store to write, and the port and token to check.
 * @returns A function from a request to its response.
 * @example
 * ```ts
 * import { viewerHandler } from "./viewer_server.ts";
 * // const handle = viewerHandler(store, { policy, port: 5000, token });
 * // (await handle(new Request("http://127.0.0.1:5000/api/runs", { headers: { cookie } }))).status; // 200
 * ```
 */
export function viewerHandler(
  store: EvidenceStore,
  options: ViewerOptions & { port: number; token: string },
): (request: Request) => Promise<Response> {
  const viewOptions: RunViewOptions = {
    policy: options.policy,
    ...(options.catalog ? { catalog: options.catalog } : {}),
  };
  const readRun = async (id: string) => {
    checkRunIdToRead(id);
    return await store.readRun(id);
  };
  // The lists show every run at the policy's own live level (a run file may narrow its own run further, which
  // its run page applies): no live viewer, structure only; names, no counts; usage and bodies, everything.
  const listLevel = options.policy.liveLevel();
  return async (request) => {
    const refused = guardRequest(request, options);
    if (refused) return refused;
    const url = new URL(request.url);
    const path = url.pathname;
    const q = url.searchParams;
    try {
      if (request.method === "POST") {
        const m = /^\/api\/runs\/([^/]+)\/assessments$/.exec(path);
        if (!m) return json({ error: "prove ui: nothing to POST here" }, 404);
        return await addAssessment(decodeURIComponent(m[1]!), request, options, readRun);
      }
      if (path === "/assets/app.css") return text(APP_CSS, "text/css");
      if (path === "/assets/app.js") return text(APP_JS, "text/javascript");
      if (path === "/api/info") {
        const live = options.policy.destinations.find((d) => d.kind === "live");
        return json({
          store: store.uri,
          runs_root: store.runsRoot,
          policy: options.policy.source,
          live: live ? { name: live.name, receives: live.receives } : null,
          // What the store can do: the file store keeps no assessments, whatever the viewer was given.
          assess: options.openToWrite !== undefined && store.uri !== "file",
        });
      }
      if (path === "/api/runs") {
        const limit = Math.min(number(q.get("limit")) ?? 50, 500);
        const offset = number(q.get("offset")) ?? 0;
        const status = q.get("status");
        if (status && !(RUN_LIST_STATUSES as readonly string[]).includes(status)) {
          return json({
            error: `"${status}" is not a run status: use one of ${RUN_LIST_STATUSES.join(", ")}`,
          }, 400);
        }
        const options: ListRunsOptions = {
          limit,
          offset,
          ...(status ? { status: status as ListRunsOptions["status"] & string } : {}),
          ...(q.get("agent") ? { agent: q.get("agent")! } : {}),
          ...(q.get("experiment") ? { experiment: q.get("experiment")! } : {}),
          ...(q.get("since") ? { since: q.get("since")! } : {}),
        };
        const list = await listRuns(store, options);
        return json({ ...list, runs: list.runs.map((r) => rowAtLevel(r, listLevel)), limit, offset });
      }
      const live = /^\/api\/runs\/([^/]+)\/live$/.exec(path);
      if (live) {
        return await liveStream(
          store,
          await readRun(decodeURIComponent(live[1]!)),
          viewOptions,
          q,
        );
      }
      const run = /^\/api\/runs\/([^/]+)$/.exec(path);
      if (run) {
        const record = await readRun(decodeURIComponent(run[1]!));
        return json(await runView(store, record, { ...viewOptions, untrusted: q.get("untrusted") === "1" }));
      }
      // With no live viewer in the policy, only structure shows: no agent classes, experiments or their settings.
      if (listLevel === null && /^\/api\/(agents?|experiments?)$/.test(path)) {
        if (path.endsWith("s")) return json([]);
        return json(
          { error: `hidden: the telemetry policy (${options.policy.source}) names no live viewer` },
          404,
        );
      }
      if (path === "/api/agents") return json(await questionsOf(store, "the agents page").agents());
      if (path === "/api/agent") {
        const found = await questionsOf(store, "the agents page").agent(q.get("name") ?? "");
        return found ? json(found) : json({ error: `no agent class "${q.get("name")}" in the store` }, 404);
      }
      if (path === "/api/experiments") {
        return json(await questionsOf(store, "the experiments page").experiments());
      }
      if (path === "/api/experiment") {
        const found = await questionsOf(store, "the experiments page").experiment(q.get("uri") ?? "");
        return found ? json(found) : json({ error: `no experiment "${q.get("uri")}" in the store` }, 404);
      }
      if (path === "/api/compare") {
        const ids = [q.get("a") ?? "", q.get("b") ?? ""];
        for (const id of ids) checkRunIdToRead(id);
        return json(await compareRuns(store, ids, viewOptions));
      }
      if (path.startsWith("/api/") || path.startsWith("/assets/")) {
        return json({ error: `prove ui: no such address ${path}` }, 404);
      }
      return text(pageHtml(), "text/html");
    } catch (error) {
      return errorResponse(error);
    }
  };
}

async function addAssessment(
  runId: string,
  request: Request,
  options: ViewerOptions,
  readRun: (id: string) => Promise<unknown>,
): Promise<Response> {
  if (!options.openToWrite) return json({ error: "prove ui: this viewer cannot add assessments" }, 403);
  let body: { name?: unknown; value?: unknown; rationale?: unknown; source?: unknown; seq?: unknown };
  try {
    body = await request.json();
  } catch {
    return json({ error: "an assessment is a JSON object with a name and a value" }, 400);
  }
  if (typeof body?.name !== "string" || body.name.trim() === "" || body.value === undefined) {
    return json({ error: "an assessment needs a name (text) and a value" }, 400);
  }
  await readRun(runId);
  const store = await options.openToWrite();
  try {
    const assessment = await questionsOf(store, "adding an assessment").assess(
      typeof body.seq === "number" ? { run: runId, seq: body.seq } : runId,
      body.name.trim(),
      body.value,
      {
        ...(typeof body.rationale === "string" && body.rationale !== "" ? { rationale: body.rationale } : {}),
        ...(typeof body.source === "string" && body.source !== "" ? { source: body.source } : {}),
      },
    );
    return json(assessment, 201);
  } finally {
    await store.close();
  }
}

/** Server-sent events of a running run: `event`, `text` and `end`; a run that has ended gives `end` at once. */
async function liveStream(
  store: EvidenceStore,
  record: RunRecord,
  options: RunViewOptions,
  q: URLSearchParams,
): Promise<Response> {
  const view = await runView(store, record, { policy: options.policy }).catch(() => null);
  const after = number(q.get("after")) ?? -1;
  const encoder = new TextEncoder();
  // Stopped when the page goes away (the stream is cancelled), not by the request's signal, which Deno also
  // aborts when a response is delivered.
  const stop = new AbortController();
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      const send = (event: string, data: unknown) => {
        try {
          controller.enqueue(encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`));
        } catch {
          stop.abort();
        }
      };
      const beat = setInterval(() => {
        try {
          controller.enqueue(encoder.encode(": still here\n\n"));
        } catch {
          stop.abort();
        }
      }, 15000);
      try {
        if (view === null || !view.running) send("end", { status: view?.status ?? "unknown" });
        else {
          for await (const item of liveTail(record, { level: view.level, after, signal: stop.signal })) {
            if (item.kind === "event") send("event", item.event);
            else if (item.kind === "text") send("text", { text: item.text });
            else send("end", { status: item.status });
          }
        }
      } catch (error) {
        send("problem", { error: (error as Error).message });
      } finally {
        clearInterval(beat);
        try {
          controller.close();
        } catch { /* the page went away */ }
      }
    },
    cancel() {
      stop.abort();
    },
  });
  return new Response(body, {
    headers: { ...SECURITY_HEADERS, "content-type": "text/event-stream; charset=utf-8" },
  });
}

/**
 * Serves the viewer on 127.0.0.1.
 *
 * @param store The store to show; it stays open while the viewer runs, and the caller closes it after.
 * @param options The policy, the port (5000 by default, 0 for a free one), the token (random by default).
 * @returns The running viewer, with the URL to open.
 * @throws ProveviError when the port is taken.
 * @example
 * ```ts
 * import { serveViewer } from "./viewer_server.ts";
 * // await using viewer = await serveViewer(store, { policy, port: 0 });
 * // console.log(viewer.url);
 * ```
 */
export function serveViewer(store: EvidenceStore, options: ServeViewerOptions): Promise<Viewer> {
  const token = options.token ?? newToken();
  const wanted = options.port ?? 5000;
  let handler: ((request: Request) => Promise<Response>) | null = null;
  let server: Deno.HttpServer<Deno.NetAddr>;
  try {
    server = Deno.serve({
      hostname: "127.0.0.1",
      port: wanted,
      onListen: () => {},
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
  };
  return Promise.resolve({
    url: `http://127.0.0.1:${port}/?token=${token}`,
    port,
    token,
    finished: server.finished,
    shutdown,
    [Symbol.asyncDispose]: shutdown,
  });
}

/** A row of the runs page cut to a level: names need `names`, token counts and costs `usage`. */
function rowAtLevel(row: RunRow, level: Level | null): RunRow {
  if (level === "usage" || level === "bodies") return row;
  const cut: RunRow = { ...row, tokens: null, cost: null };
  if (level === "names") return cut;
  return { ...cut, agent: null, agent_version: null, model: null, experiment: null };
}

/**
 * The span receiver as a long-lived daemon for many runs at once (`prove serve`), with the same intake as
 * `receiver()`. Nobody but a run's writer may touch the run:
 *
 * - every request carries a credential (`Authorization: Bearer …`), checked before any other work: the daemon's
 *   secret, made at start and kept in a file only its user can read, to open a run (`POST /runs`) or list the
 *   open ones (`GET /runs`); a run's writer key to seal it (`POST /runs/<handle>/seal`); a run's ingest key, which
 *   its writer hands to its program, to send the run's spans (`POST /runs/<handle>/v1/traces`). A run's ID opens
 *   nothing, and each key opens one door of one run. Keys are compared in constant time. Without the right one:
 *   401, the same whether the run exists or not;
 * - a `Host` other than the daemon's own is refused (421, DNS rebinding), and so is a request from a web page of
 *   another origin (403, a cross-site POST);
 * - a run opens once, for the writer that opens it, only while the store has it live (unsealed, its writer
 *   holding the writer's lock); each request for it checks that again, so a run sealed or cut in the store since
 *   takes no more spans (409) and the daemon lets go of what it held for it;
 * - what a run may send is bounded (`RunBudget`): past it the run is refused (413), its writer is told at the
 *   seal, and the spans held for it are let go. The daemon holds at most `maxRuns` open runs, and at most
 *   `maxHeldBytes` of spans for them all (503 past that, which an exporter sends again later).
 *
 * What a run sends is written to the run's folder as it arrives, one append a request before it is answered: a
 * protobuf body, checked, to `received.spans`, whose rows the run's writer makes as it takes it; an OTLP/JSON
 * body to `received-json.spans`, after its rows to `spans.jsonl` (`daemon_run.ts`). Only the run's own writer may
 * append to its hash chain, so the daemon hands it the events that name the bodies (one `spans_received` a
 * request) at the seal, and the writer takes the bodies from its folder (`daemon_client.ts`).
 * @module
 */
import type { RunRecord } from "../evidence/record.ts";
import { checkRunId } from "../evidence/record.ts";
import type { EventInit } from "../evidence/chain.ts";
import { crossSite, localHosts, refusedHost } from "../guard/local_request.ts";
import { bearerOf, newSecret, sameSecret, secretDigest } from "../guard/local_secret.ts";
import { shutdownWithin } from "../guard/local_server.ts";
import {
  bodyReader,
  type DoorLimits,
  type DoorRefusal,
  dropBody,
  readBytesCapped,
  serveDoor,
} from "../guard/mod.ts";
import { DaemonRun, storeState, storeStateNow } from "./daemon_run.ts";
import type { RunLimits } from "./run_budget.ts";
import { type IntakeOptions, otlpError, takeTraces } from "./span_intake.ts";

/** A store the daemon finds runs in: `readRun` gives a run's folder, where its span rows go. */
export interface DaemonStore {
  readRun(runId: string): Promise<RunRecord>;
}

/**
 * What a run's writer gets back at its seal: the events to append to its chain, in the order the daemon took
 * them. Each `spans_received` event names a body that the daemon wrote to the run's `received.spans` or
 * `received-json.spans`.
 */
export interface SealedSpans {
  run_id: string;
  spans: number;
  refused: number;
  events: Omit<EventInit, "actor">[];
}

/** What `POST /runs` answers: the run's addresses and keys, for its writer only. */
export interface OpenedRun {
  run_id: string;
  /** The base an OTLP exporter takes as `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  endpoint: string;
  traces_url: string;
  seal_url: string;
  /** The ingest key: the program sends spans with `Authorization: Bearer <ingest_key>`. */
  ingest_key: string;
  /** The writer key: the writer seals with `Authorization: Bearer <writer_key>`. */
  writer_key: string;
}

/** Options of {@linkcode SpanDaemon.start}. */
export interface SpanDaemonOptions extends IntakeOptions {
  /** The port on 127.0.0.1; a free one by default. */
  port?: number;
  /** The address to listen on: 127.0.0.1 by default. Its name is accepted as a `Host` too. */
  hostname?: string;
  /** The daemon's secret; a new random one by default. */
  secret?: string;
  /** What one run may send in all. */
  limits?: RunLimits;
  /** The most runs open at once; 64 by default. */
  maxRuns?: number;
  /** The most bytes of spans (bodies, unpacked) kept for all open runs at once, until their seal; 1 GiB by default. */
  maxHeldBytes?: number;
  /** How often open runs are checked against the store, in seconds; 15 by default. */
  sweepSeconds?: number;
  /** The limits of its door (`serveDoor`): slow heads and bodies, idle connections, how many at once. */
  doorLimits?: DoorLimits;
}

/** The most runs open at once, by default. */
export const DEFAULT_MAX_RUNS = 64;
/** The most bytes of spans held for all open runs at once, by default: 1 GiB. */
export const DEFAULT_MAX_HELD_BYTES = 1024 * 1024 * 1024;
/** Sealed runs remembered (to answer their late spans 409), at most. */
const MAX_SEALED = 4096;
/** The largest body of `POST /runs`. */
const MAX_OPEN_BODY = 4096;
const HANDLE = "([0-9a-f]{32})";

type Door = "daemon" | "writer" | "ingest";
interface Route {
  method: string;
  path: RegExp;
  door: Door;
  otlp: boolean;
}
const ROUTES: Record<"open" | "list" | "traces" | "seal", Route> = {
  open: { method: "POST", path: /^\/runs$/, door: "daemon", otlp: false },
  list: { method: "GET", path: /^\/runs$/, door: "daemon", otlp: false },
  traces: { method: "POST", path: new RegExp(`^/runs/${HANDLE}/v1/traces$`), door: "ingest", otlp: true },
  seal: { method: "POST", path: new RegExp(`^/runs/${HANDLE}/seal$`), door: "writer", otlp: false },
};
/** A digest no key has, compared against when a handle names no run, so that both take the same time. */
const NO_RUN = secretDigest(newSecret());

function refuse(status: number, message: string, otlp: boolean, request: Request): Response {
  void dropBody(request);
  const headers: Record<string, string> = { "cache-control": "no-store" };
  if (status === 401) headers["www-authenticate"] = 'Bearer realm="prove serve"';
  const response = otlp
    ? otlpError(status, message, request.headers.get("content-type"))
    : Response.json({ error: message }, { status });
  for (const [k, v] of Object.entries(headers)) response.headers.set(k, v);
  return response;
}

/**
 * The span daemon.
 *
 * @example
 * ```ts
 * import { SpanDaemon } from "./span_daemon.ts";
 * declare const store: import("./span_daemon.ts").DaemonStore;
 * await using daemon = SpanDaemon.start(store);
 * const opened = await fetch(`${daemon.url}/runs`, {
 *   method: "POST",
 *   headers: { authorization: `Bearer ${daemon.secret}`, "content-type": "application/json" },
 *   body: JSON.stringify({ run_id: "run-20261130T120000Z-0000abcd" }),
 * });
 * const { traces_url, ingest_key, seal_url, writer_key } = await opened.json();
 * // … the run's program exports to traces_url with `Authorization: Bearer <ingest_key>`; at the end:
 * const sealed = await fetch(seal_url, { method: "POST", headers: { authorization: `Bearer ${writer_key}` } });
 * ```
 */
export class SpanDaemon implements AsyncDisposable {
  readonly #server: Deno.HttpServer<Deno.NetAddr>;
  readonly #runs = new Map<string, DaemonRun>();
  readonly #opening = new Set<string>();
  readonly #store: DaemonStore;
  readonly #options: SpanDaemonOptions;
  readonly #secret: string;
  readonly #secretDigest: Uint8Array;
  readonly #hosts: string[];
  readonly #refusals = new Map<number, number>();
  readonly #cut = new Map<DoorRefusal["limit"], number>();
  readonly #sweeper: ReturnType<typeof setInterval>;
  #closed: Promise<void> | null = null;
  readonly #stopped = Promise.withResolvers<void>();

  private constructor(store: DaemonStore, options: SpanDaemonOptions) {
    this.#store = store;
    this.#options = options;
    this.#secret = options.secret ?? newSecret();
    this.#secretDigest = secretDigest(this.#secret);
    const hostname = options.hostname ?? "127.0.0.1";
    this.#server = serveDoor(
      {
        hostname,
        port: options.port ?? 0,
        ...(options.doorLimits ? { limits: options.doorLimits } : {}),
        // every body is read through bodyReader (or dropped with dropBody): the bytes pass once
        handlerReadsBodies: true,
        onRefusal: (refusal) => {
          if (refusal.status === 0) this.#cut.set(refusal.limit, (this.#cut.get(refusal.limit) ?? 0) + 1);
          else this.#refusals.set(refusal.status, (this.#refusals.get(refusal.status) ?? 0) + 1);
        },
      },
      (request) => this.#handle(request),
    );
    this.#hosts = localHosts(this.#server.addr.port, [hostname]);
    this.#sweeper = setInterval(() => void this.sweep(), (options.sweepSeconds ?? 15) * 1000);
    Deno.unrefTimer(this.#sweeper);
  }

  /**
   * Starts the daemon.
   *
   * @param store The store the runs are in; their span rows go to their folders.
   * @param options The port, the address, the secret, the limits.
   * @returns The daemon, listening.
   * @throws Deno.errors.AddrInUse when the port is taken.
   * @throws RangeError when a limit is not a whole number above zero.
   */
  static start(store: DaemonStore, options: SpanDaemonOptions = {}): SpanDaemon {
    const maxRuns = options.maxRuns ?? DEFAULT_MAX_RUNS;
    if (!Number.isSafeInteger(maxRuns) || maxRuns < 1) {
      throw new RangeError(`maxRuns is ${maxRuns}: give a whole number above zero`);
    }
    if (options.secret !== undefined && options.secret.length < 32) {
      throw new RangeError("a daemon's secret has at least 32 characters: leave it out for a random one");
    }
    return new SpanDaemon(store, options);
  }

  /** `http://127.0.0.1:<port>`. */
  get url(): string {
    const { hostname, port } = this.#server.addr;
    return `http://${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`;
  }

  /** The port it listens on. */
  get port(): number {
    return this.#server.addr.port;
  }

  /** The daemon's secret, which opens and lists runs: for its connection file. */
  get secret(): string {
    return this.#secret;
  }

  /** The runs open now: their IDs. */
  get open(): string[] {
    return [...this.#runs.values()].filter((r) => !r.sealed).map((r) => r.runId);
  }

  /** The requests refused so far, by HTTP status (408 and 503 from the door's limits among them). */
  get refusals(): Record<number, number> {
    return Object.fromEntries(this.#refusals);
  }

  /** The connections the door closed unanswered so far (no request read), by the limit they passed. */
  get cut(): Partial<Record<DoorRefusal["limit"], number>> {
    return Object.fromEntries(this.#cut);
  }

  #refuse(status: number, message: string, route: Route | null, request: Request): Response {
    this.#refusals.set(status, (this.#refusals.get(status) ?? 0) + 1);
    return refuse(status, `prove serve: ${message}`, route?.otlp ?? false, request);
  }

  #handle(request: Request): Promise<Response> | Response {
    const host = refusedHost(request, this.#hosts);
    if (host !== null) {
      return this.#refuse(
        421,
        `refused the Host "${host.slice(0, 100)}": send requests to ${this.url}`,
        null,
        request,
      );
    }
    const site = crossSite(request, this.#hosts);
    if (site !== null) {
      return this.#refuse(
        403,
        `refused a request from a web page (${site}): only programs may use the daemon`,
        null,
        request,
      );
    }
    const path = new URL(request.url).pathname;
    const found = Object.entries(ROUTES).find(([, r]) => r.path.test(path));
    const [name, route] = found ?? [null, null];
    const handle = route?.path.exec(path)?.[1] ?? null;
    const run = handle === null ? undefined : this.#runs.get(handle);
    const bearer = bearerOf(request);
    const door = route?.door ?? "daemon";
    const allowed = door === "daemon"
      ? sameSecret(bearer, this.#secretDigest)
      : sameSecret(bearer, (door === "ingest" ? run?.ingestDigest : run?.writerDigest) ?? NO_RUN) && !!run;
    if (!allowed) {
      return this.#refuse(
        401,
        door === "daemon"
          ? "this request needs the daemon's secret (Authorization: Bearer <secret>), from the file prove serve printed"
          : `no open run takes this key here: send the run's ${door} key as Authorization: Bearer <key>`,
        route,
        request,
      );
    }
    if (route === null) {
      return this.#refuse(404, `nothing at ${request.method} ${path.slice(0, 100)}`, null, request);
    }
    if (request.method !== route.method) {
      return this.#refuse(405, `${request.method} is not allowed here: use ${route.method}`, route, request);
    }
    if (name === "open") return this.#open(request);
    if (name === "list") {
      return Response.json({ open: this.open }, { headers: { "cache-control": "no-store" } });
    }
    if (name === "traces") return this.#traces(request, run!);
    return this.#seal(request, run!);
  }

  async #open(request: Request): Promise<Response> {
    const refused = (status: number, message: string) => this.#refuse(status, message, ROUTES.open, request);
    const type = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
    if (type !== "application/json") {
      return refused(415, 'send {"run_id": "<the run\'s ID>"} as application/json');
    }
    const runId = await runIdOf(request);
    if (runId === null) return refused(400, 'send {"run_id": "<the run\'s ID>"}');
    if (runId.status === 413) {
      return refused(413, `the body is over ${MAX_OPEN_BODY} bytes; send only the run's ID`);
    }
    const id = runId.id;
    if (this.#opening.has(id) || [...this.#runs.values()].some((r) => r.runId === id)) {
      return refused(
        409,
        `run ${id} was opened with this daemon already; only the writer that opened it may use it`,
      );
    }
    if (this.open.length >= (this.#options.maxRuns ?? DEFAULT_MAX_RUNS)) {
      return refused(
        503,
        `the daemon holds its limit of ${this.open.length} open runs; seal some, or start another`,
      );
    }
    this.#opening.add(id);
    try {
      return await this.#openRun(id, request);
    } finally {
      this.#opening.delete(id);
    }
  }

  async #openRun(id: string, request: Request): Promise<Response> {
    const refused = (status: number, message: string) => this.#refuse(status, message, ROUTES.open, request);
    let record: RunRecord;
    try {
      record = await this.#store.readRun(id);
    } catch {
      return refused(404, `the daemon's store has no run ${id}; open the run in the store first`);
    }
    const state = await storeState(record);
    if (record.folder === null || state !== "live") {
      return refused(
        409,
        `run ${id} ${
          state === "sealed"
            ? "is sealed"
            : record.folder === null
            ? "has no folder here"
            : "was cut (its writer is gone)"
        }; it takes no spans`,
      );
    }
    const { run, keys } = DaemonRun.open(id, { record, limits: this.#options.limits ?? {} });
    const handle = newSecret().slice(0, 32);
    this.#runs.set(handle, run);
    this.#forgetSealed();
    const base = `${this.url}/runs/${handle}`;
    const opened: OpenedRun = {
      run_id: id,
      endpoint: base,
      traces_url: `${base}/v1/traces`,
      seal_url: `${base}/seal`,
      ingest_key: keys.ingest,
      writer_key: keys.writer,
    };
    return Response.json(opened, { status: 201, headers: { "cache-control": "no-store" } });
  }

  #traces(request: Request, run: DaemonRun): Promise<Response> {
    return run.queue(async () => {
      if (run.sealed) {
        const why = run.released ?? "its writer sealed it";
        return this.#refuse(409, `run ${run.runId} takes no more spans: ${why}`, ROUTES.traces, request);
      }
      const full = this.#full();
      if (full !== null) {
        run.refused++;
        return this.#refuse(503, full, ROUTES.traces, request);
      }
      // The store is asked while the body is read and decoded, and answers before anything is written: a run
      // sealed or cut there since takes none of these spans, at no wait of its own.
      const state = storeStateNow(run.inStore, run.lock).catch(() => null);
      const admit = async () => {
        const now = await state;
        if (now === "live") return null;
        if (now === null) {
          return {
            status: 503,
            message: `prove serve: the state of run ${run.runId} in the store cannot be read; send again`,
          };
        }
        run.release(`it is ${now} in the store`, { tellWriter: false });
        return { status: 409, message: `prove serve: run ${run.runId} takes no more spans: ${run.released}` };
      };
      return await takeTraces(request, {
        run,
        rows: { addSpans: (_, s) => Promise.resolve(run.addRows(s)) },
        budget: run.budget,
        admit,
      }, {
        ...this.#options,
        onResult: (r) => {
          if (r.status !== 200) {
            run.refused++;
            this.#refusals.set(r.status, (this.#refusals.get(r.status) ?? 0) + 1);
          }
          this.#options.onResult?.(r);
        },
      });
    });
  }

  #seal(request: Request, run: DaemonRun): Promise<Response> {
    void dropBody(request);
    return run.queue(() => {
      if (run.sealed) {
        const why = run.released ?? "its writer sealed it already";
        return Promise.resolve(
          this.#refuse(409, `run ${run.runId} cannot be sealed here: ${why}`, ROUTES.seal, request),
        );
      }
      run.sealed = true;
      run.closeFile();
      const sealed: SealedSpans = {
        run_id: run.runId,
        spans: run.spans,
        refused: run.refused,
        events: [...run.events],
      };
      run.events.length = 0;
      return Promise.resolve(Response.json(sealed, { headers: { "cache-control": "no-store" } }));
    });
  }

  /**
   * Why the daemon takes no more spans for now, or null: the spans held for all open runs reached their limit.
   * 503, which an OTLP exporter sends again later, when runs have sealed and been let go.
   */
  #full(): string | null {
    const max = this.#options.maxHeldBytes ?? DEFAULT_MAX_HELD_BYTES;
    let held = 0;
    for (const r of this.#runs.values()) if (!r.sealed && r.released === null) held += r.budget.bytes;
    return held < max
      ? null
      : `the daemon holds its limit of ${max} bytes of spans for its open runs; send again once runs have sealed`;
  }

  /**
   * Checks each open run against the store, and lets go of those sealed or cut there since: their writer will
   * not seal them here. The daemon does this by itself every `sweepSeconds`.
   *
   * @returns The IDs of the runs let go.
   */
  async sweep(): Promise<string[]> {
    const gone: string[] = [];
    for (const run of this.#runs.values()) {
      if (run.sealed) continue;
      const state = await storeState(run.inStore);
      if (state === "live" || run.sealed) continue;
      run.release(`it is ${state} in the store`, { tellWriter: false });
      gone.push(run.runId);
    }
    return gone;
  }

  /** Forgets the oldest sealed runs past {@linkcode MAX_SEALED}: their late spans then get 401, not 409. */
  #forgetSealed(): void {
    let sealed = 0;
    for (const run of this.#runs.values()) if (run.sealed) sealed++;
    for (const [handle, run] of this.#runs) {
      if (sealed <= MAX_SEALED) break;
      if (run.sealed) {
        this.#runs.delete(handle);
        sealed--;
      }
    }
  }

  /**
   * Stops listening: the requests under way have 2 s to end, so that a stranger's request that never ends
   * cannot hold the daemon open.
   */
  close(): Promise<void> {
    clearInterval(this.#sweeper);
    return this.#closed ??= shutdownWithin(this.#server).then(() => this.#stopped.resolve());
  }

  /** Stops listening (`await using`). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** Waits until the daemon stops (`close`, or the server's end). */
  get finished(): Promise<void> {
    return Promise.race([this.#server.finished, this.#stopped.promise]);
  }
}

/** The run ID of an open request's body, read with a cap: null when it is not `{"run_id": "<an ID>"}`. */
async function runIdOf(request: Request): Promise<{ status: 200; id: string } | { status: 413 } | null> {
  const length = Number(request.headers.get("content-length") ?? NaN);
  if (length > MAX_OPEN_BODY) {
    await dropBody(request);
    return { status: 413 };
  }
  const reader = bodyReader(request);
  if (reader === null) return null;
  let bytes: Uint8Array;
  try {
    bytes = await readBytesCapped(reader, {
      max: MAX_OPEN_BODY,
      tooLarge: () => new RangeError("too large"),
    });
  } catch (error) {
    return error instanceof RangeError ? { status: 413 } : null;
  }
  let id: unknown;
  try {
    id = (JSON.parse(new TextDecoder().decode(bytes)) as { run_id?: unknown } | null)?.run_id;
  } catch {
    return null;
  }
  if (typeof id !== "string") return null;
  try {
    checkRunId(id);
  } catch {
    return null;
  }
  return { status: 200, id };
}

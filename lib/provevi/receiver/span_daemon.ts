/**
 * The span receiver as a long-lived daemon for many runs at once (`prove serve`), with the same intake as
 * `receiver()`. A run opens with the daemon (`POST /runs`) and gets a traces URL of its own, under a token only
 * the run's owner knows; its program exports spans there; the run seals with the daemon (`POST
 * /runs/<token>/seal`), and from then on the daemon refuses its spans (409), as it refuses spans for any run
 * that is not open. Span rows go to the store at once; the `span_recorded` events are handed back to the run's
 * owner at the seal, with their payloads, because only the run's own writer may append to its hash chain.
 *
 * Use it when runs live in containers or on other machines than the store, or when many runs at once would each
 * start a receiver: one port to open in a firewall, one process that writes span rows.
 * @module
 */
import { createHash } from "node:crypto";
import type { EventInit } from "../evidence/chain.ts";
import type { RunRecord } from "../evidence/record.ts";
import { appendSpansFile } from "../evidence/spans_file.ts";
import { type IntakeOptions, type ReceiverRun, type SpanRows, takeTraces } from "./span_intake.ts";

/** A store the daemon finds runs in: `readRun` gives a run's folder, where its span rows go. */
export interface DaemonStore {
  readRun(runId: string): Promise<RunRecord>;
}

/** What a run gets back at its seal: the events to append to its chain, and their payloads (base64). */
export interface SealedSpans {
  run_id: string;
  spans: number;
  refused: number;
  events: Omit<EventInit, "actor">[];
  payloads: Record<string, string>;
}

const utf8 = new TextEncoder();

function bytesOf(content: unknown): Uint8Array {
  if (content instanceof Uint8Array) return content;
  return utf8.encode(typeof content === "string" ? content : JSON.stringify(content) ?? "null");
}

/** A run open with the daemon: its events wait in memory for the seal. */
class BufferedRun implements ReceiverRun {
  sealed = false;
  spans = 0;
  refused = 0;
  readonly events: Omit<EventInit, "actor">[] = [];
  readonly payloads = new Map<string, Uint8Array>();
  #tail: Promise<unknown> = Promise.resolve();
  constructor(readonly runId: string) {}
  record(init: Omit<EventInit, "actor">): Promise<unknown> {
    if (this.sealed) return Promise.reject(new Error(`run ${this.runId} is sealed`));
    this.events.push(init);
    return Promise.resolve();
  }
  payload(content: unknown): Promise<string> {
    const bytes = bytesOf(content);
    const sha = createHash("sha256").update(bytes).digest("hex");
    this.payloads.set(sha, bytes);
    return Promise.resolve(sha);
  }
  /** Runs one request after the previous ones of this run, so the events keep the order of the requests. */
  queue(fn: () => Promise<Response>): Promise<Response> {
    const next = this.#tail.then(fn, fn);
    this.#tail = next.catch(() => {});
    return next;
  }
  async settle(): Promise<void> {
    await this.#tail;
  }
}

/** Options of {@linkcode SpanDaemon.start}. */
export interface SpanDaemonOptions extends IntakeOptions {
  /** The port on 127.0.0.1; a free one by default. */
  port?: number;
  /** The address to listen on: 127.0.0.1 by default. */
  hostname?: string;
}

/**
 * The span daemon.
 *
 * @example
 * ```ts
 * import { SpanDaemon } from "./span_daemon.ts";
 * await using daemon = SpanDaemon.start({});
 * const run = await fetch(`${daemon.url}/runs`, { method: "POST", body: JSON.stringify({ run_id: "run-x" }) });
 * const { traces_url, seal_url } = await run.json();
 * // … the run's program exports to traces_url; at the end:
 * const sealed = await (await fetch(seal_url, { method: "POST" })).json();
 * ```
 */
export class SpanDaemon implements AsyncDisposable {
  readonly #server: Deno.HttpServer<Deno.NetAddr>;
  readonly #runs = new Map<string, { run: BufferedRun; rows: SpanRows }>();
  readonly #store: DaemonStore;
  readonly #options: SpanDaemonOptions;

  private constructor(store: DaemonStore, options: SpanDaemonOptions) {
    this.#store = store;
    this.#options = options;
    this.#server = Deno.serve(
      { hostname: options.hostname ?? "127.0.0.1", port: options.port ?? 0, onListen: () => {} },
      (request) => this.#handle(request),
    );
  }

  /**
   * Starts the daemon.
   *
   * @param store The store the runs are in; their span rows go to their folders.
   * @param options The port, the address, the body size limit.
   * @returns The daemon, listening.
   * @throws Deno.errors.AddrInUse when the port is taken.
   */
  static start(store: DaemonStore, options: SpanDaemonOptions = {}): SpanDaemon {
    return new SpanDaemon(store, options);
  }

  /** `http://127.0.0.1:<port>`. */
  get url(): string {
    return `http://${this.#server.addr.hostname}:${this.#server.addr.port}`;
  }

  /** The port it listens on. */
  get port(): number {
    return this.#server.addr.port;
  }

  /** The runs open now: their IDs. */
  get open(): string[] {
    return [...this.#runs.values()].filter((r) => !r.run.sealed).map((r) => r.run.runId);
  }

  async #handle(request: Request): Promise<Response> {
    const path = new URL(request.url).pathname;
    if (path === "/runs" && request.method === "POST") return await this.#open(request);
    if (path === "/runs" && request.method === "GET") return Response.json({ open: this.open });
    const traces = path.match(/^\/r\/([0-9a-f]{32})\/v1\/traces$/);
    if (traces) {
      const open = this.#runs.get(traces[1]!) ?? null;
      if (open === null) return await takeTraces(request, null, this.#options);
      const { run, rows } = open;
      return await run.queue(() =>
        takeTraces(request, { run, rows }, {
          ...this.#options,
          onResult: (r) => {
            if (r.status === 200) run.spans += r.spans;
            else run.refused++;
            this.#options.onResult?.(r);
          },
        })
      );
    }
    const seal = path.match(/^\/runs\/([0-9a-f]{32})\/seal$/);
    if (seal && request.method === "POST") return await this.#seal(seal[1]!);
    return Response.json({ error: `not found: ${request.method} ${path}` }, { status: 404 });
  }

  async #open(request: Request): Promise<Response> {
    let runId: unknown;
    try {
      runId = (await request.json())?.run_id;
    } catch {
      runId = undefined;
    }
    if (typeof runId !== "string" || !/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}$/.test(runId)) {
      return Response.json({ error: 'send {"run_id": "<the run\'s ID>"}' }, { status: 400 });
    }
    if ([...this.#runs.values()].some((r) => r.run.runId === runId)) {
      return Response.json({ error: `run ${runId} was opened with this daemon already` }, { status: 409 });
    }
    let record: RunRecord;
    try {
      record = await this.#store.readRun(runId);
    } catch (error) {
      return Response.json({
        error: `the daemon's store has no run ${runId} (${(error as Error).message}); open the run first`,
      }, { status: 404 });
    }
    if (record.folder === null || (await record.manifestText()) !== null) {
      return Response.json({ error: `run ${runId} is sealed, or has no folder here; it takes no spans` }, {
        status: 409,
      });
    }
    const folder = record.folder;
    const token = Array.from(
      crypto.getRandomValues(new Uint8Array(16)),
      (b) => b.toString(16).padStart(2, "0"),
    )
      .join("");
    this.#runs.set(token, {
      run: new BufferedRun(runId),
      rows: { addSpans: (_id, spans) => appendSpansFile(folder, spans) },
    });
    return Response.json({
      run_id: runId,
      endpoint: `${this.url}/r/${token}`,
      traces_url: `${this.url}/r/${token}/v1/traces`,
      seal_url: `${this.url}/runs/${token}/seal`,
    }, { status: 201 });
  }

  async #seal(token: string): Promise<Response> {
    const run = this.#runs.get(token)?.run;
    if (!run) return Response.json({ error: "no run is open under this address" }, { status: 404 });
    if (run.sealed) return Response.json({ error: `run ${run.runId} is sealed already` }, { status: 409 });
    await run.settle();
    run.sealed = true;
    const sealed: SealedSpans = {
      run_id: run.runId,
      spans: run.spans,
      refused: run.refused,
      events: [...run.events],
      payloads: Object.fromEntries(
        [...run.payloads].map((
          [sha, bytes],
        ) => [sha, btoa(Array.from(bytes, (b) => String.fromCharCode(b)).join(""))]),
      ),
    };
    run.events.length = 0;
    run.payloads.clear();
    return Response.json(sealed);
  }

  /** Stops listening. */
  async close(): Promise<void> {
    await this.#server.shutdown();
  }

  /** Stops listening (`await using`). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** Waits until the daemon stops (a signal, or `close`). */
  get finished(): Promise<void> {
    return this.#server.finished;
  }
}

/**
 * Appends what a daemon handed back at a run's seal to the run's chain: stores the payloads, then writes the
 * events in the order the daemon took them.
 *
 * @param run The run's recorder (`record`, `payload`).
 * @param sealed The seal's answer.
 * @returns The number of events written.
 */
export async function appendSealedSpans(
  run: Pick<ReceiverRun, "record" | "recordMany" | "payload">,
  sealed: SealedSpans,
): Promise<number> {
  for (const b64 of Object.values(sealed.payloads)) {
    await run.payload(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)));
  }
  if (run.recordMany) await run.recordMany(sealed.events);
  else for (const init of sealed.events) await run.record(init);
  return sealed.events.length;
}

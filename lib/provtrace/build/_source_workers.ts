/**
 * Workers that prepare a build's runs (`sourceRun`: read, verified, checked against the store's files, mapped to
 * rows) while the build writes the runs before them on its own thread: the two thirds of a build's time that
 * are not the inserts go to the machine's other core.
 *
 * Each worker opens the build's store by its URI, read-only, as the build does, and sends each run back as the
 * `SourceRun` that the build would have made itself. A run the worker could not prepare (its `sourceRun` threw,
 * or the worker failed, or could not open the store) comes back as null, and the build prepares it on its own
 * thread: its error, if it fails there too, is the build's own, with its class and message. A failure costs
 * time, never a check.
 * @module
 */
import type { CatalogChoice, SourceRun } from "./_source_run.ts";
import type { SourceWorkerIn, SourceWorkerOut } from "./_source_worker.ts";

const WORKER_URL = new URL("./_source_worker.ts", import.meta.url);

/**
 * When a build uses workers: how many, and from how many runs. A worker's first run comes back some 0.14 s after
 * it starts (its modules loaded, the store opened, its code not yet optimised), where a run takes some 3-5 ms: in
 * fresh processes on the 2-core machine, builds of 64 and 128 runs were no faster on a worker, and under another
 * process's load, 256 were 8% slower and 512 mostly faster; 1,000 took 30-40% less time, quiet or not. Tests
 * set them to build the same runs both ways.
 */
export const SOURCE_WORKERS = { count: 1, minRuns: 256 };

/** How long the workers are given to end their runs under way and close the store, before they are stopped. */
const CLOSE_WAIT_MS = 10_000;

/** What each worker opens: the store's URI and runs root, and how it prepares runs. */
interface WorkerStore {
  uri: string;
  runs?: string;
  allowUnverified: boolean;
  catalog?: CatalogChoice;
}

/** One worker, and the runs it was sent that it has not answered, by index. */
interface Held {
  worker: Worker | null;
  awaited: Map<number, (run: SourceRun | null) => void>;
  closed: Promise<void>;
}

/**
 * Workers that prepare runs of one store; closed (each ends its runs under way and closes its store) when
 * disposed.
 *
 * @example
 * ```ts
 * import { SourceWorkers } from "./_source_workers.ts";
 * await using workers = SourceWorkers.start(1, { uri: "file", allowUnverified: false });
 * // const run = await workers.prepare(0, runId) ?? await sourceRun(store, runId);
 * ```
 */
export class SourceWorkers implements AsyncDisposable {
  readonly #held: Held[] = [];

  private constructor() {}

  /**
   * Starts `count` workers on the store.
   *
   * @param count How many workers.
   * @param open The store's URI and runs root, as the build opened it, whether a run that does not verify is
   * mapped anyway, and the catalog's config file and tenant.
   */
  static start(count: number, open: WorkerStore): SourceWorkers {
    const workers = new SourceWorkers();
    for (let n = 0; n < count; n++) workers.#held.push(workers.#startOne(open));
    return workers;
  }

  #startOne(open: WorkerStore): Held {
    let closed!: () => void;
    const held: Held = { worker: null, awaited: new Map(), closed: new Promise((r) => closed = r) };
    try {
      held.worker = new Worker(WORKER_URL, { type: "module" });
    } catch {
      closed();
      return held; // no worker: every run is prepared by the build
    }
    const worker = held.worker;
    worker.onmessage = (event: MessageEvent<SourceWorkerOut>) => {
      const m = event.data;
      if (m.op === "run") {
        held.awaited.get(m.i)?.(m.run);
        held.awaited.delete(m.i);
      } else if (m.op === "failed") this.#fail(held);
      else closed();
    };
    worker.onerror = (event: ErrorEvent) => {
      event.preventDefault();
      this.#fail(held);
      closed();
    };
    worker.onmessageerror = () => this.#fail(held);
    const message: SourceWorkerIn = {
      op: "open",
      uri: open.uri,
      ...(open.runs === undefined ? {} : { runs: open.runs }),
      allowUnverified: open.allowUnverified,
      ...(open.catalog === undefined ? {} : { catalog: open.catalog }),
    };
    worker.postMessage(message);
    return held;
  }

  /**
   * Sends run `i` to a worker to prepare.
   *
   * @returns The prepared run, or null when no worker prepared it (the caller prepares it itself).
   */
  prepare(i: number, runId: string): Promise<SourceRun | null> {
    const held = this.#held[i % this.#held.length];
    if (held === undefined || held.worker === null) return Promise.resolve(null);
    const worker = held.worker;
    return new Promise((resolve) => {
      held.awaited.set(i, resolve);
      const message: SourceWorkerIn = { op: "run", i, runId };
      worker.postMessage(message);
    });
  }

  /** The worker failed: it is stopped, and each run it has not answered is the caller's to prepare. */
  #fail(held: Held): void {
    held.worker?.terminate();
    held.worker = null;
    for (const resolve of held.awaited.values()) resolve(null);
    held.awaited.clear();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await Promise.all(this.#held.map(async (held) => {
      const worker = held.worker;
      if (worker === null) return;
      const message: SourceWorkerIn = { op: "close" };
      worker.postMessage(message);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<void>((r) => timer = setTimeout(r, CLOSE_WAIT_MS));
      await Promise.race([held.closed, late]);
      clearTimeout(timer);
      this.#fail(held); // ended, or given up on: it is stopped either way
    }));
  }
}

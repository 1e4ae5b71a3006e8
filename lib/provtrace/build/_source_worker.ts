/**
 * The worker of {@linkcode SourceWorkers} (`_source_workers.ts`): it opens the build's store by its URI,
 * read-only, and prepares each run it is sent with `sourceRun`, the very function the build runs on its own
 * thread (the same reads, the same `verifyRun`, the same checks and rows), so that the build writes one run
 * while the next are prepared on the machine's other core.
 *
 * Messages in: `{ op: "open", uri, runs?, allowUnverified, catalog? }` (the catalog's config file and tenant), then `{ op: "run", i, runId }` for each run, and
 * `{ op: "close" }` at the end. Out: `{ op: "run", i, run }` for each run, where `run` is the `SourceRun`
 * (structured clone), or null when `sourceRun` failed here: the build then prepares that run on its own thread
 * and meets the failure itself, with its class and message; `{ op: "failed" }` when the store cannot be opened
 * here (the build prepares every run itself); `{ op: "closed" }` once the runs under way have ended and the store
 * is closed, just before the worker ends.
 * @module
 */
import type { EvidenceStore } from "../../provevi/mod.ts";
import { openStore } from "../../provevi/runs/mod.ts";
import {
  type CatalogChoice,
  catalogOpener,
  type SourceRun,
  sourceRun,
  type SourceRunOptions,
} from "./_source_run.ts";

/** A message to the worker. */
export type SourceWorkerIn =
  | { op: "open"; uri: string; runs?: string; allowUnverified: boolean; catalog?: CatalogChoice }
  | { op: "run"; i: number; runId: string }
  | { op: "close" };

/** A message from the worker. */
export type SourceWorkerOut =
  | { op: "run"; i: number; run: SourceRun | null }
  | { op: "failed" }
  | { op: "closed" };

const scope = globalThis as unknown as {
  postMessage?: (message: SourceWorkerOut) => void;
  onmessage?: unknown;
  close?: () => void;
  WorkerGlobalScope?: unknown;
};
/** How many runs a worker prepares at once. */
const AT_ONCE = 2;

// In a worker (not when the main thread imports the types): open the store, then prepare each run sent.
if (scope.WorkerGlobalScope !== undefined && typeof scope.postMessage === "function") {
  const post = scope.postMessage;
  let store: Promise<EvidenceStore | null> = Promise.resolve(null);
  let options: SourceRunOptions = {};
  const underWay = new Set<Promise<void>>();
  const prepare = async (i: number, runId: string) => {
    const opened = await store;
    let run: SourceRun | null = null;
    if (opened !== null) {
      try {
        run = await sourceRun(opened, runId, options);
      } catch {
        run = null; // the build prepares it itself, and meets the same failure
      }
    }
    try {
      post({ op: "run", i, run });
    } catch {
      post({ op: "run", i, run: null }); // a run that cannot be sent is prepared by the build
    }
  };
  // A few runs at once (each waits on the disk now and then), in the order sent: the build writes them in that
  // order, and holds in memory only the runs under way and those sent.
  const waiting: { i: number; runId: string }[] = [];
  const start = () => {
    while (underWay.size < AT_ONCE && waiting.length) {
      const next = waiting.shift()!;
      const p = prepare(next.i, next.runId);
      underWay.add(p);
      p.finally(() => {
        underWay.delete(p);
        start();
      });
    }
  };
  scope.onmessage = async (event: MessageEvent<SourceWorkerIn>) => {
    const m = event.data;
    if (m.op === "open") {
      options = {
        ...(m.catalog === undefined ? {} : { catalog: catalogOpener(m.catalog) }),
        ...(m.allowUnverified ? { allowUnverified: true } : {}),
      };
      store = openStore(m.uri, { readOnly: true, ...(m.runs === undefined ? {} : { runs: m.runs }) })
        .catch(() => {
          post({ op: "failed" });
          return null;
        });
    } else if (m.op === "run") {
      waiting.push(m);
      start();
    } else {
      // The runs under way end, and the store is closed, before the worker ends; those not begun are not.
      waiting.length = 0;
      await Promise.allSettled([...underWay]);
      await (await store)?.close().catch(() => {});
      post({ op: "closed" });
      scope.close?.();
    }
  };
}

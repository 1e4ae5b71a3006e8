/**
 * The runs page's search: free text and filters that `listRuns` does not answer (verdict, model, tool, cost,
 * an end date) are answered by the viewer's search index (`search_index.ts`), which it builds on the first
 * search, in the background, newest runs first: each run's row from `listRuns` and its digest (its check, and
 * what the level shows). A search covers the runs indexed so far and says how many that is; each later search
 * indexes what changed (new runs, runs that ended) since the last pass.
 * @module
 */
import { join } from "node:path";
import { listRuns, type RunRow } from "../runs/list_runs.ts";
import type { EvidenceStore } from "../store/store.ts";
import { runDigest, type RunDigestOptions } from "./run_digest.ts";
import { rowAtLevel } from "./row_level.ts";
import { SearchIndex, type SearchQuery, type SearchRow } from "./search_index.ts";

/** The runs page's data: a page of runs, and, for a search, how much of the store it covered. */
export interface RunsAnswer {
  runs: (RunRow & { cost?: string | null; digest?: SearchRow["digest"] })[];
  total: number;
  /** True when `total` is a count that stopped: at least that many match. */
  capped?: boolean;
  limit: number;
  offset: number;
  /** The columns the level hides (shown as hidden, never as absent). */
  hidden: string[];
  /** For a search: how many runs are indexed of how many, and whether indexing goes on. */
  search: { indexed: number; total: number; building: boolean; note: string | null } | null;
}

/** The query words that need the search index: the rest `listRuns` answers itself. */
const SEARCH_KEYS = ["q", "verdict", "model", "tool", "until", "min_cost", "max_cost"] as const;

/** True when a runs page's query needs the search index. */
export function needsSearch(query: URLSearchParams): boolean {
  return SEARCH_KEYS.some((k) => (query.get(k) ?? "") !== "");
}

/** Runs listed per step of a pass: a pass reads the list a page at a time. */
const PASS_PAGE = 200;

/** A pass starts at most this often, in milliseconds: the runs page refreshes every two seconds. */
const PASS_EVERY_MS = 3000;

/** The search of one viewer: its index, built and kept up to date in the background. */
export class RunSearch {
  #index: SearchIndex | null = null;
  #folder: string | null = null;
  #pass: Promise<void> | null = null;
  #lastPass = 0;
  #total = 0;
  #closed = false;

  /**
   * @param store The store.
   * @param options The viewer's policy and catalog; `path`, the index's file (a private temporary one by
   *   default, removed at {@linkcode close}), or `:memory:`.
   */
  constructor(
    readonly store: EvidenceStore,
    readonly options: Omit<RunDigestOptions, "text"> & { path?: string; index?: SearchIndex },
  ) {
    if (options.index) this.#index = options.index;
  }

  /** The index, made on first use. */
  get index(): SearchIndex {
    if (this.#index === null) {
      let path = this.options.path;
      if (path === undefined) {
        // A private folder (mode 0700): the index holds what the viewer shows of each run.
        this.#folder = Deno.makeTempDirSync({ prefix: "prove-ui-search-" });
        path = join(this.#folder, "index.db");
      }
      this.#index = new SearchIndex(path);
    }
    return this.#index;
  }

  /**
   * Answers a search from the runs indexed so far, and starts a pass that indexes what changed.
   *
   * @param query The words, filters and page.
   * @returns The page, and how much of the store the index covers.
   */
  async search(query: SearchQuery): Promise<Pick<RunsAnswer, "runs" | "total" | "capped" | "search">> {
    const index = this.index;
    const first = this.#pass === null && this.#lastPass === 0;
    this.refresh();
    // The first search waits for the newest page of runs, so that it answers for them at least.
    if (first) await this.#firstPage;
    const found = index.search(query);
    const indexed = index.count();
    return {
      ...found,
      search: {
        indexed,
        total: Math.max(this.#total, indexed),
        building: this.#pass !== null,
        note: null,
      },
    };
  }

  #firstPage: Promise<void> = Promise.resolve();

  /** Starts a pass over the store's runs when none is running and the last one is old enough. */
  refresh(): void {
    if (this.#closed || this.#pass !== null || Date.now() - this.#lastPass < PASS_EVERY_MS) return;
    let firstDone: () => void = () => {};
    this.#firstPage = new Promise<void>((resolve) => (firstDone = resolve));
    this.#pass = this.#run(() => firstDone()).catch(() => {}).finally(() => {
      firstDone();
      this.#pass = null;
      this.#lastPass = Date.now();
    });
  }

  /** Indexes every run that is new or changed since it was indexed, newest first. */
  async #run(onFirstPage: () => void): Promise<void> {
    for (let offset = 0;; offset += PASS_PAGE) {
      const page = await listRuns(this.store, { limit: PASS_PAGE, offset });
      this.#total = page.total;
      for (const row of page.runs) {
        if (this.#closed) return;
        await this.#indexRun(row);
        // Let requests in between: the index is built by the server that answers the pages.
        await new Promise((resolve) => setTimeout(resolve, 0));
      }
      if (offset === 0) onFirstPage();
      if (page.runs.length < PASS_PAGE) return;
    }
  }

  async #indexRun(row: RunRow): Promise<void> {
    const index = this.index;
    const known = index.known(row.run_id);
    const open = row.status === "running";
    if (known && known.status === row.status && (known.verdict !== null || open)) return;
    // The index holds what the runs page shows: a row cut to the policy's level.
    const shown = rowAtLevel(row, this.options.policy.liveLevel());
    if (open) return index.put(shown, null);
    try {
      const record = await this.store.readRun(row.run_id);
      index.put(shown, await runDigest(this.store, record, { ...this.options, text: true }));
    } catch {
      // A run that cannot be read now (removed, or being written) is tried again by the next pass.
    }
  }

  /** Waits for the pass under way, if any (for tests and benchmarks). */
  async settled(): Promise<void> {
    while (this.#pass) await this.#pass;
  }

  /** Stops indexing, closes the index and removes its private folder. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#pass;
    this.#index?.close();
    if (this.#folder) await Deno.remove(this.#folder, { recursive: true }).catch(() => {});
  }
}

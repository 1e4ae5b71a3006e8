/**
 * The runs page's digests of runs, kept while the viewer runs so that a page that refreshes every two seconds
 * does not check its fifty runs again each time. A digest is kept with a stamp of the run's files (each
 * evidence file's and folder's size, times and inode) and for at most {@linkcode DIGEST_TTL_MS}: a run changed on
 * disk is checked again at once, and any run at least that often. A run's own page always checks it afresh.
 * @module
 */
import { join } from "node:path";
import type { EvidenceStore } from "../store/store.ts";
import { type RunDigest, runDigest, type RunDigestOptions } from "./run_digest.ts";
import { SingleFlight } from "./single_flight.ts";

/** How long a digest is kept at most, in milliseconds. */
export const DIGEST_TTL_MS = 30_000;

/** How many runs are checked at once: the rest wait, so the viewer stays quick on a small machine. */
const AT_ONCE = 2;

/** The stamp of a run folder's evidence: what changes when any of it is written, moved or replaced. */
async function stampOf(folder: string | null): Promise<string | null> {
  if (folder === null) return null;
  const paths = [
    "evidence",
    "evidence/events.jsonl",
    "evidence/manifest.json",
    "evidence/payloads",
    "evidence/attestation.dsse.json",
    "output",
    "bundle.json",
  ];
  const parts: string[] = [];
  for (const path of paths) {
    try {
      const i = await Deno.lstat(join(folder, path));
      parts.push(`${path}:${i.size}:${i.mtime?.getTime()}:${i.ctime?.getTime()}:${i.ino}`);
    } catch {
      parts.push(`${path}:-`);
    }
  }
  return parts.join("|");
}

/** The digests of runs, each computed once per change of the run (or per {@linkcode DIGEST_TTL_MS}). */
export class DigestCache {
  readonly #kept = new Map<string, { stamp: string | null; at: number; digest: RunDigest }>();
  readonly #flight = new SingleFlight<RunDigest>();
  #busy = 0;
  readonly #waiting: (() => void)[] = [];

  /**
   * @param store The store.
   * @param options The viewer's policy and catalog.
   */
  constructor(readonly store: EvidenceStore, readonly options: Omit<RunDigestOptions, "text">) {}

  /**
   * A run's digest, from the cache while the run is unchanged.
   *
   * @param runId The run.
   * @returns The digest.
   * @throws RunNotFound when the store has no such run.
   */
  async digest(runId: string): Promise<RunDigest> {
    const record = await this.store.readRun(runId);
    const stamp = await stampOf(record.folder);
    const kept = this.#kept.get(runId);
    if (kept && kept.stamp === stamp && stamp !== null && Date.now() - kept.at < DIGEST_TTL_MS) {
      return kept.digest;
    }
    return await this.#flight.run(`${runId}\n${stamp}`, async () => {
      await this.#turn();
      try {
        const digest = await runDigest(this.store, record, { ...this.options, text: false });
        if (this.#kept.size >= 10_000) this.#kept.clear();
        // A running run is not kept: its next event changes it.
        if (digest.verdict !== "running") this.#kept.set(runId, { stamp, at: Date.now(), digest });
        return digest;
      } finally {
        this.#busy--;
        this.#waiting.shift()?.();
      }
    });
  }

  async #turn(): Promise<void> {
    while (this.#busy >= AT_ONCE) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    this.#busy++;
  }
}

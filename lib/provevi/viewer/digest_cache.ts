/**
 * The runs page's digests of runs, kept while the viewer runs so that a page that refreshes every two seconds
 * does not check its fifty runs again each time. A digest is kept with a stamp of the run's files (each
 * evidence and output file's size, times and inode; a run of more than 2,000 files is not kept) and for at most
 * {@linkcode DIGEST_TTL_MS}: a run changed on disk is checked again at once, and any run at least that often. A
 * run's own page always checks it afresh.
 *
 * A file system stamps a change with a coarse clock (a few milliseconds; two seconds on some), so a file written
 * twice in one tick of it keeps its stamp: the second write would pass for the first. As git does with its
 * index ("racy clean"), a digest is kept only when every stamped file changed at least {@linkcode RACY_MS} before
 * the stamp was taken; a run changed more recently is checked each time it is asked for.
 * @module
 */
import { join } from "node:path";
import type { EvidenceStore } from "../store/store.ts";
import { type RunDigest, runDigest, type RunDigestOptions } from "./run_digest.ts";
import { SingleFlight } from "./single_flight.ts";

/** How long a digest is kept at most, in milliseconds. */
export const DIGEST_TTL_MS = 30_000;

/**
 * How recent a change may be for a digest to be kept: the coarsest tick of a file system's times (FAT's two
 * seconds; ext4's and tmpfs's are a few milliseconds).
 */
export const RACY_MS = 2_000;

/** How many runs are checked at once: the rest wait, so the viewer stays quick on a small machine. */
const AT_ONCE = 2;

/** The files of a folder that a stamp looks at one by one; a run with more is checked each time it is asked for. */
const STAMP_FILES = 2000;

/** A stamp of files: its text, and the time of the latest change of any of them (milliseconds). */
interface Stamp {
  text: string;
  changed: number;
}

async function stampLine(path: string, name: string): Promise<Stamp> {
  try {
    const i = await Deno.lstat(path);
    const times = [i.mtime?.getTime(), i.ctime?.getTime()];
    // a file system without times gives no tick to trust: as if changed now
    const changed = times.some((t) => t === undefined) ? Infinity : Math.max(...times as number[]);
    return { text: `${name}:${i.size}:${times[0]}:${times[1]}:${i.ino}`, changed };
  } catch {
    return { text: `${name}:-`, changed: -Infinity };
  }
}

/** The files under a folder, to the stamp's bound: null when there are more. */
async function filesUnder(folder: string, prefix = "", out: string[] = []): Promise<string[] | null> {
  try {
    for await (const entry of Deno.readDir(join(folder, prefix))) {
      const name = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (out.length >= STAMP_FILES) return null;
      if (entry.isDirectory) {
        if ((await filesUnder(folder, name, out)) === null) return null;
      } else out.push(name);
    }
  } catch { /* no such folder: nothing under it */ }
  return out;
}

/**
 * The stamp of the files of a run folder that its check reads: what changes when any of them is written, moved
 * or replaced (each file's size, times and inode; a write changes a file's ctime, which no user can set back).
 */
async function stampOf(folder: string | null): Promise<Stamp | null> {
  if (folder === null) return null;
  const names = [
    "evidence",
    "evidence/events.jsonl",
    "evidence/manifest.json",
    "evidence/payloads",
    "output",
    "bundle.json",
    // beside evidence/: the run's check reads it too (check 11), and the run's program can write it
    "assessments.jsonl",
  ];
  const parts = await Promise.all(names.map((n) => stampLine(join(folder, n), n)));
  for (const dir of ["evidence", "output"]) {
    const files = await filesUnder(join(folder, dir));
    // past what a stamp looks at, a file changed in place changes nothing it sees: as if changed now, not kept
    if (files === null) parts.push({ text: `${dir}:many`, changed: Infinity });
    else {parts.push(
        ...await Promise.all(files.sort().map((f) => stampLine(join(folder, dir, f), `${dir}/${f}`))),
      );}
  }
  return { text: parts.map((p) => p.text).join("|"), changed: Math.max(...parts.map((p) => p.changed)) };
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
    const stampedAt = Date.now();
    const found = await stampOf(record.folder);
    const stamp = found === null || found.changed > stampedAt - RACY_MS ? null : found.text;
    const kept = this.#kept.get(runId);
    if (kept && kept.stamp === stamp && stamp !== null && Date.now() - kept.at < DIGEST_TTL_MS) {
      return kept.digest;
    }
    return await this.#flight.run(`${runId}\n${found?.text}`, async () => {
      await this.#turn();
      try {
        const digest = await runDigest(this.store, record, { ...this.options, text: false });
        if (this.#kept.size >= 10_000) this.#kept.clear();
        // A running run is not kept: its next event changes it. Nor is one changed too recently to tell a
        // change in the same tick of the file system's clock (RACY_MS).
        if (digest.verdict !== "running" && stamp !== null) {
          this.#kept.set(runId, { stamp, at: Date.now(), digest });
        }
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

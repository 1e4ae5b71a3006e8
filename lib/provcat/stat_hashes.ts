/**
 * A cache of file hashes keyed by what `stat` says of each file, as git's index keeps one: a file whose device,
 * inode, size, modification and change times are as they were is not read again. It serves the sources of
 * snapshots in stores without versions (a live folder), which must be hashed each time to know which snapshot
 * they are; the snapshot itself is always hashed in full before it is reused.
 * @module
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import { folderHashOf, hashFile, tempIn, walkFiles } from "./_files.ts";
import { readCapped } from "../provevi/evidence/open_file.ts";
import { COMMIT_MAX_BYTES } from "./_capped_read.ts";

/** The most the cache of a source's stats takes (as a commit's map of keys); past it, the hashes are made again. */
const STAT_HASHES_MAX_BYTES = COMMIT_MAX_BYTES;

/** What `stat` says of a file, and the time it was asked. */
export interface FileStat {
  dev: number;
  ino: number;
  size: number;
  mtime: number;
  ctime: number;
}

interface Entry extends FileStat {
  sha256: string;
}

/** The files of a source, by their `/` path under it (`""` for a source that is one file), with their stats. */
export type SourceStats = Map<string, { abs: string; stat: FileStat }>;

/**
 * A file changed within this many milliseconds before it was hashed may change again within the same tick of
 * its timestamps, unseen: such an entry is not kept (git calls these entries racy).
 */
const RACY_MS = 2000;

/**
 * The stat cache of one source folder or file.
 *
 * @example
 * ```ts
 * import { StatHashes } from "./stat_hashes.ts";
 * const hashes = await StatHashes.open("/tmp/cache", "/data/folder");
 * const sha256 = await hashes.hashPath("/data/folder", "folder");
 * await hashes.save();
 * ```
 */
export class StatHashes {
  #entries: Map<string, Entry>;
  #next = new Map<string, Entry>();

  private constructor(readonly file: string, entries: Map<string, Entry>) {
    this.#entries = entries;
  }

  /** Reads the cache of `source` under `cache`; a missing or unreadable cache is an empty one. */
  static async open(cache: string, source: string): Promise<StatHashes> {
    const file = join(cache, "stat-hashes", createHash("sha256").update(source).digest("hex") + ".json");
    let entries = new Map<string, Entry>();
    try {
      // the cache's own file, which another process can write or swap: opened without waiting, and capped
      const parsed = JSON.parse(new TextDecoder().decode(await readCapped(file, STAT_HASHES_MAX_BYTES)));
      if (parsed && typeof parsed === "object") {
        entries = new Map(Object.entries(parsed as Record<string, Entry>));
      }
    } catch { /* no cache yet */ }
    return new StatHashes(file, entries);
  }

  /** The stats of a source's files, without reading them. */
  static async stats(path: string, kind: "file" | "folder"): Promise<SourceStats> {
    const files = kind === "file" ? [{ rel: "", abs: path }] : await walkFiles(path);
    const out: SourceStats = new Map();
    for (const f of files) out.set(f.rel, { abs: f.abs, stat: statKey(await Deno.lstat(f.abs)) });
    return out;
  }

  /** The hash of a source when every file's stat is as cached; null when one is not. */
  known(stats: SourceStats, kind: "file" | "folder"): string | null {
    const sums = new Map<string, string>();
    for (const [rel, { stat }] of stats) {
      const old = this.#entries.get(rel);
      if (!old || !sameStat(old, stat)) return null;
      sums.set(rel, old.sha256);
    }
    for (const [rel, { stat }] of stats) this.#next.set(rel, { ...stat, sha256: sums.get(rel)! });
    return kind === "file" ? sums.get("")! : folderHashOf(sums);
  }

  /**
   * Keeps the hashes of the files that did not change between `before` and `after` and were not changed just
   * before: what was read between the two stats is what the hashes are of.
   */
  learn(before: SourceStats, after: SourceStats, sums: Map<string, string>): void {
    const now = Date.now();
    for (const [rel, { stat }] of before) {
      const later = after.get(rel)?.stat;
      const sha256 = sums.get(rel);
      if (!later || !sha256 || !sameStat(stat, later) || stat.ino === 0 || stat.ctime === 0) continue;
      if (now - stat.ctime <= RACY_MS || now - stat.mtime <= RACY_MS) continue;
      this.#next.set(rel, { ...stat, sha256 });
    }
  }

  /** The SHA-256 of a source, as `hashPath` gives it, reading only the files whose stat changed. */
  async hashPath(path: string, kind: "file" | "folder"): Promise<string> {
    const before = await StatHashes.stats(path, kind);
    const known = this.known(before, kind);
    if (known !== null) return known;
    const sums = new Map<string, string>();
    for (const [rel, { abs, stat }] of before) {
      const old = this.#entries.get(rel);
      sums.set(rel, old && sameStat(old, stat) ? old.sha256 : await hashFile(abs));
    }
    this.learn(before, await StatHashes.stats(path, kind), sums);
    return kind === "file" ? sums.get("")! : folderHashOf(sums);
  }

  /** Writes the entries learned this time (files gone are forgotten). */
  async save(): Promise<void> {
    const dir = join(this.file, "..");
    await Deno.mkdir(dir, { recursive: true });
    const work = await tempIn(join(dir, "..", "tmp"));
    try {
      const tmp = join(work, "hashes.json");
      await Deno.writeTextFile(tmp, JSON.stringify(Object.fromEntries(this.#next)));
      await Deno.rename(tmp, this.file);
    } finally {
      await Deno.remove(work, { recursive: true }).catch(() => {});
    }
  }
}

function statKey(info: Deno.FileInfo): FileStat {
  return {
    dev: info.dev,
    ino: info.ino ?? 0,
    size: info.size,
    mtime: info.mtime?.getTime() ?? 0,
    ctime: info.ctime?.getTime() ?? 0,
  };
}

function sameStat(a: FileStat, b: FileStat): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtime === b.mtime &&
    a.ctime === b.ctime;
}

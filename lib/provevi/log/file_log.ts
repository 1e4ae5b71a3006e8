/**
 * The file store's log, in `<runs root>/.log/`: `tlog/checkpoint` and `tlog/tile/…` as C2SP tlog-tiles lays them
 * out (serve `tlog/` as the log's prefix), `key` (the log's key, mode 0600), `lock` (held by one appender at a
 * time), `index.db` (to find a run's leaf fast: `run_index.ts`), `witnessed` (the latest checkpoint with
 * cosignatures) and `pending.jsonl` (the leaves being appended, so that the next appender finishes the work of one that
 * was killed, when their entry bundle does not say it alone).
 *
 * An append: under the lock, read the checkpoint's size and the edge (or, when the checkpoint is the one this
 * writer committed last, take the tree it kept), write the tiles and entry bundles of the new size at their own
 * names (a partial tile is a new file for each width), the new checkpoint to a temporary file and, unless the
 * append is one leaf of a run in `<runs root>/<run_id>` (whose entry bundle, one past the committed size, is
 * record enough), the pending file naming each leaf's index and run folder; fsync them all, and meanwhile add
 * the run index's rows; rename the checkpoint into place (the commit), on a file thread; fsync the folder;
 * blank the pending file; unlock.
 * The pending file is one file written over in place, never made nor removed: on a journaling file system a
 * name made or removed waits for the journal, which other writers of the disk keep busy, while bytes written
 * over cost little. Every partial tile of a checkpoint's size is kept (C2SP tlog-tiles) until its full tile is written;
 * then the tile's partial ones go, after the lock is released.
 * @module
 */
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { ProveviError } from "../evidence/errors.ts";
import { parseCheckpoint } from "./checkpoint.ts";
import { type LogKey, logKeyOf, newKeyFile } from "./log_key.ts";
import {
  type AppendPlan,
  type AppendResult,
  bundleBytes,
  type LogStorage,
  parseBundle,
  planAppend,
} from "./log_storage.ts";
import { parseNote } from "./note.ts";
import { parseLeaf, type RunLeaf, sameLeaf } from "./run_leaf.ts";
import { entriesPath, TILE_WIDTH, tilePath, type TileRef } from "./tiles.ts";
import { edgeOf, edgeTiles, type TreeEdge } from "./tree_edge.ts";
import { sizeOf } from "./log_proofs.ts";
import { type IndexLine, RunIndex } from "./run_index.ts";
import { completeManifest, sealedAs, writePending } from "./pending_file.ts";
import { syncPaths } from "./sync_paths.ts";
import { LOG_TILE_MAX_BYTES, readLogBytesSync, readLogTextSync } from "./log_file_read.ts";
import { openLogFileSync, writeScratchSync, writeTileSync } from "./log_file_write.ts";
import { EVIDENCE_TEXT_MAX_BYTES } from "../evidence/payload_pack.ts";
import type { CompactRange } from "./compact_range.ts";

export { syncPath, syncPaths } from "./sync_paths.ts";

/** An append prepared under the lock, to be made durable with other files (a run's seal) and committed. */
export interface PreparedAppend {
  /** The indexes of the leaves. */
  readonly indexes: number[];
  /** The new size. */
  readonly size: number;
  /** The new checkpoint. */
  readonly checkpoint: string;
  /** Files written, to fsync before {@linkcode PreparedAppend.commit}. */
  readonly files: string[];
  /** Folders whose new entries to fsync before the commit. */
  readonly dirs: string[];
  /**
   * Adds the run index's rows (hints, each confirmed against its entry before it is used): call it while the
   * files' fsyncs are on their way, so that the work overlaps the wait; else the commit does.
   */
  index(): void;
  /**
   * Renames the checkpoint into place, on a file thread, and meanwhile adds the run index's rows (unless
   * {@linkcode PreparedAppend.index} did): the append is made when the promise resolves. Call {@linkcode PreparedAppend.finish} after it resolves, or
   * {@linkcode PreparedAppend.abort} if it fails.
   */
  commit(): Promise<void>;
  /** Makes the commit durable, blanks the pending file and unlocks. */
  finish(): Promise<void>;
  /**
   * Gives up before the commit and unlocks (the next appender reads the pending file and the entry bundle past
   * the size: a sealed run is appended).
   */
  abort(): void;
  /** The tlog-proof of leaf `index` of this append against its checkpoint (from the tiles in memory). */
  proofOf(index: number): string;
}

/**
 * The file store's log.
 *
 * @example
 * ```ts ignore
 * import { FileLog } from "./file_log.ts";
 * const log = new FileLog("/runs");
 * const { indexes } = await log.append([leaf]);
 * ```
 */
export class FileLog implements LogStorage {
  readonly kind = "file";
  /** The log's folder, `<runs root>/.log`. */
  readonly dir: string;
  readonly #runs: string;
  readonly #index: RunIndex;
  #key: LogKey | null = null;
  #made = false; // the log's folder is known to be there
  /**
   * The tree as this writer's last append left it, keyed by the checkpoint it committed: while the checkpoint
   * on disk is that very text (signed, with its size and root), no other writer appended, and the next append
   * of this writer reads no tile nor bundle and hashes no tile again.
   */
  #kept: KeptTree | null = null;
  #lastRun: { entry: Uint8Array; runId: string } | null = null; // the last leaf's run, parsed once

  /** @param runsRoot The runs root of the file store. */
  constructor(runsRoot: string) {
    this.#runs = runsRoot;
    this.dir = join(runsRoot, ".log");
    this.#index = new RunIndex(this.dir);
  }

  /** Where the log is. */
  get where(): string {
    return this.dir;
  }

  #path(...parts: string[]): string {
    return join(this.dir, ...parts);
  }

  /** The log's key, made (mode 0600) when `create` is set and there is none. */
  async key(options: { create?: boolean } = {}): Promise<LogKey | null> {
    if (this.#key) return this.#key;
    const path = this.#path("key");
    let text: string | null;
    try {
      text = readLogTextSync(path);
    } catch (error) {
      throw new ProveviError(`cannot read the log key ${path}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    if (text === null) {
      if (!options.create) return null;
      text = await this.#makeKey(path);
    }
    this.#key = logKeyOf(text, this.kind, path);
    return this.#key;
  }

  async #makeKey(path: string): Promise<string> {
    await Deno.mkdir(this.dir, { recursive: true });
    const text = JSON.stringify(newKeyFile(), null, 2) + "\n";
    try {
      await Deno.writeTextFile(path, text, { createNew: true, mode: 0o600 });
      await Deno.chmod(path, 0o600);
      await syncPaths([path], [this.dir]);
      return text;
    } catch (error) {
      if (error instanceof Deno.errors.AlreadyExists) return readLogTextSync(path) ?? ""; // another writer made it
      throw error;
    }
  }

  /** The latest checkpoint, or null. */
  checkpoint(): Promise<string | null> {
    // Small files are read at once: an asynchronous read waits for a thread, which on a busy machine is most of
    // a proof's time.
    return Promise.resolve(readLogTextSync(this.#path("tlog", "checkpoint")));
  }

  /** The latest witnessed checkpoint, or null. */
  witnessed(): Promise<string | null> {
    return Promise.resolve(readLogTextSync(this.#path("witnessed")));
  }

  /** Reads tiles; a tile whose width was removed is read from a wider one or the full one. */
  readTiles(tiles: readonly TileRef[]): Promise<Uint8Array[]> {
    return Promise.resolve(tiles.map((t) => this.#readWide(tilePath(t), t.width * 32, t)));
  }

  /** Reads an entry bundle's first `width` entries. */
  readEntries(index: number, width: number): Promise<Uint8Array[]> {
    const bytes = this.#readWide(entriesPath(index, width), 0, { level: -1, index, width });
    const entries = parseBundle(bytes);
    if (entries.length < width) {
      throw new ProveviError(
        `entry bundle ${entriesPath(index, width)} of ${this.dir} holds ${entries.length}`,
      );
    }
    return Promise.resolve(entries.slice(0, width));
  }

  /**
   * Reads `path`, or, when it is not there (a log that kept only the full tile), the full tile or the narrowest
   * wider partial one, with at least `need` bytes.
   */
  #readWide(path: string, need: number, tile: TileRef): Uint8Array {
    const read = (p: string): Uint8Array | null => {
      const bytes = readLogBytesSync(this.#path("tlog", p), LOG_TILE_MAX_BYTES);
      return bytes !== null && bytes.length >= need ? bytes : null;
    };
    const exact = read(path);
    if (exact !== null) return exact;
    if (tile.width < TILE_WIDTH) {
      const full = tile.level < 0
        ? entriesPath(tile.index, TILE_WIDTH)
        : tilePath({ ...tile, width: TILE_WIDTH });
      const widths: number[] = [];
      try {
        for (const e of Deno.readDirSync(this.#path("tlog", `${full}.p`))) {
          const w = Number(e.name);
          if (Number.isInteger(w) && w > tile.width) widths.push(w);
        }
      } catch { /* none wider */ }
      for (const p of [full, ...widths.sort((a, b) => a - b).map((w) => `${full}.p/${w}`)]) {
        const bytes = read(p);
        if (bytes !== null) return bytes;
      }
    }
    throw new ProveviError(
      `the log ${this.dir} lacks ${path}: restore the log from a copy, or run prove log audit`,
    );
  }

  /** The index of a run's leaf: from the run index, checked against the entry, else by reading the entries. */
  async indexOf(runId: string): Promise<number | null> {
    const note = await this.checkpoint();
    if (note === null) return null;
    const size = sizeOf(note);
    return await this.#index.lookup(runId, size, async (index) => {
      try {
        return parseLeaf(await this.#entryAt(index, size)).run_id === runId;
      } catch {
        return false;
      }
    });
  }

  /** The entry at `index` of the log of `size` leaves, from its bundle at the width of that size. */
  async #entryAt(index: number, size: number): Promise<Uint8Array> {
    const bundle = Math.floor(index / TILE_WIDTH);
    const entries = await this.readEntries(bundle, Math.min(TILE_WIDTH, size - bundle * TILE_WIDTH));
    return entries[index % TILE_WIDTH]!;
  }

  /** Appends leaves durably (one fsync round) and signs a checkpoint. */
  async append(leaves: readonly RunLeaf[]): Promise<AppendResult> {
    const prepared = await this.prepare(leaves, null);
    try {
      const synced = syncPaths(prepared.files, prepared.dirs);
      prepared.index();
      await synced;
      await prepared.commit();
    } catch (error) {
      prepared.abort();
      throw error;
    }
    await prepared.finish();
    return { indexes: prepared.indexes, size: prepared.size, checkpoint: prepared.checkpoint };
  }

  /**
   * Prepares an append under the lock: the caller fsyncs `files` and `dirs` with its own, then commits.
   *
   * @param leaves The leaves.
   * @param folder The run folder of the leaves (a seal's), named in the pending file; null for none.
   * @returns The prepared append; the lock is held until `finish` or `abort`.
   */
  async prepare(leaves: readonly RunLeaf[], folder: string | null): Promise<PreparedAppend> {
    const key = (await this.key({ create: true }))!;
    if (!this.#made) Deno.mkdirSync(this.dir, { recursive: true });
    this.#made = true;
    // a link, FIFO (which held every seal for ever), folder or hard link planted there is moved aside
    const lock = openLogFileSync(this.#path("lock")).file;
    try {
      await lock.lock(true);
      return await this.#prepareLocked(leaves, folder, key, lock);
    } catch (error) {
      lock.close();
      throw error;
    }
  }

  async #prepareLocked(
    leaves: readonly RunLeaf[],
    folder: string | null,
    key: LogKey,
    lock: Deno.FsFile,
  ): Promise<PreparedAppend> {
    const note = readLogTextSync(this.#path("tlog", "checkpoint"));
    const kept = note !== null && this.#kept?.checkpoint === note ? this.#kept : null;
    const size = kept?.edge.size ?? (note === null ? 0 : parseCheckpoint(parseNote(note).text).size);
    const state = kept ?? await this.#state(size);
    const leftovers = await this.#leftovers(size, state.partialEntries);
    const all = [...leftovers.leaves.map((l) => l.leaf), ...leaves];
    const folders = all.map((_, i) => leftovers.leaves[i]?.folder ?? folder);
    const plan = planAppend(state, all, key);
    const written = this.#write(plan);
    const pending = leftovers.fromPending || !this.#bundleTells(all, folders)
      ? writePending(this.#path("pending.jsonl"), plan, folders)
      : null;
    const tmp = this.#path("tlog", "checkpoint.tmp");
    writeScratchSync(tmp, new TextEncoder().encode(plan.checkpoint));
    let released = false;
    const release = (done: boolean) => {
      if (released) return;
      released = true;
      // Blanked once committed (not fsynced: a committed leaf found in it again is dropped); kept as it is after
      // an abort, so that the next appender appends a leaf whose run was sealed.
      if (done) pending?.blank();
      pending?.close();
      lock.close();
    };
    const mine = plan.first + leftovers.leaves.length;
    let indexed = false;
    const index = () => {
      if (indexed) return;
      indexed = true;
      this.#index.add({
        lines: all.map((l, i) => ({ index: plan.first + i, runId: l.run_id })),
        size: plan.edge.size,
        missing: (from) => this.#unindexed(from, size),
      });
    };
    return {
      indexes: leaves.map((_, i) => mine + i),
      size: plan.edge.size,
      checkpoint: plan.checkpoint,
      files: [...written.files, ...(pending ? [this.#path("pending.jsonl")] : []), tmp],
      dirs: pending?.made ? [...written.dirs, this.dir] : written.dirs,
      index,
      commit: async () => {
        // The rename replaces the last checkpoint, whose blocks the file system frees (and, mounted with
        // `discard`, trims) in the call: on a file thread, while this one adds the run index's rows, if the
        // caller did not while its fsyncs were on their way. A row of an append whose rename fails names a leaf
        // the log lacks, which the index confirms against the entry before it says anything (run_index.ts), and
        // an index left behind by a crash is filled from the entries.
        const renamed = Deno.rename(tmp, this.#path("tlog", "checkpoint"));
        index();
        await renamed;
        this.#kept = { checkpoint: plan.checkpoint, ...keptAfter(plan, state.partialEntries) };
      },
      finish: async () => {
        try {
          await syncPaths([], [this.#path("tlog")]);
        } finally {
          release(true);
        }
        await this.#afterCommit(plan);
      },
      abort: () => {
        try {
          Deno.removeSync(tmp);
        } catch { /* not there */ }
        release(false);
      },
      proofOf: plan.proofOf,
    };
  }

  /** The edge of the tree of `size` leaves, and the entries of its partial bundle, from the files. */
  async #state(size: number): Promise<{ edge: TreeEdge; partialEntries: Uint8Array[] }> {
    const tiles = edgeTiles(size);
    const hashes = await this.readTiles(tiles);
    const byTile = new Map(tiles.map((t, i) => [`${t.level}/${t.index}`, hashes[i]!]));
    const edge = edgeOf(size, (t) => byTile.get(`${t.level}/${t.index}`)!);
    const partialWidth = size % TILE_WIDTH;
    const partialEntries = partialWidth
      ? await this.readEntries(Math.floor(size / TILE_WIDTH), partialWidth)
      : [];
    return { edge, partialEntries };
  }

  /** Writes the plan's tiles and bundles at their names. */
  #write(plan: AppendPlan): { files: string[]; dirs: string[] } {
    const files: string[] = [];
    const dirs = new Set<string>();
    const put = (rel: string, bytes: Uint8Array) => {
      const path = this.#path("tlog", rel);
      try {
        writeTileSync(path, bytes);
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
        // A tile's first width (once in 256 appends): its folder is made, and the folders above it are fsynced
        // too, since a folder made holds a new name in its parent.
        Deno.mkdirSync(dirname(path), { recursive: true });
        for (let d = dirname(dirname(path)); d.startsWith(this.dir) && d !== this.dir; d = dirname(d)) {
          dirs.add(d);
        }
        writeTileSync(path, bytes);
      }
      files.push(path);
      dirs.add(dirname(path));
    };
    for (const t of plan.tiles) put(tilePath(t.tile), t.hashes);
    for (const b of plan.bundles) put(entriesPath(b.index, b.entries.length), bundleBytes(b.entries));
    return { files, dirs: [...dirs] };
  }

  /** The rows of the leaves from `from` to `size`, which the run index lacks (it was lost, or is behind). */
  #unindexed(from: number, size: number): IndexLine[] {
    const lines: IndexLine[] = [];
    for (let index = from; index < size;) {
      const bundle = Math.floor(index / TILE_WIDTH);
      const width = Math.min(TILE_WIDTH, size - bundle * TILE_WIDTH);
      const entries = parseBundle(
        this.#readWide(entriesPath(bundle, width), 0, { level: -1, index: bundle, width }),
      );
      for (; index < bundle * TILE_WIDTH + width; index++) {
        try {
          lines.push({ index, runId: parseLeaf(entries[index % TILE_WIDTH]!).run_id });
        } catch { /* a leaf that is not one: the audit names it */ }
      }
    }
    return lines;
  }

  /**
   * After the commit, with the lock released: the partial tiles and bundles of each tile that is now full go.
   * C2SP tlog-tiles asks a log to serve the partial tiles of every size it made a checkpoint of (a client that
   * holds an older checkpoint reads them), and lets it delete them once the full tile is there. Some 500 files
   * every 256 leaves: removed without the lock, so that other appenders go on meanwhile.
   */
  async #afterCommit(plan: AppendPlan): Promise<void> {
    const removes = [
      ...plan.tiles.filter((t) => t.tile.width === TILE_WIDTH).map((t) => `${tilePath(t.tile)}.p`),
      ...plan.bundles.filter((b) => b.entries.length === TILE_WIDTH).map((b) =>
        `${entriesPath(b.index, TILE_WIDTH)}.p`
      ),
    ];
    for (const rel of removes) {
      await Deno.remove(this.#path("tlog", rel), { recursive: true }).catch(() => {}); // none, or gone already
    }
  }

  /**
   * True when the entry bundle this append writes is all the next appender needs to finish it, were it killed
   * before its commit: one leaf, of a run in its own folder under the runs root (`<runs root>/<run_id>`, the
   * folder the next appender looks in). Otherwise the pending file names each leaf's folder.
   */
  #bundleTells(leaves: readonly RunLeaf[], folders: readonly (string | null)[]): boolean {
    const folder = folders[0];
    return leaves.length === 1 && folder != null &&
      resolve(folder) === resolve(this.#runs, leaves[0]!.run_id);
  }

  /**
   * The entry of an append that one leaf would make, past the committed size, when a killed appender left its
   * entry bundle (fsynced before its run's manifest took its name): null when there is none, or it is torn.
   */
  #pastSize(size: number): RunLeaf | null {
    const bundle = Math.floor(size / TILE_WIDTH);
    const width = size % TILE_WIDTH + 1;
    const path = this.#path("tlog", entriesPath(bundle, width));
    let bytes: Uint8Array;
    try {
      if (!existsSync(path)) return null; // the usual case, told without an error thrown
      bytes = readLogBytesSync(path, LOG_TILE_MAX_BYTES) ?? new Uint8Array();
    } catch {
      return null;
    }
    try {
      const entries = parseBundle(bytes);
      return entries.length === width ? parseLeaf(entries[width - 1]!) : null;
    } catch {
      return null; // a torn bundle: its append never committed
    }
  }

  /**
   * The leaves left by appenders that were killed before their commit, whose runs are sealed: they are appended
   * first. The pending file names them with their folders (and this append's pending file names them again); a
   * one-leaf append of a run in the runs root leaves only its entry bundle past the committed size. A pending
   * leaf that was committed is dropped, and a run whose seal the log recorded but whose manifest did not take
   * its name (the last committed leaf, or one in the pending file) gets it.
   *
   * @param size The committed size.
   * @param partialEntries The entries of the committed partial bundle.
   * @returns The leaves, and whether the pending file held any line (then this append writes it over).
   */
  async #leftovers(
    size: number,
    partialEntries: readonly Uint8Array[],
  ): Promise<{ leaves: { leaf: RunLeaf; folder: string | null }[]; fromPending: boolean }> {
    const found: { index: number; folder: string | null; leaf: RunLeaf }[] = [];
    let text: string;
    let planted = false;
    try {
      text = readTextIfThereSync(this.#path("pending.jsonl"), EVIDENCE_TEXT_MAX_BYTES) ?? "";
    } catch (error) {
      if (!(error instanceof ProveviError)) throw error;
      // a link, a FIFO, a folder or a file past the cap: no pending file of an appender's (the append replaces it)
      [text, planted] = ["", true];
    }
    const lines = text.split("\n").filter((l) => l !== "");
    for (const line of lines) {
      try {
        const p = JSON.parse(line) as { index: number; folder: string | null; leaf: string };
        found.push({ index: p.index, folder: p.folder, leaf: parseLeaf(new TextEncoder().encode(p.leaf)) });
      } catch { /* a torn line: its append never committed, nor was its file fsynced */ }
    }
    const past = this.#pastSize(size);
    if (past) found.push({ index: size, folder: join(this.#runs, past.run_id), leaf: past });
    const leaves: { leaf: RunLeaf; folder: string | null }[] = [];
    for (const { index, folder, leaf } of found) {
      if (index < size && await this.#entryIs(index, size, leaf)) {
        if (folder) await completeManifest(folder, leaf);
      } else if (
        folder && await sealedAs(folder, leaf) && !leaves.some((l) => l.leaf.run_id === leaf.run_id) &&
        await this.indexOf(leaf.run_id) === null
      ) {
        leaves.push({ leaf, folder });
      }
    }
    await this.#lastNamed(size, partialEntries);
    return { leaves, fromPending: lines.length > 0 || planted };
  }

  /**
   * Gives the last committed leaf's run its manifest, when a crash kept the checkpoint's rename and lost the
   * manifest's (a file system may keep the two renames in either order): its `.manifest.json.tmp` is still there,
   * fsynced, and takes its name if its bytes are the ones the leaf names. One look at a file that is not there.
   */
  async #lastNamed(size: number, partialEntries: readonly Uint8Array[]): Promise<void> {
    if (size === 0) return;
    try {
      const entry = partialEntries[size % TILE_WIDTH - 1] ?? await this.#entryAt(size - 1, size);
      if (this.#lastRun?.entry !== entry) this.#lastRun = { entry, runId: parseLeaf(entry).run_id };
      const folder = join(this.#runs, this.#lastRun.runId);
      if (existsSync(join(folder, ".manifest.json.tmp"))) await completeManifest(folder, parseLeaf(entry));
    } catch { /* no manifest left aside (the usual case), or no such run here */ }
  }

  async #entryIs(index: number, size: number, leaf: RunLeaf): Promise<boolean> {
    try {
      return sameLeaf(parseLeaf(await this.#entryAt(index, size)), leaf);
    } catch {
      return false;
    }
  }

  /** Keeps a cosigned checkpoint as `witnessed`, when it is larger than the one kept. */
  async saveWitnessed(note: string): Promise<void> {
    const now = await this.witnessed();
    if (
      now !== null && parseCheckpoint(parseNote(now).text).size > parseCheckpoint(parseNote(note).text).size
    ) {
      return;
    }
    const tmp = this.#path("witnessed.tmp");
    writeScratchSync(tmp, new TextEncoder().encode(note));
    await syncPaths([tmp], []);
    await Deno.rename(tmp, this.#path("witnessed"));
    await syncPaths([], [this.dir]);
  }

  /** Closes the run index's file, if it is open (the log reads and writes it again when asked). */
  close(): void {
    this.#index.close();
  }

  /** The runs root this log belongs to. */
  get runsRoot(): string {
    return this.#runs;
  }
}

/** The tree a writer keeps between its appends (see `FileLog.#kept`). */
interface KeptTree {
  readonly checkpoint: string;
  readonly edge: TreeEdge;
  readonly partialEntries: Uint8Array[];
  readonly range: CompactRange;
}

/** The tree after an append: its edge, its compact range and the entries of its partial bundle. */
function keptAfter(plan: AppendPlan, partialBefore: Uint8Array[]): Omit<KeptTree, "checkpoint"> {
  const last = plan.bundles.at(-1);
  const partialEntries = last === undefined
    ? partialBefore
    : last.entries.length < TILE_WIDTH
    ? last.entries
    : [];
  return { edge: plan.edge, partialEntries, range: plan.range };
}

/**
 * Like {@linkcode readLogTextSync} for a file that is usually not there: asked first, since an error thrown
 * costs some 0.1 ms (its stack), which an append would pay for each file it looks for.
 */
function readTextIfThereSync(path: string, most: number): string | null {
  return existsSync(path) ? readLogTextSync(path, most) : null;
}

/**
 * The file store's log, in `<runs root>/.log/`: `tlog/checkpoint` and `tlog/tile/…` as C2SP tlog-tiles lays them
 * out (serve `tlog/` as the log's prefix), `key` (the log's key, mode 0600), `lock` (held by one appender at a
 * time), `index.db` (to find a run's leaf fast: `run_index.ts`), `witnessed` (the latest checkpoint with
 * cosignatures) and `pending.jsonl` (the leaves being appended, so that the next appender finishes the work of one that
 * was killed).
 *
 * An append: under the lock, read the checkpoint's size and the edge, write the tiles and entry bundles of the
 * new size at their own names (a partial tile is a new file for each width), the new checkpoint to a temporary
 * file and the pending file naming each leaf's index and run folder; fsync them all; rename the checkpoint into
 * place (the commit), on a file thread, and meanwhile add the run index's rows; fsync the folder; blank the
 * pending file; unlock.
 * The pending file is one file written over in place, never made nor removed: on a journaling file system a
 * name made or removed waits for the journal, which other writers of the disk keep busy, while bytes written
 * over cost little. Every partial tile of a checkpoint's size is kept (C2SP tlog-tiles) until its full tile is written;
 * then the tile's partial ones go, after the lock is released.
 * @module
 */
import { dirname, join } from "node:path";
import { ProveviError } from "../evidence/errors.ts";
import { sha256Hex } from "../evidence/hash.ts";
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
   * Renames the checkpoint into place, on a file thread, and meanwhile adds the run index's rows: the append is
   * made when the promise resolves. Call {@linkcode PreparedAppend.finish} after it resolves, or
   * {@linkcode PreparedAppend.abort} if it fails.
   */
  commit(): Promise<void>;
  /** Makes the commit durable, blanks the pending file and unlocks. */
  finish(): Promise<void>;
  /** Gives up before the commit and unlocks (the next appender reads the pending file: a sealed run is appended). */
  abort(): void;
  /** The tlog-proof of leaf `index` of this append against its checkpoint (from the tiles in memory). */
  proofOf(index: number): string;
}

const decoder = new TextDecoder();

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
    let text: string;
    try {
      text = await Deno.readTextFile(path);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound) || !options.create) {
        if (error instanceof Deno.errors.NotFound) return null;
        throw new ProveviError(`cannot read the log key ${path}: ${(error as Error).message}`, {
          cause: error,
        });
      }
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
      if (error instanceof Deno.errors.AlreadyExists) return await Deno.readTextFile(path); // another writer made it
      throw error;
    }
  }

  /** The latest checkpoint, or null. */
  checkpoint(): Promise<string | null> {
    // Small files are read at once: an asynchronous read waits for a thread, which on a busy machine is most of
    // a proof's time.
    return Promise.resolve(readTextOrNullSync(this.#path("tlog", "checkpoint")));
  }

  /** The latest witnessed checkpoint, or null. */
  witnessed(): Promise<string | null> {
    return Promise.resolve(readTextOrNullSync(this.#path("witnessed")));
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
      try {
        const bytes = Deno.readFileSync(this.#path("tlog", p));
        return bytes.length >= need ? bytes : null;
      } catch (error) {
        if (error instanceof Deno.errors.NotFound) return null;
        throw error;
      }
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
      await syncPaths(prepared.files, prepared.dirs);
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
    Deno.mkdirSync(this.dir, { recursive: true });
    const lock = Deno.openSync(this.#path("lock"), { create: true, write: true });
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
    const size = await this.#committedSize();
    const leftovers = await this.#leftovers(size);
    const all = [...leftovers.leaves.map((l) => l.leaf), ...leaves];
    const plan = planAppend(await this.#state(size), all, key);
    const written = this.#write(plan);
    const pending = this.#writePending(plan, all.map((_, i) => leftovers.leaves[i]?.folder ?? folder));
    const tmp = this.#path("tlog", "checkpoint.tmp");
    Deno.writeFileSync(tmp, new TextEncoder().encode(plan.checkpoint));
    let released = false;
    const release = (done: boolean) => {
      if (released) return;
      released = true;
      // Blanked once committed (not fsynced: a committed leaf found in it again is dropped); kept as it is after
      // an abort, so that the next appender appends a leaf whose run was sealed.
      if (done) pending.blank();
      pending.close();
      lock.close();
    };
    const mine = plan.first + leftovers.leaves.length;
    return {
      indexes: leaves.map((_, i) => mine + i),
      size: plan.edge.size,
      checkpoint: plan.checkpoint,
      files: [...written.files, this.#path("pending.jsonl"), tmp],
      dirs: pending.made ? [...written.dirs, this.dir] : written.dirs,
      commit: () => {
        // The rename replaces the last checkpoint, whose blocks the file system frees (and, mounted with
        // `discard`, trims) in the call: on a file thread, while this one adds the run index's rows. A row of an
        // append whose rename fails names a leaf the log lacks, which the index confirms against the entry
        // before it says anything (run_index.ts), and an index left behind by a crash is filled from the entries.
        const renamed = Deno.rename(tmp, this.#path("tlog", "checkpoint"));
        this.#index.add({
          lines: all.map((l, i) => ({ index: plan.first + i, runId: l.run_id })),
          size: plan.edge.size,
          missing: (from) => this.#unindexed(from, size),
        });
        return renamed;
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

  async #committedSize(): Promise<number> {
    const note = await this.checkpoint();
    return note === null ? 0 : parseCheckpoint(parseNote(note).text).size;
  }

  /** Writes the plan's tiles and bundles at their names. */
  #write(plan: AppendPlan): { files: string[]; dirs: string[] } {
    const files: string[] = [];
    const dirs = new Set<string>();
    const put = (rel: string, bytes: Uint8Array) => {
      const path = this.#path("tlog", rel);
      try {
        Deno.writeFileSync(path, bytes);
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
        // A tile's first width (once in 256 appends): its folder is made, and the folders above it are fsynced
        // too, since a folder made holds a new name in its parent.
        Deno.mkdirSync(dirname(path), { recursive: true });
        for (let d = dirname(dirname(path)); d.startsWith(this.dir) && d !== this.dir; d = dirname(d)) {
          dirs.add(d);
        }
        Deno.writeFileSync(path, bytes);
      }
      files.push(path);
      dirs.add(dirname(path));
    };
    for (const t of plan.tiles) put(tilePath(t.tile), t.hashes);
    for (const b of plan.bundles) put(entriesPath(b.index, b.entries.length), bundleBytes(b.entries));
    return { files, dirs: [...dirs] };
  }

  /**
   * Writes the pending file over in place: a line per leaf, with its index and its run folder, then newlines over
   * what is left of the bytes before (an empty line is no leaf), so that the file is never truncated.
   */
  #writePending(
    plan: AppendPlan,
    folders: (string | null)[],
  ): { made: boolean; blank(): void; close(): void } {
    const text = plan.entries.map((entry, i) =>
      JSON.stringify({ index: plan.first + i, folder: folders[i] ?? null, leaf: decoder.decode(entry) }) +
      "\n"
    ).join("");
    const path = this.#path("pending.jsonl");
    let made = false;
    let file: Deno.FsFile;
    try {
      file = Deno.openSync(path, { read: true, write: true });
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
      file = Deno.openSync(path, { write: true, create: true });
      made = true;
    }
    try {
      const bytes = new TextEncoder().encode(text);
      const before = file.statSync().size;
      writeAllAt(file, bytes.length >= before ? bytes : padded(bytes, before));
    } catch (error) {
      file.close();
      throw error;
    }
    const blank = () => {
      try {
        writeAllAt(file, new Uint8Array(file.statSync().size).fill(0x0a));
      } catch { /* the next appender drops the committed leaves */ }
    };
    return { made, blank, close: () => file.close() };
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
   * The pending leaves left by appenders that were killed before their commit, whose runs are sealed: they are
   * appended first (this append's pending file names them again). A pending leaf that was committed is dropped
   * (and a run whose seal the log recorded, but whose manifest did not take its name, gets it).
   */
  async #leftovers(size: number): Promise<{ leaves: { leaf: RunLeaf; folder: string | null }[] }> {
    const leaves: { leaf: RunLeaf; folder: string | null }[] = [];
    const text = readTextOrNullSync(this.#path("pending.jsonl")) ?? "";
    for (const line of text.split("\n")) {
      if (line === "") continue;
      let p: { index: number; folder: string | null; leaf: string };
      let leaf: RunLeaf;
      try {
        p = JSON.parse(line);
        leaf = parseLeaf(new TextEncoder().encode(p.leaf));
      } catch {
        continue; // a torn line: its append never committed, nor was its file fsynced
      }
      if (p.index < size && await this.#entryIs(p.index, size, leaf)) {
        if (p.folder) await completeManifest(p.folder, leaf);
      } else if (
        p.folder && await sealedAs(p.folder, leaf) && !leaves.some((l) => l.leaf.run_id === leaf.run_id) &&
        await this.indexOf(leaf.run_id) === null
      ) {
        leaves.push({ leaf, folder: p.folder });
      }
    }
    return { leaves };
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
    await Deno.writeTextFile(tmp, note);
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

/** True when the run folder's manifest is the one the leaf names. */
async function sealedAs(folder: string, leaf: RunLeaf): Promise<boolean> {
  const text = await readTextOrNull(join(folder, "evidence", "manifest.json"));
  return text !== null && sha256Hex(text) === leaf.manifest_sha256;
}

/** Gives a run's `.manifest.json.tmp` its name when the log recorded its seal and the bytes are the ones recorded. */
async function completeManifest(folder: string, leaf: RunLeaf): Promise<void> {
  // The names FileStore's evidencePaths gives them (the store imports the log, not the other way).
  const manifest = join(folder, "evidence", "manifest.json");
  const tmp = join(folder, ".manifest.json.tmp");
  if (await readTextOrNull(manifest) !== null) return;
  const text = await readTextOrNull(tmp);
  if (text !== null && sha256Hex(text) === leaf.manifest_sha256) {
    await Deno.rename(tmp, manifest);
    await syncPaths([], [dirname(manifest)]);
  }
}

/** Writes all the bytes at the start of the file. */
function writeAllAt(file: Deno.FsFile, bytes: Uint8Array): void {
  file.seekSync(0, Deno.SeekMode.Start);
  for (let at = 0; at < bytes.length;) at += file.writeSync(bytes.subarray(at));
}

/** The bytes, then newlines up to `length`. */
function padded(bytes: Uint8Array, length: number): Uint8Array {
  const out = new Uint8Array(length).fill(0x0a);
  out.set(bytes);
  return out;
}

function readTextOrNullSync(path: string): string | null {
  try {
    return Deno.readTextFileSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

async function readTextOrNull(path: string): Promise<string | null> {
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

/**
 * Fsyncs files and folders, all at once: the disk takes them in one journal commit. Each is opened on this
 * thread (an open is quick) so that every fsync is on its way to Deno's file threads when this returns its
 * promise: an asynchronous open would first wait for a thread, then for this one, spreading the fsyncs over
 * more commits, and the caller's work meanwhile would hold them back.
 *
 * @param files Files to fsync.
 * @param dirs Folders to fsync.
 */
export async function syncPaths(files: readonly string[], dirs: readonly string[]): Promise<void> {
  const results = await Promise.allSettled([...files, ...dirs].map(syncPath));
  const failed = results.find((r) => r.status === "rejected");
  if (failed) throw (failed as PromiseRejectedResult).reason;
}

/**
 * Fsyncs one file or folder: opened at once on this thread, fsynced on Deno's file thread, closed after.
 *
 * @param path The file or folder.
 */
export function syncPath(path: string): Promise<void> {
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(path, { read: true });
  } catch (error) {
    return Promise.reject(error);
  }
  return file.sync().finally(() => file.close());
}

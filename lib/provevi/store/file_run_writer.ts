/**
 * The file store's writer of one run: `evidence/events.jsonl` appended line by line, payloads in
 * `evidence/payloads.pack` (small ones) or `evidence/payloads/<sha256>`, the run's span index `spans.jsonl`, and the
 * seal, which writes `manifest.json` (and a signed run's attestation), fsyncs the evidence and appends the run to
 * the store's log. The sqlite and Postgres stores write a run's files with it too.
 * @module
 */
import { basename, join } from "node:path";
import { EvidenceError, ProveviError } from "../evidence/errors.ts";
import type { EvidenceEvent } from "../evidence/event.ts";
import { sha256Hex, takeVouchedSha256, utf8 } from "../evidence/hash.ts";
import { appendWhole } from "../evidence/append_whole.ts";
import { openPlainFileSync, type PlainFile } from "../evidence/open_file.ts";
import { keptAtName } from "./kept_at_name.ts";
import {
  buildManifest,
  type Manifest,
  manifestText,
  type PayloadEntry,
  type PayloadLayout,
  statusOf,
} from "../evidence/manifest.ts";
import {
  EVIDENCE_TEXT_MAX_BYTES,
  PACK_LIMIT,
  PACK_MAX_BYTES,
  payloadPlace,
} from "../evidence/payload_pack.ts";
import { readCappedSync } from "../evidence/open_file.ts";
import { readLinesCapped } from "../evidence/events_file.ts";
import { PackWriter } from "./pack_file.ts";
import { nowUtc } from "../evidence/event.ts";
import { EventsDigest, sealAttestation } from "../evidence/attestation.ts";
import type { RunWriter, SealInfo } from "./store.ts";
import { SpansFile } from "../evidence/spans_file.ts";
import { holdWriterLock, releaseWriterLock } from "../evidence/writer_process.ts";
import { type FileLog, type PreparedAppend, syncPath } from "../log/file_log.ts";
import { leafOfSeal } from "../log/run_leaf.ts";
import { PROOF_FILE } from "../log/tlog_proof.ts";
import { evidencePaths, strictUtf8 } from "./file_run_record.ts";

/**
 * Writes one run's evidence files. Each line is written with a synchronous write before `append` returns;
 * the seal writes the manifest and fsyncs the files and folders.
 */
export class FileRunWriter implements RunWriter {
  #file: Deno.FsFile;
  #paths: ReturnType<typeof evidencePaths>;
  #payloads = new Map<string, number>();
  #written: string[] = []; // payloads this writer wrote, to fsync at the seal
  #writing = new Map<string, Promise<string>>(); // large payloads being written, by SHA-256
  #count = 0;
  #lastLine: string | null = null;
  #lastEvent: EvidenceEvent | null = null;
  #sealed = false;
  #abandoned = false; // given up unsealed (abandon)
  #lock: Deno.FsFile | null = null;
  #digest: EventsDigest | null = null; // when run_created names a signing key: for the statement of the seal
  #signingKey: string | null = null; // the key that run_created names
  #sealFailed: string | null = null; // why the seal failed, when it did
  #log: FileLog | null = null; // the store's log, which the seal appends the run to
  #attestation: Uint8Array | null = null; // the attestation the seal wrote, for an indexed store's log
  readonly #pack: PackWriter | null; // payloads.pack, in the pack layout (format 2)

  /** The run's span index, `spans.jsonl`, open from its first spans until the seal (`addSpans` of the stores). */
  readonly spans: SpansFile;

  private constructor(
    readonly runId: string,
    readonly folder: string,
    { file, layout }: { file: Deno.FsFile; layout: PayloadLayout },
  ) {
    this.#file = file;
    this.spans = new SpansFile(folder);
    this.#paths = evidencePaths(folder);
    this.#pack = layout === "pack" ? new PackWriter(this.#paths.pack) : null;
  }

  /**
   * Makes the run folder and opens `events.jsonl`, which must not exist yet.
   * @param runId The run's ID.
   * @param folder The run folder.
   * @param options `log`: the store's log; `payloads`: where payloads go, `pack` (small ones in
   * `payloads.pack`, manifest format 2) by default, or `files` (each a file, format 1: a copy of such a run).
   * @throws ProveviError when the run folder already holds events.
   */
  static async create(
    runId: string,
    folder: string,
    options: { log?: FileLog; payloads?: PayloadLayout } = {},
  ): Promise<FileRunWriter> {
    const paths = evidencePaths(folder);
    await Deno.mkdir(paths.payloads, { recursive: true });
    let file: Deno.FsFile;
    try {
      // read too: the seal reads the lines back from here when the run's program replaced the file (#keepEvents)
      file = await Deno.open(paths.events, { createNew: true, read: true, write: true, append: true });
    } catch (error) {
      if (error instanceof Deno.errors.AlreadyExists) {
        throw new ProveviError(`run "${runId}" exists already in ${folder}; a run ID is used once`, {
          cause: error,
        });
      }
      throw new EvidenceError(`cannot create ${paths.events}: ${(error as Error).message}`, { cause: error });
    }
    const writer = new FileRunWriter(runId, folder, { file, layout: options.payloads ?? "pack" });
    writer.#lock = holdWriterLock(folder); // tells readers that the run is still being written
    writer.#log = options.log ?? null;
    return writer;
  }

  /** Number of events appended. */
  get count(): number {
    return this.#count;
  }

  /** Appends the line and a newline with synchronous writes. */
  append(line: string, event: EvidenceEvent): Promise<void> {
    try {
      this.appendSync(line, event);
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** The synchronous form of {@linkcode append}, for stores that wrap this writer. */
  appendSync(line: string, event: EvidenceEvent): void {
    this.#refuseMore("events");
    const bytes = utf8(line + "\n");
    this.#writeAll(bytes);
    this.#digested(bytes, [line], [event]);
    this.#count += 1;
    this.#lastLine = line;
    this.#lastEvent = event;
  }

  /** Appends several lines with one synchronous write; a write that fails takes back what it wrote. */
  appendMany(lines: readonly string[], events: readonly EvidenceEvent[]): Promise<void> {
    try {
      this.#refuseMore("events");
      if (lines.length === 0) return Promise.resolve();
      const bytes = utf8(lines.join("\n") + "\n");
      this.#writeAll(bytes);
      this.#digested(bytes, lines, events);
      this.#count += lines.length;
      this.#lastLine = lines[lines.length - 1]!;
      this.#lastEvent = events[events.length - 1]!;
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Refuses more evidence once the run is sealed or given up. */
  #refuseMore(what: string): void {
    if (this.#sealed) throw new EvidenceError(`run "${this.runId}" is sealed; it takes no more ${what}`);
    if (this.#abandoned) {
      throw new EvidenceError(`run "${this.runId}" was given up unsealed; it takes no more ${what}`);
    }
  }

  /**
   * Gives the run up unsealed, for a copy that failed part way: closes `events.jsonl` and lets go of the folder
   * (its caller removes it, or leaves it for a look). The run is never sealed, so it never reaches the log, and
   * the writer takes nothing more. Does nothing to a sealed run.
   */
  abandon(): Promise<void> {
    if (this.#sealed || this.#abandoned) return Promise.resolve();
    this.#abandoned = true;
    this.spans.close();
    try {
      this.#file.close();
    } catch { /* closed already, by a seal that failed */ }
    this.#pack?.close();
    releaseWriterLock(this.folder, this.#lock);
    this.#lock = null;
    return Promise.resolve();
  }

  /** Keeps the digest of a signed run's events, from its first event on (see {@linkcode EventsDigest}). */
  #digested(bytes: Uint8Array, lines: readonly string[], events: readonly EvidenceEvent[]): void {
    if (this.#count === 0) {
      const key = events[0]?.type === "run_created" ? events[0].data.signing_key : undefined;
      this.#signingKey = typeof key === "string" ? key : null;
      if (this.#signingKey !== null) this.#digest = new EventsDigest();
    }
    this.#digest?.add(bytes, lines, events.map((e) => e.type));
  }

  #writeAll(bytes: Uint8Array): void {
    try {
      appendWhole(this.#file, bytes);
    } catch (error) {
      throw new EvidenceError(`cannot append to ${this.#paths.events}: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }

  /** Takes back the last appended line, for a store whose row could not be committed. */
  unappendLast(line: string, previous: { line: string | null; event: EvidenceEvent | null }): void {
    const size = this.#file.statSync().size;
    this.#file.truncateSync(size - utf8(line + "\n").length);
    if (this.#digest !== null && !this.#digest.dropLast()) this.#digest = null; // the seal reads the file
    if (this.#count === 1) [this.#digest, this.#signingKey] = [null, null];
    this.#count -= 1;
    this.#lastLine = previous.line;
    this.#lastEvent = previous.event;
  }

  /** The last line and event appended, for {@linkcode unappendLast}. */
  get last(): { line: string | null; event: EvidenceEvent | null } {
    return { line: this.#lastLine, event: this.#lastEvent };
  }

  /**
   * Writes the payload under its hash, once, before the promise settles: a step's payload is written before its
   * event, and a torn record or file left by a crash fails the check, since its bytes no longer hash to its name.
   * A small payload (under {@linkcode PACK_LIMIT}) is written synchronously, as an append is (a trip to a file
   * thread would cost more than the write): in the pack layout as a record appended to `payloads.pack`, else as
   * a file. A large one is a file written on Deno's file thread, so that its caller's next work (the gateway
   * reading the response it stores) goes on meanwhile.
   */
  putPayload(bytes: Uint8Array): Promise<string> {
    try {
      this.#refuseMore("payloads");
    } catch (error) {
      return Promise.reject(error);
    }
    // bytes checked against their hash as they were read (a pack's record) are not hashed again
    const sha256 = takeVouchedSha256(bytes) ?? sha256Hex(bytes);
    if (this.#payloads.has(sha256)) return Promise.resolve(sha256);
    const writing = this.#writing.get(sha256);
    if (writing) return writing;
    if (this.#pack?.fits(bytes.length) && bytes.length < PACK_LIMIT) return this.#packed(sha256, bytes);
    const path = join(this.#paths.payloads, sha256);
    const failed = (error: unknown) => {
      if (error instanceof Deno.errors.AlreadyExists && sameBytes(path, { sha256, size: bytes.length })) {
        return this.#kept(path, bytes);
      }
      throw new EvidenceError(`cannot store payload ${sha256}: ${(error as Error).message}`, {
        cause: error,
      });
    };
    if (bytes.length < PACK_LIMIT) {
      try {
        Deno.writeFileSync(path, bytes, { createNew: true });
        return Promise.resolve(this.#kept(path, bytes));
      } catch (error) {
        try {
          return Promise.resolve(failed(error));
        } catch (refused) {
          return Promise.reject(refused);
        }
      }
    }
    const write = Deno.writeFile(path, bytes, { createNew: true })
      .then(() => this.#kept(path, bytes), failed)
      .finally(() => this.#writing.delete(sha256));
    this.#writing.set(sha256, write);
    return write;
  }

  /** Starts an fdatasync of `payloads.pack` on a file thread, unless one is under way ({@linkcode PackWriter.flush}). */
  flushPayloads(): void {
    if (!this.#sealed) this.#pack?.flush();
  }

  /** Appends a small payload to the pack: in the manifest, and fsynced with the pack at the seal. */
  #packed(sha256: string, bytes: Uint8Array): Promise<string> {
    try {
      this.#pack!.put(sha256, bytes);
    } catch (error) {
      return Promise.reject(
        new EvidenceError(
          `cannot store payload ${sha256} in ${this.#paths.pack}: ${(error as Error).message}`,
          {
            cause: error,
          },
        ),
      );
    }
    this.#payloads.set(sha256, bytes.length);
    return Promise.resolve(sha256);
  }

  /** Where a stored payload is, relative to the run folder: the pack, or its own file. */
  placeOf(sha256: string): string {
    return payloadPlace(sha256, this.#pack?.has(sha256) ?? false);
  }

  /** Notes a payload written (or found whole) under its hash: in the manifest, and fsynced at the seal. */
  #kept(path: string, bytes: Uint8Array): string {
    const sha256 = path.slice(path.length - 64);
    this.#payloads.set(sha256, bytes.length);
    this.#written.push(path);
    return sha256;
  }

  /** The bytes of `attestation.dsse.json` that the seal wrote, or null (unsigned, or not sealed yet). */
  get attestation(): Uint8Array | null {
    return this.#attestation;
  }

  /** The payloads stored so far. */
  get payloads(): PayloadEntry[] {
    return [...this.#payloads].map(([sha256, size]) => ({ sha256, size }));
  }

  /**
   * Writes `manifest.json` (and, with a signing key, `attestation.dsse.json`) and fsyncs the evidence: every
   * file at once, then the manifest takes its name and the folders are fsynced. The signature is made before the
   * first fsync, so it is on disk in the same journal commit as the rest (a file made during a commit waits for
   * it), and a run that has its manifest after a crash has its signature too.
   */
  async seal(info: SealInfo = {}): Promise<Manifest> {
    if (this.#sealed) throw new EvidenceError(`run "${this.runId}" is sealed already`);
    if (this.#abandoned) {
      throw new EvidenceError(`run "${this.runId}" was given up unsealed; it cannot be sealed`);
    }
    if (this.#sealFailed !== null) {
      throw new EvidenceError(
        `run "${this.runId}" cannot be sealed: its seal failed already (${this.#sealFailed}); it stays unsealed, with every event it recorded`,
      );
    }
    await Promise.allSettled(this.#writing.values()); // a payload still being written is in the manifest
    const manifest = this.#manifestOf(info);
    const text = manifestText(manifest);
    const tmp = this.#paths.manifestTmp;
    let eventsSynced: Promise<void> | null = null;
    let append: PreparedAppend | null = null;
    let committed = false;
    try {
      this.#checkSigning(info);
      this.#keepFiles();
      const attestation = await this.#writeSealFiles(text, info);
      // The log's leaf is written with the run's files and fsynced with them; it is committed (the checkpoint
      // renamed) only after the manifest takes its name (docs/log.md, "When a run is in the log").
      append = this.#log
        ? await this.#log.prepare([leafOfSeal(text, attestation ?? null)], this.folder)
        : null;
      eventsSynced = this.#file.sync();
      const files = [...this.#written, tmp, ...(append?.files ?? [])];
      if (attestation) files.push(this.#paths.attestation);
      const packSynced = this.#pack?.sync() ?? Promise.resolve();
      const synced = settle([
        eventsSynced,
        packSynced,
        syncFiles(files),
        ...(append?.dirs ?? []).map(syncPath),
      ]);
      append?.index(); // the run index's row, written while the fsyncs are on their way
      await synced;
      Deno.renameSync(tmp, this.#paths.manifest);
      // The checkpoint is renamed on a file thread while this one lets go of the run and starts the folders'
      // fsyncs; the log's own folder is fsynced once its rename is done.
      const committing = append?.commit();
      releaseWriterLock(this.folder, this.#lock);
      this.#lock = null;
      const dirs = [this.#paths.payloads, this.#paths.evidence, this.folder].map((p) => this.#syncFolder(p));
      try {
        await committing;
      } catch (error) {
        await Promise.allSettled(dirs); // nothing is left running behind a failure
        throw error;
      }
      committed = true;
      const logged = append?.finish() ?? Promise.resolve();
      // The proof is written while the folders' fsyncs are on their way (it is made again from the log if lost).
      if (append) this.#writeProof(append);
      await settle([...dirs, logged]);
    } catch (error) {
      if (append && !committed) append.abort();
      this.#sealFailed = (error as Error).message;
      if (error instanceof EvidenceError) throw error; // a refusal (#checkSigning), which names the run
      throw new EvidenceError(`cannot seal run "${this.runId}": ${(error as Error).message}`, {
        cause: error,
      });
    } finally {
      this.spans.close();
      await eventsSynced?.catch(() => {});
      try {
        this.#file.close();
      } catch { /* closed already */ }
      this.#pack?.close();
    }
    this.#sealed = true;
    return manifest;
  }

  /**
   * Fsyncs a folder of the run, the failure handled at once: one that failed (a folder the run's program removed)
   * while the log's commit was awaited was an unhandled rejection, which ended provr; it fails the seal instead.
   * A `payloads/` the program removed has nothing to fsync (a payload it held is missing: the check says so).
   */
  #syncFolder(path: string): Promise<void> {
    const synced = syncPath(path).catch((error) => {
      if (!(path === this.#paths.payloads && error instanceof Deno.errors.NotFound)) throw error;
    });
    synced.catch(() => {});
    return synced;
  }

  /**
   * Puts the run's events, and its pack, back at their names when the run's program replaced, moved or removed
   * them while it ran (`kept_at_name.ts`): the seal's manifest is made from what this writer wrote.
   */
  #keepFiles(): void {
    // evidence/ itself replaced by a link (to a folder of the user's) had the seal write the manifest there
    let evidence: Deno.FileInfo | null = null;
    try {
      evidence = Deno.lstatSync(this.#paths.evidence);
    } catch { /* removed: made again */ }
    if (!evidence?.isDirectory) {
      if (evidence !== null) clearSync(this.#paths.evidence, this.folder); // a link or a file, removed
      Deno.mkdirSync(this.#paths.evidence);
    }
    const events = keptAtName(this.#file, this.#paths.events, this.folder);
    if (events !== null) {
      this.#file.close();
      this.#file = events;
    }
    this.#pack?.keepAtName(this.folder);
  }

  /**
   * Writes the manifest aside and, for a signed seal, the attestation (neither fsynced yet): the statement is
   * made from what the writer kept of its events (a run whose run_created names no key reads them back), and
   * signed while the manifest is written.
   *
   * @returns The attestation's bytes, or null for an unsigned seal.
   */
  async #writeSealFiles(text: string, info: SealInfo): Promise<Uint8Array | null> {
    const signing = info.signingKey
      ? sealAttestation(
        this.#digest?.finish() ??
          // read back as every reader reads it: a line past the bound refused as it comes (events_file.ts)
          strictUtf8.decode(await readLinesCapped(this.#paths.events, EVIDENCE_TEXT_MAX_BYTES)),
        text,
        info.signingKey,
        { pack: this.#pack?.opened ? readCappedSync(this.#paths.pack, PACK_MAX_BYTES) : null },
      )
      : null;
    // A run's program writes its run folder: a link it left at either name is replaced, never written through
    writeNewSync(this.#paths.manifestTmp, utf8(text), this.folder);
    clearSync(this.#paths.manifest, this.folder); // the name the manifest takes, which no seal wrote yet
    const attestation = signing === null ? (info.attestation ?? null) : await signing;
    if (attestation) writeNewSync(this.#paths.attestation, attestation, this.folder);
    this.#attestation = attestation ?? null;
    return this.#attestation;
  }

  /** The manifest of the run as written so far. */
  #manifestOf(info: SealInfo): Manifest {
    return buildManifest({
      run_id: this.runId,
      status: statusOf(this.#lastEvent),
      events: this.#count,
      last_hash: this.#lastLine === null ? null : sha256Hex(this.#lastLine),
      payloads: this.payloads,
      lost: info.lost ?? [],
      sealed_at: info.sealed_at ?? nowUtc(),
    }, { layout: this.#pack ? "pack" : "files" });
  }

  /** Writes the run's proof that it is in the log, `log.tlog-proof`: it can be made again from the log. */
  #writeProof(append: PreparedAppend): void {
    try {
      // a new file: a link the run's program left there was written through, into the file of the user's it named
      writeNewSync(join(this.folder, PROOF_FILE), utf8(append.proofOf(append.indexes[0]!)), this.folder);
    } catch { /* prove log proof RUN --write makes it again */ }
  }

  /**
   * Refuses a seal that would leave a run that can never verify: one whose run_created names a signing key,
   * sealed with another key or with none (nor a copied signature), and one given both a key and a signature.
   */
  #checkSigning(info: SealInfo): void {
    if (info.signingKey && info.attestation) {
      throw new EvidenceError(
        `run "${this.runId}" cannot be sealed with both a signing key and a signature to copy; give one`,
      );
    }
    const recorded = this.#signingKey;
    if (recorded === null) return;
    if (info.signingKey && info.signingKey.keyid !== recorded) {
      throw new EvidenceError(
        `run "${this.runId}" records signing key ${recorded} in run_created; it cannot be sealed with key ${info.signingKey.keyid}`,
      );
    }
    if (!info.signingKey && !info.attestation) {
      throw new EvidenceError(
        `run "${this.runId}" records signing key ${recorded} in run_created; seal it with that key (SealInfo.signingKey)`,
      );
    }
  }
}

/** Waits for every promise, then throws the first failure: nothing is left running behind a failure. */
async function settle(promises: readonly Promise<void>[]): Promise<void> {
  const results = await Promise.allSettled(promises);
  const failed = results.find((r) => r.status === "rejected");
  if (failed) throw (failed as PromiseRejectedResult).reason;
}

/**
 * Fsyncs files, a few at a time: the disk takes them in one journal commit rather than one each. Each is opened
 * on this thread, so that its fsync goes to Deno's file thread at once (see `syncPaths`).
 */
async function syncFiles(paths: readonly string[]): Promise<void> {
  const width = 16;
  for (let i = 0; i < paths.length; i += width) {
    await settle(paths.slice(i, i + width).map(syncPath));
  }
}

/**
 * True when the file at `path` is a plain file of `size` bytes that hash to `sha256`. A run's program writes its
 * run folder, and can know a payload's hash before it is stored (its own session file's): a FIFO it left at that
 * name held this read, and the whole writer with it; a link or a sparse file is read no further than its look.
 */
function sameBytes(path: string, { sha256, size }: { sha256: string; size: number }): boolean {
  let file: PlainFile;
  try {
    file = openPlainFileSync(path);
  } catch {
    return false;
  }
  try {
    if (file.statSync().size !== size) return false;
    const bytes = new Uint8Array(size);
    let n = 0;
    while (n < size) {
      const got = file.readSyncAt(bytes.subarray(n), n);
      if (got === 0) return false;
      n += got;
    }
    return sha256Hex(bytes) === sha256;
  } catch {
    return false;
  } finally {
    file.close();
  }
}

/**
 * Writes a file at a name of the writer's own, as a new file: whatever is there (a link, a FIFO, a file a
 * killed seal left) is removed first, and the file is made with `createNew`, which no link is followed by.
 */
function writeNewSync(path: string, bytes: Uint8Array, aside: string): void {
  clearSync(path, aside);
  Deno.writeFileSync(path, bytes, { createNew: true });
}

/**
 * Clears a name the seal writes: a file or link there is removed, a folder (which a run's program can put in a
 * file's place, and which stopped the seal) is moved aside into `aside` (the run folder, which no check lists) as
 * `.<name>.moved-<uuid>`, whole, so that nothing of it is lost.
 */
function clearSync(path: string, aside: string): void {
  try {
    Deno.removeSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return;
    if (!Deno.lstatSync(path).isDirectory) throw error;
    Deno.renameSync(path, join(aside, `.${basename(path)}.moved-${crypto.randomUUID()}`));
  }
}

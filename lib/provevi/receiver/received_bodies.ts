/**
 * The bodies `prove serve` wrote to a run folder's `received.spans`, taken by the run's writer: while the run
 * goes on, a few times a second, and the rest at the seal. Each is checked against the hash its record names as
 * it is read, and stored as the run's payload under that hash (the check's hash: each body is hashed once
 * here). So the seal of a run that received spans reads, checks and stores only what came since the last take,
 * as the seal of any run stores only its last payloads: the bodies taken before were stored while the writer
 * had nothing else to do.
 *
 * Only whole records are taken: a record the daemon is still appending is taken at the next take, from where
 * the last one ended. A body stored before the seal that no event of the seal's answer names stays a payload of
 * the run, and the seal writes a `telemetry_problem` that names it (`appendSealedSpans`): records that another
 * process wrote to the file are in the run's evidence only with the chain saying so.
 * @module
 */
import { join } from "node:path";
import {
  closeNoWait,
  openNoWaitSync,
  readNoWaitSync,
  refuseNonFile,
  sameFile,
} from "../evidence/open_file.ts";
import { ProveviError } from "../evidence/errors.ts";
import { setImmediate } from "node:timers";
import { sha256Vouched } from "../evidence/hash.ts";
import { PACK_MAX_BYTES, readPack } from "../evidence/payload_pack.ts";
import { RECEIVED_FILE } from "./daemon_run.ts";

/** The most bytes one take while the run goes on reads: a run that sends faster has the rest at the next take. */
const TAKE_MAX = 64 * 1024 * 1024;

/** Stores a body as the run's payload: its SHA-256, or null when the run lost it (lenient mode). */
export type StoreBody = (bytes: Uint8Array) => Promise<string | null>;

/** The bodies of a run's `received.spans`, read from where the last read ended. */
export class ReceivedBodies {
  /** The end of the whole records read so far. */
  #offset = 0;
  /** Bodies stored as payloads. */
  readonly #stored = new Set<string>();
  /** Bodies read and checked but not stored (the store refused them): the seal tries them again. */
  readonly #left = new Map<string, Uint8Array>();
  /** True once a take met what no later take can pass (a broken record, a file that is not one): the seal reads on. */
  #stopped = false;
  /** Where the record cut at the last read says it ends: until the file is that long, a read reads nothing. */
  #awaited = 0;
  #taking: Promise<void> = Promise.resolve();
  /** What the last read found after its whole records, when not their end: a cut, or bytes that are no record. */
  #broken: { at: number; why: string } | null = null;
  /** True once a look found the file. */
  #found = false;

  /** The file's name in the run folder. */
  readonly file: string;

  /**
   * @param folder The run folder, where the daemon writes `received.spans`.
   * @param options `file`: another of the daemon's files (`received-json.spans`).
   */
  constructor(readonly folder: string, options: { file?: string } = {}) {
    this.file = options.file ?? RECEIVED_FILE;
  }

  /** The bodies stored as payloads that are not among these, in the order they were stored. */
  storedBut(named: ReadonlySet<string>): string[] {
    return [...this.#stored].filter((sha256) => !named.has(sha256));
  }

  /**
   * The length the file must reach before a read reads again: the end its first record not read whole says it
   * has (0 when none is). A record's header that claims more than follows costs a look, not a read, per take.
   */
  get awaited(): number {
    return this.#awaited;
  }

  /**
   * Where the last read stopped before the file's end, and why (its offset in the file), or null: at the seal,
   * the bodies after it are none the writer can take (the daemon appended them after bytes that are no record).
   */
  get broken(): { at: number; why: string } | null {
    return this.#broken;
  }

  /** How many bodies were stored as payloads. */
  get count(): number {
    return this.#stored.size;
  }

  /** True when the body with this SHA-256 was stored as a payload by a take. */
  stored(sha256: string): boolean {
    return this.#stored.has(sha256);
  }

  /**
   * Reads every whole record left, and checks each against its hash, in reads of at most a take's bytes up to
   * the first that finds none: bytes that are no record (a sparse file the run's program made of the daemon's, up
   * to the size of a pack) cost a read of that size, not their size in memory. A record larger than a read is none
   * the daemon wrote (it takes a body of 16 MiB at most), and ends the reads as a break does. With synchronous
   * reads: what one read takes is bounded, and each trip to a file thread waits for a core on a loaded machine.
   *
   * @returns The bodies that hash to what their records name, by SHA-256 (views into the reads, vouched for, so
   * that the writer stores each without hashing it again), with those read before and not stored.
   * @throws ProveviError when the file is a link, not a plain file, changed while it was opened, or holds more
   * than a pack may.
   */
  readRest(): Map<string, Uint8Array> {
    const bodies = new Map(this.#left);
    this.#left.clear();
    for (;;) {
      const records = this.#records(TAKE_MAX);
      for (const { sha256, bytes } of records) {
        if (sha256Vouched(bytes) === sha256) bodies.set(sha256, bytes);
      }
      // none, or bytes that are no record after them: no read after finds more
      if (records.length === 0 || (this.#broken !== null && !this.#broken.why.startsWith("cut"))) {
        return bodies;
      }
    }
  }

  /**
   * The whole records appended since the last read, at most `most` bytes of them: each body's bytes (a view
   * into one read) and the SHA-256 its record names, not checked yet.
   */
  #records(most: number): { sha256: string; bytes: Uint8Array }[] {
    const path = join(this.folder, this.file);
    let seen: Deno.FileInfo;
    try {
      // the daemon's records for this run: held to the pack's bound, and a pipe or a link in their place refused
      seen = refuseNonFile(path, PACK_MAX_BYTES);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) {
        // gone after a read found it (the run's program removed it): the daemon's next records reach no name
        if (this.#found) this.#broken = { at: this.#offset, why: "the file is gone" };
        return [];
      }
      throw error;
    }
    this.#found = true;
    // the record being appended is not whole yet: reading up to it again would find the same cut
    if (seen.size < this.#awaited) return [];
    const bytes = readFrom(path, { seen, from: this.#offset, most });
    const { records, broken } = readPack(bytes);
    this.#broken = broken === null ? null : { at: this.#offset + broken.at, why: broken.why };
    const last = records.at(-1);
    this.#offset += last === undefined ? 0 : last.offset + last.size + 1;
    // a record cut at the end is one being appended (or cut by `most`): read on from it once it is whole, and
    // leave to the seal one bigger than a read takes (its header may lie: 20 reads a second of `most` bytes
    // that end in the same cut would hold a core for nothing)
    this.#awaited = broken?.why === "cut in a record's bytes"
      ? this.#offset + recordLength(bytes, broken.at)
      : 0;
    if (this.#awaited - this.#offset > most) this.#stopped = true;
    if (broken !== null && !broken.why.startsWith("cut")) this.#stopped = true;
    return records.map((r) => ({ sha256: r.sha256, bytes: bytes.subarray(r.offset, r.offset + r.size) }));
  }

  /**
   * Reads on, for a reader that stores nothing (the rows of a run whose writer has not sealed it): the next whole
   * records, at most {@linkcode TAKE_MAX} bytes of them, each that hashes to what its record names; none once the
   * file ends, is cut, or holds bytes that are no record.
   *
   * @returns The bodies, by SHA-256.
   * @throws ProveviError when the file is a link, not a plain file, or holds more than a pack may.
   */
  readOn(): Map<string, Uint8Array> {
    const bodies = new Map<string, Uint8Array>();
    if (this.#stopped) return bodies;
    const before = this.#offset;
    for (const { sha256, bytes } of this.#records(TAKE_MAX)) {
      if (sha256Vouched(bytes) === sha256) bodies.set(sha256, bytes);
    }
    if (this.#offset === before) this.#stopped = true;
    return bodies;
  }

  /**
   * Takes the bodies appended since the last take: reads them and stores each as a payload, after the takes
   * before it. Never fails: a body it cannot store is left for the seal, and a file it cannot read stops the
   * takes (the seal reads it, and says what is wrong).
   *
   * @param store Stores one body.
   * @returns When it is done.
   */
  take(store: StoreBody): Promise<void> {
    this.#taking = this.#taking.then(async () => {
      if (this.#stopped) return;
      let records: { sha256: string; bytes: Uint8Array }[];
      try {
        records = this.#records(TAKE_MAX);
      } catch {
        this.#stopped = true;
        return;
      }
      const left = new Map(this.#left); // read before and not stored: tried again first
      this.#left.clear();
      await this.store(left, store);
      // one body at a time, each in a turn of the event loop of its own: a take of many bodies (a hash and a
      // write each) holds the writer's thread for a body at a time, and its other work goes on between
      for (const { sha256, bytes } of records) {
        if (this.#stored.has(sha256)) continue;
        await nextTurn();
        if (sha256Vouched(bytes) === sha256) await this.store(new Map([[sha256, bytes]]), store);
      }
    });
    return this.#taking;
  }

  /**
   * Stores bodies not stored yet, one after the other. While the run goes on (no `only`), a body the store
   * refuses or loses is left for the next read; at the seal (`only`: the bodies its events name), a refusal
   * fails the seal's take, as a payload that cannot be stored fails any step.
   *
   * @param bodies The bodies, by SHA-256.
   * @param store Stores one body.
   * @param options `only`: store only these, and let a refusal through.
   */
  async store(
    bodies: ReadonlyMap<string, Uint8Array>,
    store: StoreBody,
    options: { only?: ReadonlySet<string> } = {},
  ): Promise<void> {
    const { only } = options;
    for (const [sha256, bytes] of bodies) {
      if (this.#stored.has(sha256) || (only && !only.has(sha256))) continue;
      let kept: string | null = null;
      try {
        kept = await store(bytes);
      } catch (error) {
        if (only) throw error;
        this.#stopped = true; // a run that takes no payload now (sealed, or its store failing): the seal says why
      }
      if (kept === sha256) this.#stored.add(sha256);
      else if (!only) this.#left.set(sha256, bytes);
    }
  }

  /** Waits for the take under way, if any. */
  async settle(): Promise<void> {
    await this.#taking;
  }
}

/** A promise kept at the event loop's next turn, after the I/O that is ready (a timer of 0 ms waits 4 ms nested). */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** The bytes of the record whose header starts at `at`, as its header says (readPack read it as one). */
function recordLength(bytes: Uint8Array, at: number): number {
  const end = bytes.indexOf(0x0a, at);
  const size = Number(new TextDecoder("latin1").decode(bytes.subarray(at, end)).split(" ")[1]);
  return end - at + 1 + size + 1;
}

/**
 * At most `most` bytes of a plain file from an offset, the file checked to be the one looked at (opened without
 * waiting: a FIFO swapped in after the look is refused, not waited on, up to 330 times a second).
 */
function readFrom(path: string, { seen, from, most }: { seen: Deno.FileInfo; from: number; most: number }) {
  let opened: ReturnType<typeof openNoWaitSync>;
  try {
    opened = openNoWaitSync(path);
  } catch (error) {
    throw new ProveviError(`cannot read ${path}: ${(error as Error).message}`, { cause: error });
  }
  const { fd, info } = opened;
  try {
    if (!sameFile(info, seen)) throw new ProveviError(`${path} changed while it was opened`);
    if (info.size > PACK_MAX_BYTES) {
      throw new ProveviError(`${path} holds more than the ${PACK_MAX_BYTES} bytes a pack may`);
    }
    const bytes = new Uint8Array(Math.max(0, Math.min(info.size - from, most)));
    let n = 0;
    while (n < bytes.length) {
      const got = readNoWaitSync(fd, bytes.subarray(n), from + n);
      if (got === 0) break;
      n += got;
    }
    return bytes.subarray(0, n);
  } finally {
    closeNoWait(fd);
  }
}

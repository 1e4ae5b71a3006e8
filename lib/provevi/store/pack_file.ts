/**
 * A run's `payloads.pack` (manifest format 2) on disk: the writer appends each small payload as a record with one
 * write to a file kept open, where a file of its own would cost an inode, a name in a folder and their journal
 * entries; the reader finds one record by the headers alone.
 * @module
 */
import { keptAtName } from "./kept_at_name.ts";
import { appendWhole } from "../evidence/append_whole.ts";
import { ProveviError } from "../evidence/errors.ts";
import { PlainFile } from "../evidence/open_file.ts";
import {
  indexPackFile,
  PACK_MAX_BYTES,
  type PackRecord,
  packRecord,
  packRecordSize,
} from "../evidence/payload_pack.ts";

/** The bytes appended since the last flush before {@linkcode PackWriter.flush} starts another: 2 MiB. */
export const FLUSH_MIN_BYTES = 2 * 1024 * 1024;
/** The largest record built in the writer's reused buffer; a larger one gets an array of its own. */
const SCRATCH_MAX = 64 * 1024;
const encoder = new TextEncoder();

/** Appends payload records to one pack file, which it makes at the first record. */
export class PackWriter {
  #file: Deno.FsFile | null = null;
  readonly #held = new Set<string>();
  #size = 0; // the bytes of the records appended
  // A new array per record (a step's 10 KB payload) cost more CPU than its hash, in allocation and in the
  // collections it brings on; a record is written before put returns, so one buffer serves them all.
  #scratch: Uint8Array | null = null;

  /** @param path The pack file; it must not exist yet. */
  constructor(readonly path: string) {}

  /** True when the pack holds the payload. */
  has(sha256: string): boolean {
    return this.#held.has(sha256);
  }

  /** True when a record of a payload of this many bytes still fits under {@linkcode PACK_MAX_BYTES}. */
  fits(size: number): boolean {
    return this.#size + packRecordSize(size) <= PACK_MAX_BYTES;
  }

  /** True once the pack file exists. */
  get opened(): boolean {
    return this.#file !== null;
  }

  /**
   * Appends one record with a synchronous write, as an event's line is appended: the record is in the file
   * (not yet fsynced) when this returns. A write that fails part way takes back what it wrote, so the pack stays
   * whole records; if even that fails, the check reports the torn record (`pack.broken`).
   *
   * @param sha256 The payload's SHA-256.
   * @param bytes The payload.
   */
  put(sha256: string, bytes: Uint8Array): void {
    // read too: the seal reads the records back from here when the file was replaced (keepAtName)
    this.#file ??= Deno.openSync(this.path, { createNew: true, read: true, write: true, append: true });
    const record = recordAround(sha256, bytes) ?? this.#record(sha256, bytes);
    appendWhole(this.#file, record);
    this.#held.add(sha256);
    this.#size += record.length;
  }

  /** The record's bytes ({@linkcode packRecord}'s), in the reused buffer when they fit in it. */
  #record(sha256: string, bytes: Uint8Array): Uint8Array {
    const size = packRecordSize(bytes.length);
    if (size > SCRATCH_MAX) return packRecord(sha256, bytes);
    this.#scratch ??= new Uint8Array(SCRATCH_MAX);
    const out = this.#scratch.subarray(0, size);
    const { written } = encoder.encodeInto(`${sha256} ${bytes.length}\n`, out);
    out.set(bytes, written);
    out[size - 1] = 0x0a;
    return out;
  }

  /**
   * Starts an fdatasync of the records appended so far, on a file thread, once {@linkcode FLUSH_MIN_BYTES} have
   * come since the last and unless one is under way; nothing waits for it: the seal's fsync then has only what
   * came since to write (a run's writer asks after each take of what `prove serve` received). Each is a commit of
   * the file system's journal, which other processes' writes may wait behind on a busy disk: a few a run, not
   * one a take. What is durable is still what the seal makes durable.
   */
  flush(): void {
    if (this.#file === null || this.#flushing !== null || this.#size - this.#flushed < FLUSH_MIN_BYTES) {
      return;
    }
    const size = this.#size;
    this.#flushing = this.#file.syncData().then(() => void (this.#flushed = size), () => {})
      .finally(() => this.#flushing = null);
  }
  #flushing: Promise<void> | null = null;
  #flushed = 0; // the bytes of records written to disk by a flush

  /** Fsyncs the pack (the seal does, with the run's other files), and waits for a flush under way. */
  async sync(): Promise<void> {
    await Promise.all([this.#flushing, this.#file?.sync()]);
  }

  /**
   * Puts the pack back at its name when another party replaced, moved or removed it ({@linkcode keptAtName}).
   *
   * @param aside The folder that takes what was put at the name.
   */
  keepAtName(aside: string): void {
    if (this.#file === null) return;
    const copy = keptAtName(this.#file, this.path, aside);
    if (copy === null) return;
    this.close();
    this.#file = copy;
  }

  /** Closes the pack file; nothing more can be appended. */
  close(): void {
    try {
      this.#file?.close();
    } catch { /* closed already */ }
  }
}

const NEWLINE = 0x0a;

/**
 * The record of a payload when its bytes sit in one already, as they do when they come from a pack read whole
 * (the span daemon's `received.spans` at a seal, `packPayload`'s views): the header before them and the newline
 * after them, as `packRecord` would write them, read in place. The writer then appends that view, where making
 * the record would copy each body of a megabyte-sized pack once more. Null when the bytes around are not that
 * record; its header and newline are compared byte by byte, so the view holds exactly what `packRecord` makes.
 */
function recordAround(sha256: string, bytes: Uint8Array): Uint8Array | null {
  const header = `${sha256} ${bytes.length}\n`;
  const start = bytes.byteOffset - header.length;
  const end = bytes.byteOffset + bytes.length + 1;
  if (start < 0 || end > bytes.buffer.byteLength) return null;
  const record = new Uint8Array(bytes.buffer, start, end - start);
  if (record[record.length - 1] !== NEWLINE) return null;
  for (let i = 0; i < header.length; i++) if (record[i] !== header.charCodeAt(i)) return null;
  return record;
}

/** Reads single payloads from a pack, keeping where each record is (a live run's pack grows: it reads on). */
export class PackReader {
  readonly #records = new Map<string, PackRecord>();
  #end = 0; // the end of the records indexed so far

  /**
   * @param path The pack file.
   * @param refuse Throws when the pack may not be read (a link, or not a plain file).
   */
  constructor(readonly path: string, readonly refuse: () => void) {}

  /**
   * The bytes of a packed payload, its hash not checked (the caller checks it), or null when the pack lacks a
   * whole record of it, holds more than `most` bytes of it, or cannot be read. Only the headers and the one record
   * are read.
   * @throws ProveviError when the pack is refused (a link, not a plain file, past `PACK_MAX_BYTES`).
   */
  read(sha256: string, most = Infinity): Uint8Array | null {
    let file: PlainFile;
    try {
      this.refuse();
      // opened without waiting: a pipe swapped in after the look is refused, not waited on for ever
      file = PlainFile.open(this.path);
    } catch (error) {
      if (error instanceof ProveviError) throw error;
      return null;
    }
    try {
      if (!this.#records.has(sha256)) this.#indexFrom(file);
      const record = this.#records.get(sha256);
      if (record === undefined || record.size > most) return null;
      const bytes = new Uint8Array(record.size);
      file.seekSync(record.offset, Deno.SeekMode.Start);
      for (let n = 0; n < bytes.length;) {
        const got = file.readSync(bytes.subarray(n));
        if (got === null || got === 0) return null;
        n += got;
      }
      return bytes;
    } catch {
      return null;
    } finally {
      file.close();
    }
  }

  /** Indexes the records written since the last look; the first record of a hash is the one read. */
  #indexFrom(file: PlainFile): void {
    const { records } = indexPackFile(file, this.#end);
    for (const r of records) if (!this.#records.has(r.sha256)) this.#records.set(r.sha256, r);
    const tail = records.at(-1);
    if (tail) this.#end = tail.offset + tail.size + 1;
  }
}

/**
 * A payload pack: many payloads in one append-only file, each record `<sha256> <size>\n<bytes>\n` (the SHA-256
 * in lowercase hex, the size in decimal bytes). One file takes a payload with one `write` to a file already
 * open, where a file of its own costs a file's creation: an inode, a name in a folder and their journal entries,
 * which wait behind every other process's fsync on a busy disk (2–5 ms a file, against 10 µs an append, measured
 * on the shared 2-core machine). `evidence/payloads.pack` keeps a run's small payloads; the span daemon keeps the
 * batches it took for a run in `received.spans` beside the evidence, in the same records. Each record names its
 * own hash, so a reader checks every payload's bytes as it does a payload file's.
 * @module
 */
import { join } from "node:path";
import { sha256Hex, sha256Vouched, utf8 } from "./hash.ts";
import type { RunRecord } from "./record.ts";
import { PlainFile } from "./open_file.ts";

/** The pack of a run's small payloads, under `evidence/` (manifest format 2). */
export const PACK_FILE = "payloads.pack";

/**
 * 256 KiB: a payload smaller than this is a record of the pack; one of this size or more is a file of its own,
 * which a reader can stream and whose creation costs little beside its bytes (docs/evidence-format.md).
 */
export const PACK_LIMIT = 256 * 1024;

/**
 * The most a pack may hold: 1 GiB. The writer puts a payload that would take the pack past it in a file of its own
 * instead, and a reader refuses a bigger pack before it reads a byte (a pack is read whole to check it, and a
 * forged one of many gigabytes would otherwise take the reader's memory with it).
 */
export const PACK_MAX_BYTES = 1024 * 1024 * 1024;

/**
 * The most a reader takes whole of one payload file (1 GiB, as of a pack): `RunRecord.payload` refuses a bigger
 * one before it reads a byte, and one that grows past it while it is read. `prove verify` still hashes such a
 * file as a stream; only the readers that need its bytes (the viewer, the MLflow copy, provtrace, a pinned price
 * table) refuse it, where a forged sparse file of many gigabytes would otherwise take their memory with it.
 */
export const PAYLOAD_READ_MAX_BYTES = PACK_MAX_BYTES;

/**
 * The most an evidence text (`events.jsonl`, `manifest.json`, …) may hold to be read: 512 MiB, which is also
 * about the longest string V8 makes, so a longer file could not be read as one text anyway. A reader refuses a
 * bigger one before it reads a byte.
 */
export const EVIDENCE_TEXT_MAX_BYTES = 512 * 1024 * 1024;

/** One record of a pack: where its bytes are. */
export interface PackRecord {
  /** The SHA-256 the record's header names. */
  sha256: string;
  /** The offset of its bytes in the pack. */
  offset: number;
  /** The number of its bytes. */
  size: number;
}

/** A pack read: its records in order, and why it stops early when it does (a cut file, a broken header). */
export interface PackIndex {
  records: PackRecord[];
  /** Null when every byte of the pack is in a whole record; else what is wrong at the offset `at`. */
  broken: { at: number; why: string } | null;
}

const HEADER = /^([0-9a-f]{64}) (0|[1-9][0-9]{0,14})$/;
/** The longest header: 64 hex digits, a space, 15 digits. */
const MAX_HEADER = 80;

/**
 * A header's bytes as text, one character a byte, for {@linkcode HEADER} to match: what a header may hold is
 * ASCII, where this reads as any decoder does, and any other byte fails the match either way. Made here, not by
 * a decoder, whose call (an op) cost more than the header's few bytes, for every record of every run read.
 */
function headerText(bytes: Uint8Array): string {
  return bytes.length > MAX_HEADER ? "" : String.fromCharCode.apply(null, bytes as unknown as number[]);
}
const NEWLINE = 0x0a;

/** The bytes a record of a payload of this many bytes takes in a pack: its header, the payload and a newline. */
export function packRecordSize(size: number): number {
  return 64 + 1 + String(size).length + 1 + size + 1;
}

/**
 * The bytes of one record: its header, the payload and a newline, to append with one write.
 *
 * @param sha256 The payload's SHA-256 (the caller has it already).
 * @param bytes The payload.
 * @returns The record.
 * @example
 * ```ts
 * import { packRecord } from "./payload_pack.ts";
 * import { sha256Hex } from "./hash.ts";
 * const bytes = new TextEncoder().encode("{}");
 * packRecord(sha256Hex(bytes), bytes).length; // 64 + 1 + 1 + 1 + 2 + 1 = 70
 * ```
 */
export function packRecord(sha256: string, bytes: Uint8Array): Uint8Array {
  const header = utf8(`${sha256} ${bytes.length}\n`);
  const out = new Uint8Array(header.length + bytes.length + 1);
  out.set(header, 0);
  out.set(bytes, header.length);
  out[out.length - 1] = NEWLINE;
  return out;
}

/**
 * Reads a pack's records from its bytes, without hashing them ({@linkcode packPayload} checks one). A pack
 * whose end is not a whole record (cut while a record was written) or whose header is not one is `broken` at
 * that offset; the records before it stand.
 *
 * @param pack The pack's bytes.
 * @returns Its records and where it breaks, if it does.
 * @example
 * ```ts
 * import { packRecord, readPack } from "./payload_pack.ts";
 * import { sha256Hex } from "./hash.ts";
 * const bytes = new TextEncoder().encode("{}");
 * readPack(packRecord(sha256Hex(bytes), bytes)).records[0]!.size; // 2
 * ```
 */
export function readPack(pack: Uint8Array): PackIndex {
  const records: PackRecord[] = [];
  let at = 0;
  while (at < pack.length) {
    const end = pack.subarray(at, at + MAX_HEADER + 1).indexOf(NEWLINE);
    const match = end < 0 ? null : HEADER.exec(headerText(pack.subarray(at, at + end)));
    if (match === null) {
      const why = end < 0 && pack.length - at <= MAX_HEADER
        ? "cut in a record's header"
        : "not a record's header";
      return { records, broken: { at, why } };
    }
    const size = Number(match[2]);
    const offset = at + end + 1;
    if (offset + size + 1 > pack.length) return { records, broken: { at, why: "cut in a record's bytes" } };
    if (pack[offset + size] !== NEWLINE) {
      return { records, broken: { at, why: "a record's bytes run past its size" } };
    }
    records.push({ sha256: match[1]!, offset, size });
    at = offset + size + 1;
  }
  return { records, broken: null };
}

/**
 * The bytes of one record, checked against the hash its header names: a view into the pack, not a copy, and
 * vouched for ({@linkcode sha256Vouched}), so that a writer that stores them takes the hash checked here and does
 * not hash them again. Leave the pack as it is until they are stored.
 *
 * @param pack The pack's bytes.
 * @param record The record, as {@linkcode readPack} found it.
 * @returns The bytes, or null when they do not hash to the record's SHA-256.
 * @example
 * ```ts
 * import { packPayload, packRecord, readPack } from "./payload_pack.ts";
 * import { sha256Hex } from "./hash.ts";
 * const bytes = new TextEncoder().encode("{}");
 * const pack = packRecord(sha256Hex(bytes), bytes);
 * packPayload(pack, readPack(pack).records[0]!); // the bytes of "{}"
 * ```
 */
export function packPayload(pack: Uint8Array, record: PackRecord): Uint8Array | null {
  const bytes = pack.subarray(record.offset, record.offset + record.size);
  return sha256Vouched(bytes) === record.sha256 ? bytes : null;
}

/**
 * The payloads a run folder keeps in its pack, by SHA-256, with their sizes as the records' headers say (the
 * bytes are not hashed here); none when the run has no pack. The stores' rows name each payload's place with it.
 *
 * @param folder The run folder.
 * @returns The size of each packed payload.
 * @example
 * ```ts
 * import { packedPayloads } from "./payload_pack.ts";
 * const packed = await packedPayloads("/tmp/runs/run-x"); // Map { "ab12…" => 2048, … }
 * ```
 */
export function packedPayloads(folder: string): Promise<Map<string, number>> {
  let file: PlainFile;
  try {
    // opened without waiting: a pipe at the pack's path is refused, not waited on for ever
    file = PlainFile.open(join(folder, "evidence", PACK_FILE), { follow: true });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return Promise.resolve(new Map());
    return Promise.reject(error);
  }
  try {
    return Promise.resolve(new Map(indexPackFile(file).records.map((r) => [r.sha256, r.size])));
  } finally {
    file.close();
  }
}

/** The calls a pack's index makes of its file: a `Deno.FsFile`, or a `PlainFile` (`open_file.ts`). */
export interface PackFile {
  statSync(): { size: number };
  seekSync(offset: number, whence: Deno.SeekMode): number;
  readSync(bytes: Uint8Array): number | null;
}

/** What a read of a pack's headers takes after a large record: the next header, and a few small records. */
const SMALL_WINDOW = 4 * 1024;
/** What it takes among small records: many of them with one read. */
const LARGE_WINDOW = 256 * 1024;

/**
 * Reads a pack file's records by their headers, through a window of its bytes: small records are found in
 * memory, many with one read, and a large record is passed over without reading its bytes (one read finds its
 * closing newline and the next header). So a reader finds one payload without reading the others, and indexing
 * a pack of large bodies reads a few KiB a record where reading it whole read every byte.
 *
 * @param file The pack, open to read.
 * @param from The offset of a record to start at (0, or the end of the records read before).
 * @returns Its records from there, and where it breaks, as {@linkcode readPack} gives them.
 */
export function indexPackFile(file: PackFile, from = 0): PackIndex {
  const records: PackRecord[] = [];
  const size = file.statSync().size;
  // the window: the file's bytes [base, base + window.length)
  let window = new Uint8Array(0);
  let base = 0;
  const load = (at: number, length: number) => {
    file.seekSync(at, Deno.SeekMode.Start);
    const bytes = new Uint8Array(Math.max(0, Math.min(length, size - at)));
    window = bytes.subarray(0, readFully(file, bytes));
    base = at;
  };
  let at = from;
  let last = 0; // the size of the record before, which says what the next read is likely to find
  while (at < size) {
    if (at < base || at + MAX_HEADER + 1 > base + window.length) {
      load(at, last < SMALL_WINDOW ? LARGE_WINDOW : SMALL_WINDOW);
    }
    const head = window.subarray(at - base, at - base + MAX_HEADER + 1);
    const end = head.indexOf(NEWLINE);
    const match = end < 0 ? null : HEADER.exec(headerText(head.subarray(0, end)));
    if (match === null) {
      const why = end < 0 && size - at <= MAX_HEADER ? "cut in a record's header" : "not a record's header";
      return { records, broken: { at, why } };
    }
    const length = Number(match[2]);
    const offset = at + end + 1;
    if (offset + length + 1 > size) return { records, broken: { at, why: "cut in a record's bytes" } };
    const newline = offset + length;
    if (newline >= base + window.length) load(newline, SMALL_WINDOW);
    if (window[newline - base] !== NEWLINE) {
      return { records, broken: { at, why: "a record's bytes run past its size" } };
    }
    records.push({ sha256: match[1]!, offset, size: length });
    at = newline + 1;
    last = length;
  }
  return { records, broken: null };
}

/** Reads until `into` is full or the file ends; the number of bytes read. */
function readFully(file: PackFile, into: Uint8Array): number {
  let n = 0;
  while (n < into.length) {
    const got = file.readSync(into.subarray(n));
    if (got === null || got === 0) break;
    n += got;
  }
  return n;
}

/**
 * Where a payload of a run is, relative to the run folder, as the stores' rows name it.
 *
 * @param sha256 The payload's SHA-256.
 * @param packed Whether it is in the pack.
 * @returns `evidence/payloads.pack`, or `evidence/payloads/<sha256>`.
 */
export function payloadPlace(sha256: string, packed: boolean): string {
  return packed ? `evidence/${PACK_FILE}` : `evidence/payloads/${sha256}`;
}

/** What a run's signed statement says of its pack: the pack file's SHA-256, and the payloads in it. */
export interface PackSubject {
  /** The SHA-256 of the whole pack file. */
  sha256: string;
  /** The payloads its whole records hold, by SHA-256: the statement names them through the pack. */
  packed: ReadonlySet<string>;
}

/**
 * The statement's view of a pack: one subject `evidence/payloads.pack` for the file, in place of a subject for
 * each payload it holds (an in-toto verifier hashes each subject's file; a packed payload has none).
 *
 * @param pack The pack's bytes, or null when the run has none.
 * @returns The subject, or null.
 * @example
 * ```ts
 * import { packRecord, packSubject } from "./payload_pack.ts";
 * import { sha256Hex } from "./hash.ts";
 * const bytes = new TextEncoder().encode("{}");
 * packSubject(packRecord(sha256Hex(bytes), bytes))!.packed.has(sha256Hex(bytes)); // true
 * ```
 */
export function packSubject(pack: Uint8Array | null): PackSubject | null {
  if (pack === null) return null;
  return { sha256: sha256Hex(pack), packed: new Set(readPack(pack).records.map((r) => r.sha256)) };
}

/**
 * The SHA-256 of every payload a run stores: the files of `payloads/` and the records of `payloads.pack`
 * (manifest format 2), sorted, each once. Their bytes are not read here; {@linkcode RunRecord.payload} reads
 * one and checks it.
 *
 * @param record The run.
 * @returns The payloads' SHA-256s.
 * @example
 * ```ts
 * import { FileStore, storedPayloads } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * await using store = new FileStore({ runs: "fixtures/runs" });
 * const record = await store.readRun("run-20261129T120000Z-0badc0de");
 * assert.equal((await storedPayloads(record)).length, 3);
 * ```
 */
export async function storedPayloads(record: RunRecord): Promise<string[]> {
  const names = (await record.payloadNames()).filter((n) => /^[0-9a-f]{64}$/.test(n));
  const packed = packSubject(await record.payloadPack())?.packed ?? [];
  return [...new Set([...names, ...packed])].sort();
}

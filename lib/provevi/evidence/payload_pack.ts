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
import { sha256Vouched, utf8 } from "./hash.ts";

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
const NEWLINE = 0x0a;

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
  const ascii = new TextDecoder("latin1");
  let at = 0;
  while (at < pack.length) {
    const end = pack.subarray(at, at + MAX_HEADER + 1).indexOf(NEWLINE);
    const match = end < 0 ? null : HEADER.exec(ascii.decode(pack.subarray(at, at + end)));
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

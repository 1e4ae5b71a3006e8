/**
 * The reads of the attestation's small files (`attestation.ts` signs, `attestation_check.ts` checks): kept out of
 * either module's exports.
 * @module
 */
import { readCappedSync } from "./open_file.ts";
import { EVIDENCE_TEXT_MAX_BYTES } from "./payload_pack.ts";

/** UTF-8 that refuses what is not, and keeps a byte-order mark (a line that starts with one is not JSON). */
export const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * A small file's bytes, read with synchronous calls: null when missing; a link, a file not plain, or one past the
 * evidence cap refused (by `readCappedSync`, which looks before it reads).
 */
export function readPlainBytes(path: string): Uint8Array | null {
  try {
    return readCappedSync(path, EVIDENCE_TEXT_MAX_BYTES);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

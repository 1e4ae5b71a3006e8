/**
 * A run record that reads each file once for both the check and the rows: `verifyRun` reads the events, the
 * manifest and every payload to check them, and the rows are then made from those same texts and bytes, not
 * from a second read of the files. The rows are thus made from exactly what was verified, and the build does
 * not read and hash the run's evidence twice.
 * @module
 */
import type { PayloadEntry, RunRecord } from "../../provevi/mod.ts";
import { packPayload, type PackRecord, readPack } from "../../provevi/evidence/mod.ts";

/** A run's pack as the check read it, indexed, and the payload files its listing named. */
interface PackInHand {
  bytes: Uint8Array;
  at: Map<string, PackRecord>;
  files: Set<string>;
}

/**
 * Payload bytes kept between the check and the rows, per run: beyond it, a payload is read again when its row
 * is made (as every payload was before), so a run of huge payloads does not hold them all twice.
 */
const KEPT_BYTES = 64 * 1024 * 1024;

/**
 * A record over `record` whose texts are read once, and whose payloads, hashed by the check (`payloadInfo`), are
 * kept for the rows (`payload`) while the record lives (one run's check and mapping).
 *
 * @param record The store's record of the run.
 * @returns The record to check and map.
 * @example
 * ```ts
 * import { openStore } from "../../provevi/mod.ts";
 * import { readOnceRecord } from "./_read_once_record.ts";
 * await using store = await openStore("file", { readOnly: true, runs: "fixtures/runs" });
 * const record = readOnceRecord(await store.readRun("run-20261129T120000Z-0badc0de"));
 * ```
 */
export function readOnceRecord(record: RunRecord): RunRecord {
  let events: Promise<string | null> | null = null;
  let manifest: Promise<string | null> | null = null;
  let pack: Promise<Uint8Array | null> | null = null;
  let names: Promise<string[]> | null = null;
  const kept = new Map<string, Uint8Array>();
  let keptBytes = 0;
  const packed = packedFromCheck(() => ({ pack, names }));
  return {
    runId: record.runId,
    folder: record.folder,
    ...(record.readsFolder ? { readsFolder: true } : {}),
    eventsText: () => (events ??= record.eventsText()),
    manifestText: () => (manifest ??= record.manifestText()),
    payloadNames: () => (names ??= record.payloadNames()),
    // read once for the check; a packed payload's row is taken from the same bytes, its hash checked again
    payloadPack: () => (pack ??= record.payloadPack()),
    async payloadInfo(sha256: string): Promise<PayloadEntry | null> {
      let bytes: Uint8Array;
      try {
        // payload() reads the bytes and checks that they hash to their name: then that name and their size are
        // what payloadInfo would say.
        bytes = await record.payload(sha256);
      } catch {
        // missing, not a plain file, or changed: the store's own answer says which
        return await record.payloadInfo(sha256);
      }
      if (keptBytes + bytes.length <= KEPT_BYTES && !kept.has(sha256)) {
        kept.set(sha256, bytes);
        keptBytes += bytes.length;
      }
      return { sha256, size: bytes.length };
    },
    async payload(sha256: string): Promise<Uint8Array> {
      return kept.get(sha256) ?? (await packed(sha256)) ?? await record.payload(sha256);
    },
  };
}

/**
 * A packed payload from the pack's bytes that the check read, or null (the store's record then reads it as it
 * always does). Only a payload that has no file of its own in the listing the check read: the store's record
 * reads a payload's file before the pack, and so does this. Its bytes are hashed again here, as the store's
 * record hashes what it reads. Without this, each packed payload of a row was found by a failed look for its
 * file (an error made and thrown) and the pack opened, indexed and closed again for it.
 */
function packedFromCheck(
  read: () => { pack: Promise<Uint8Array | null> | null; names: Promise<string[]> | null },
): (sha256: string) => Promise<Uint8Array | null> {
  let index: Promise<PackInHand | null> | undefined;
  return async (sha256) => {
    const { pack, names } = read();
    if (pack === null || names === null) return null; // the check did not read them: nothing in hand
    index ??= (async () => {
      // A pack or listing that could not be read leaves every payload to the store's record and its errors.
      const [bytes, listed] = await Promise.all([pack, names]).catch(() => [null, null] as const);
      if (bytes === null || listed === null) return null;
      const at = new Map<string, PackRecord>();
      // The first record of a hash is the one a pack reader reads.
      for (const r of readPack(bytes).records) if (!at.has(r.sha256)) at.set(r.sha256, r);
      return { bytes, at, files: new Set(listed) };
    })();
    const found = await index;
    if (found === null) return null;
    const { bytes, at, files } = found;
    const record = at.get(sha256);
    if (files.has(sha256) || record === undefined) return null;
    return packPayload(bytes, record);
  };
}

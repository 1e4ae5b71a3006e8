/**
 * A run record that reads each file once for both the check and the rows: `verifyRun` reads the events, the
 * manifest and every payload to check them, and the rows are then made from those same texts and bytes, not
 * from a second read of the files. The rows are thus made from exactly what was verified, and the build does
 * not read and hash the run's evidence twice.
 * @module
 */
import type { PayloadEntry, RunRecord } from "../../provevi/mod.ts";

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
  const kept = new Map<string, Uint8Array>();
  let keptBytes = 0;
  return {
    runId: record.runId,
    folder: record.folder,
    eventsText: () => (events ??= record.eventsText()),
    manifestText: () => (manifest ??= record.manifestText()),
    payloadNames: () => record.payloadNames(),
    // read once for the check; a packed payload's row reads its record again, by the pack's index, hash checked
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
    payload(sha256: string): Promise<Uint8Array> {
      const bytes = kept.get(sha256);
      return bytes === undefined ? record.payload(sha256) : Promise.resolve(bytes);
    },
  };
}

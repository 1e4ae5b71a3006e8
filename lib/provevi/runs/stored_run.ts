/**
 * A run to show as its store holds it: an indexed store (sqlite, postgres) keeps each event's line in a row, so
 * the run's events are read from there, and a run whose folder moved, or is on another machine, is still
 * shown. Its folder stays the record that the checks read.
 * @module
 */
import type { RunRecord } from "../evidence/record.ts";
import type { PayloadEntry } from "../evidence/manifest.ts";
import { FileRunRecord } from "../store/file_store.ts";
import type { EvidenceStore } from "../store/store.ts";
import { RunElsewhere } from "../postgres/postgres_store.ts";
import { findRun } from "./find_run.ts";

/** A store that keeps each event's line in a row (the sqlite and postgres stores). */
export interface RowLines {
  /**
   * The run's events as its rows hold them, in the form of `events.jsonl` (each line and a newline, by seq),
   * or null when the store holds no run of that ID.
   */
  eventsText(runId: string): Promise<string | null>;
}

/** A run found to show: the record of its folder, and the record to show its events from. */
export interface StoredRun {
  /** The run as its folder holds it, for the checks (its folder may be missing). */
  record: RunRecord;
  /** The same run with its events from the store's rows when the store keeps them, else `record`. */
  shown: RunRecord;
  /** True when `shown` reads the store's rows. */
  fromRows: boolean;
}

/**
 * Finds a run as {@linkcode findRun} does, and reads its events from the store's rows when the store keeps
 * them. A run of a postgres store whose folder is not on this machine is found too (its record's folder is
 * the one the store records, and missing). A run folder's path is read from that folder.
 *
 * @param ref A run ID, `latest`, the start of a run ID, or a run folder's path.
 * @param options `store` to look in; `runs` for the runs root of the default file store.
 * @returns The run's records.
 * @throws RunNotFound when there is no such run.
 * @example
 * ```ts
 * import { findStoredRun, SqliteStore } from "../mod.ts";
 * await using store = new SqliteStore("/tmp/evidence.db", { create: false });
 * const { shown } = await findStoredRun("latest", { store });
 * console.log(await shown.eventsText());
 * ```
 */
export async function findStoredRun(
  ref: string,
  options: { store?: EvidenceStore; runs?: string } = {},
): Promise<StoredRun> {
  const isPath = ref.includes("/") || ref === "." || ref === "..";
  let record: RunRecord;
  try {
    record = await findRun(ref, options);
  } catch (error) {
    if (!(error instanceof RunElsewhere)) throw error;
    record = new FileRunRecord(error.runId, error.folder);
  }
  const rows = options.store as (EvidenceStore & Partial<RowLines>) | undefined;
  const text = isPath || typeof rows?.eventsText !== "function" ? null : await rows.eventsText(record.runId);
  return text === null
    ? { record, shown: record, fromRows: false }
    : { record, shown: new RowsRunRecord(record, text), fromRows: true };
}

/** A run's record whose events are the store's rows; everything else is read from its folder. */
class RowsRunRecord implements RunRecord {
  readonly runId: string;
  readonly folder: string | null;
  readonly #record: RunRecord;
  readonly #text: string;

  constructor(record: RunRecord, text: string) {
    this.runId = record.runId;
    this.folder = record.folder;
    this.#record = record;
    this.#text = text;
  }
  eventsText(): Promise<string | null> {
    return Promise.resolve(this.#text);
  }
  manifestText(): Promise<string | null> {
    return this.#record.manifestText();
  }
  payloadNames(): Promise<string[]> {
    return this.#record.payloadNames();
  }
  payloadInfo(sha256: string): Promise<PayloadEntry | null> {
    return this.#record.payloadInfo(sha256);
  }
  payloadPack(): Promise<Uint8Array | null> {
    return this.#record.payloadPack();
  }
  payload(sha256: string, most?: number): Promise<Uint8Array> {
    return this.#record.payload(sha256, most);
  }
}

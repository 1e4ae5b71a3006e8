/**
 * The driver interface: {@linkcode EvidenceStore} gives a {@linkcode RunWriter} for each run and reads a run
 * back as a {@linkcode RunRecord}. Every store keeps `events.jsonl`, `payloads/` and `manifest.json` in the
 * run folder, so a bundle is the same whatever the store.
 * @module
 */
import type { EvidenceEvent } from "./event.ts";
import { RunNotFound } from "./errors.ts";
import type { LostEvent, Manifest, PayloadEntry } from "./manifest.ts";
import type { StoredSpan } from "./span_exporter.ts";

/** What the recorder tells a writer at the seal. */
export interface SealInfo {
  /** The seal time to record; now by default (a copy keeps the original's). */
  sealed_at?: string;
  /** Events that lenient mode could not write. */
  lost?: LostEvent[];
}

/**
 * What a store gives for one run: it appends lines, stores payloads by their SHA-256 and seals the run.
 */
export interface RunWriter {
  /** The run's ID. */
  readonly runId: string;
  /** The run folder. */
  readonly folder: string;
  /**
   * Appends one event. The line is written before the promise resolves.
   * @param line The event's canonical line, without a newline.
   * @param event The parsed event of the line.
   */
  append(line: string, event: EvidenceEvent): Promise<void>;
  /**
   * Stores a payload once, under its SHA-256.
   * @returns The SHA-256.
   */
  putPayload(bytes: Uint8Array): Promise<string>;
  /**
   * Writes the manifest and makes the run folder durable. After the seal the writer takes nothing more.
   * @returns The manifest written.
   */
  seal(info?: SealInfo): Promise<Manifest>;
}

/** A run read back from a store, as the checks read it. */
export interface RunRecord {
  /** The run's ID. */
  readonly runId: string;
  /** The run folder, when the run has one on this machine. */
  readonly folder: string | null;
  /** The text of `events.jsonl`, or null when it is missing. */
  eventsText(): Promise<string | null>;
  /** The text of `manifest.json`, or null when it is missing. */
  manifestText(): Promise<string | null>;
  /** The names of the files in `payloads/`. */
  payloadNames(): Promise<string[]>;
  /** The SHA-256 and size of the stored bytes of a payload, or null when it is missing. */
  payloadInfo(sha256: string): Promise<PayloadEntry | null>;
  /**
   * The bytes of a payload, with their hash checked.
   * @throws ProveviError when the payload is missing or its bytes do not match its name.
   */
  payload(sha256: string): Promise<Uint8Array>;
}

/** A store of run evidence, chosen by a store URI. */
export interface EvidenceStore extends AsyncDisposable {
  /** The store URI, such as `file` or `sqlite:////abs/evidence.db`. */
  readonly uri: string;
  /** The runs root, where run folders are made. */
  readonly runsRoot: string;
  /**
   * Opens a run to write.
   * @param runId The run's ID; it names the run folder under the runs root unless `folder` is given.
   * @throws ProveviError when the run exists already.
   */
  openRun(runId: string, options?: { folder?: string }): Promise<RunWriter>;
  /**
   * Reads a run back.
   * @throws RunNotFound when the store has no such run.
   */
  readRun(runId: string): Promise<RunRecord>;
  /** The IDs of the store's runs, oldest first. */
  runIds(): Promise<string[]>;
  /** Closes the store. */
  close(): Promise<void>;
  /**
   * Keeps spans of a run that this store opened, as an index beside the evidence (`<run folder>/spans.jsonl`
   * in the file and sqlite stores): never part of the record, so no check covers them. Optional: a store
   * without it keeps no spans. `StoreSpanExporter` calls it.
   */
  addSpans?(runId: string, spans: readonly StoredSpan[]): Promise<void>;
}

const RUN_ID = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

/**
 * Refuses a run ID that cannot name a folder safely.
 * @throws TypeError for an empty ID, a path, or one with characters other than letters, digits, `_`, `.`, `-`:
 * a program that opens a run chooses its ID.
 */
export function checkRunId(runId: string): void {
  if (!RUN_ID.test(runId) || runId.length > 200) {
    throw new TypeError(
      `"${runId}" is not a run ID: use letters, digits, _, . and -, not starting with . or -`,
    );
  }
}

/**
 * Refuses a run ID to read that cannot name a run: no store holds one by that name. A user typed it, so it is
 * a {@linkcode RunNotFound} (`prove` exits 1 with one line), not a programmer's `TypeError`.
 *
 * @param runId What the user gave as a run ID.
 * @throws RunNotFound when it is not a run ID.
 * @example
 * ```ts
 * import { checkRunIdToRead } from "./store.ts";
 * checkRunIdToRead("run-20261129T120000Z-0badc0de");
 * ```
 */
export function checkRunIdToRead(runId: string): void {
  try {
    checkRunId(runId);
  } catch (error) {
    throw new RunNotFound(
      `no run ${
        JSON.stringify(runId)
      }: a run ID has only letters, digits, _, . and -, and does not start with . or -; to name a run folder, give its path`,
      { cause: error },
    );
  }
}

/**
 * A run's evidence as the checks read it ({@linkcode RunRecord}), whatever store holds it, and the rules for a
 * run ID.
 * @module
 */
import { RunNotFound } from "./errors.ts";
import type { PayloadEntry } from "./manifest.ts";

/** A run read back from a store, as the checks read it. */
export interface RunRecord {
  /** The run's ID. */
  readonly runId: string;
  /** The run folder, when the run has one on this machine. */
  readonly folder: string | null;
  /**
   * True when {@linkcode eventsText} and {@linkcode manifestText} read the files of `folder` (a record whose
   * texts come from elsewhere, such as a store's rows, leaves it unset): a check of `folder` may then take the
   * texts read through the record instead of reading the files again.
   */
  readonly readsFolder?: boolean;
  /** The text of `events.jsonl`, or null when it is missing. */
  eventsText(): Promise<string | null>;
  /** The text of `manifest.json`, or null when it is missing. */
  manifestText(): Promise<string | null>;
  /** The names of the files in `payloads/`. */
  payloadNames(): Promise<string[]>;
  /** The SHA-256 and size of the stored bytes of a payload file of `payloads/`, or null when it is missing. */
  payloadInfo(sha256: string): Promise<PayloadEntry | null>;
  /**
   * The bytes of `payloads.pack` (a run of manifest format 2 may keep its small payloads there), or null when
   * the run has none.
   * @throws ProveviError when it is a link or not a plain file.
   */
  payloadPack(): Promise<Uint8Array | null>;
  /**
   * The bytes of a payload, from its file or the pack, with their hash checked.
   * @param sha256 Its SHA-256.
   * @param most When given, a payload of more bytes is refused before it is read (a record may read it first).
   * @throws ProveviError when the payload is missing, past `most`, or its bytes do not match its name.
   */
  payload(sha256: string, most?: number): Promise<Uint8Array>;
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
 * import { checkRunIdToRead } from "./record.ts";
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

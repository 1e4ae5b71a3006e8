/**
 * A run of the file store read from its folder: its events, manifest and payloads, each read as a reader may
 * trust it (no link, no file that is not plain, no file bigger than a reader takes whole, text that is UTF-8, a
 * payload that hashes to its name). The writer is `file_run_writer.ts`'s.
 * @module
 */
import { join } from "node:path";
import { ProveviError } from "../evidence/errors.ts";
import { sha256File, sha256Hex } from "../evidence/hash.ts";
import type { PayloadEntry } from "../evidence/manifest.ts";
import {
  EVIDENCE_TEXT_MAX_BYTES,
  PACK_FILE,
  PACK_MAX_BYTES,
  PAYLOAD_READ_MAX_BYTES,
} from "../evidence/payload_pack.ts";
import { readCapped, readCappedSync, refuseNonFile } from "../evidence/open_file.ts";
import { readLinesCapped } from "../evidence/events_file.ts";
import { EVENT_LINE_MAX_BYTES } from "../evidence/json_depth.ts";
import { ATTESTATION_FILE } from "../evidence/attestation.ts";
import type { RunRecord } from "../evidence/record.ts";
import { PackReader } from "./pack_file.ts";

/** The paths of a run folder's evidence. */
export function evidencePaths(folder: string): {
  evidence: string;
  events: string;
  payloads: string;
  pack: string;
  manifest: string;
  manifestTmp: string;
  attestation: string;
} {
  const evidence = join(folder, "evidence");
  return {
    evidence,
    events: join(evidence, "events.jsonl"),
    payloads: join(evidence, "payloads"),
    pack: join(evidence, PACK_FILE),
    manifest: join(evidence, "manifest.json"),
    // The seal's manifest before it takes its name: beside evidence/, not in it, so a writer killed mid-seal
    // leaves evidence/ holding only the format's files (docs/evidence-format.md, "The run folder").
    manifestTmp: join(folder, ".manifest.json.tmp"),
    attestation: join(evidence, ATTESTATION_FILE),
  };
}

/** A run read from its folder. */
export class FileRunRecord implements RunRecord {
  /** Its texts are the folder's files. */
  readonly readsFolder = true;
  readonly #paths: ReturnType<typeof evidencePaths>;
  readonly #pack: PackReader;

  /** @param runId The run's ID. @param folder The run folder. */
  constructor(readonly runId: string, readonly folder: string) {
    this.#paths = evidencePaths(folder);
    this.#pack = new PackReader(this.#paths.pack, () => {
      refuseLinkedFolder(this.#paths.evidence);
      refuseNonFile(this.#paths.pack, PACK_MAX_BYTES);
    });
  }

  /** The text of `events.jsonl`. */
  async eventsText(): Promise<string | null> {
    refuseLinkedFolder(this.#paths.evidence);
    return await readEventsFileText(this.#paths.events);
  }

  /** The text of `manifest.json`. */
  manifestText(): Promise<string | null> {
    try {
      refuseLinkedFolder(this.#paths.evidence);
      // The manifest is small: read at once, not on a file thread.
      return Promise.resolve(readEvidenceTextSync(this.#paths.manifest));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * The file names in `payloads/`, listed synchronously: most runs keep their payloads in the pack and have few
   * files or none here, and each entry of an asynchronous listing waits for a file thread (on a busy machine, the
   * most of a run's verification in provtrace build).
   */
  payloadNames(): Promise<string[]> {
    const names: string[] = [];
    try {
      refuseLinkedFolder(this.#paths.evidence);
      refuseLinkedFolder(this.#paths.payloads);
      try {
        for (const entry of Deno.readDirSync(this.#paths.payloads)) names.push(entry.name);
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      }
    } catch (error) {
      return Promise.reject(error);
    }
    return Promise.resolve(names.sort());
  }

  /** Hashes a stored payload's bytes. */
  async payloadInfo(sha256: string): Promise<PayloadEntry | null> {
    try {
      const path = join(this.#paths.payloads, sha256);
      refuseNonFile(path); // for its message; the open below refuses a link or a pipe swapped in after it
      return await sha256File(path, { follow: false });
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return null;
      throw error;
    }
  }

  /** The bytes of `payloads.pack`, or null when the run has none. */
  async payloadPack(): Promise<Uint8Array | null> {
    refuseLinkedFolder(this.#paths.evidence);
    try {
      return await readCapped(this.#paths.pack, PACK_MAX_BYTES);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return null;
      throw error;
    }
  }

  /**
   * Reads a payload, from its file or else from the pack, and checks its hash: the one way every reader
   * (verify, export, bundle, the viewer, the MLflow copy, provtrace) gets a payload's bytes.
   */
  async payload(sha256: string, most = PAYLOAD_READ_MAX_BYTES): Promise<Uint8Array> {
    let bytes: Uint8Array | null;
    try {
      bytes = await readCapped(join(this.#paths.payloads, sha256), Math.min(most, PAYLOAD_READ_MAX_BYTES));
    } catch (error) {
      bytes = this.#pack.read(sha256, most);
      // a file refused (a link, a folder, past the cap) says why, where the pack does not hold the payload
      if (bytes === null && error instanceof ProveviError) throw error;
      if (bytes === null) {
        throw new ProveviError(`run "${this.runId}" has no payload ${sha256}`, { cause: error });
      }
    }
    const actual = sha256Hex(bytes);
    if (actual !== sha256) {
      throw new ProveviError(
        `payload ${sha256} of run "${this.runId}" was changed: its bytes hash to ${actual}`,
      );
    }
    return bytes;
  }
}

/**
 * Reads the text of an evidence file, refusing bytes that are not UTF-8. `Deno.readTextFile` would put U+FFFD
 * in place of a bad byte, and the chain would then hash a text that is not the file's bytes: a byte changed
 * that way would verify.
 *
 * @param path The file.
 * @returns Its text, or null when it is missing.
 * @throws ProveviError when the bytes are not UTF-8.
 */
export async function readEvidenceText(path: string): Promise<string | null> {
  let bytes: Uint8Array;
  try {
    bytes = await readCapped(path, EVIDENCE_TEXT_MAX_BYTES);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
  return evidenceText(path, bytes);
}

/** {@linkcode readEvidenceText} with a synchronous read, for a small file. */
function readEvidenceTextSync(path: string): string | null {
  let bytes: Uint8Array;
  try {
    bytes = readCappedSync(path, EVIDENCE_TEXT_MAX_BYTES);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
  return evidenceText(path, bytes);
}

function evidenceText(path: string, bytes: Uint8Array): string {
  try {
    return strictUtf8.decode(bytes);
  } catch (error) {
    throw new ProveviError(`${path} is not valid UTF-8, so its text is not the bytes that were hashed`, {
      cause: error,
    });
  }
}

/**
 * Refuses a folder of the evidence that is a link; nothing there is for the caller to report. The look is
 * synchronous, as `refuseNonFile`'s is: an asynchronous one waits for a file thread, which on a busy machine
 * costs more than the look itself, and a check of thousands of runs makes several for each.
 */
function refuseLinkedFolder(path: string): void {
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(path);
  } catch {
    return;
  }
  if (info.isSymlink) throw new ProveviError(`${path} is a link, not a folder`);
}

/**
 * A decoder that refuses bytes that are not UTF-8; it keeps a byte order mark in the text, so that a line that
 * starts with one is not JSON.
 */
export const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * The text of `events.jsonl`, none of its lines past {@linkcode EVENT_LINE_MAX_BYTES} (refused as it is read):
 * every reader of the file reads it so (the record, the check of a store's rows, the seal's columns of a row).
 *
 * @param path The file.
 * @returns Its text, or null when it is missing.
 * @throws ProveviError for a link, a file not plain, past 512 MiB, with a line past the bound, or not UTF-8.
 */
export async function readEventsFileText(path: string): Promise<string | null> {
  let bytes: Uint8Array;
  try {
    bytes = await readLinesCapped(path, EVIDENCE_TEXT_MAX_BYTES, EVENT_LINE_MAX_BYTES);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
  return evidenceText(path, bytes);
}

/**
 * The file log's record of an append until its commit, `.log/pending.jsonl`, and what the next appender does
 * with what a killed one left: a leaf whose run is sealed is appended, and a run whose seal the log recorded gets
 * its manifest's name.
 * @module
 */
import { dirname, join } from "node:path";
import { sha256Hex } from "../evidence/hash.ts";
import { readCapped } from "../evidence/open_file.ts";
import { EVIDENCE_TEXT_MAX_BYTES } from "../evidence/payload_pack.ts";
import type { AppendPlan } from "./log_storage.ts";
import { leafOfSeal, type RunLeaf, sameLeaf } from "./run_leaf.ts";
import { syncPaths } from "./sync_paths.ts";
import { openLogFileSync } from "./log_file_write.ts";

const decoder = new TextDecoder();

/**
 * Writes the pending file over in place: a line per leaf, with its index and its run folder, then newlines over
 * what is left of the bytes before (an empty line is no leaf), so that the file is never truncated.
 *
 * @param path The pending file.
 * @param plan The append's plan.
 * @param folders The run folder of each leaf, or null.
 * @returns Whether the file was made, and how to blank it after the commit and close it.
 */
export function writePending(
  path: string,
  plan: AppendPlan,
  folders: (string | null)[],
): { made: boolean; blank(): void; close(): void } {
  const text = plan.entries.map((entry, i) =>
    JSON.stringify({ index: plan.first + i, folder: folders[i] ?? null, leaf: decoder.decode(entry) }) +
    "\n"
  ).join("");
  // what is no plain file of its own (a link, a FIFO, a folder, a hard link) is moved aside and the file made anew
  const { file, made } = openLogFileSync(path);
  try {
    const bytes = new TextEncoder().encode(text);
    let before = file.statSync().size;
    if (before > EVIDENCE_TEXT_MAX_BYTES) {
      file.truncateSync(0); // one past what a reader takes (a sparse gigabyte) is no pending file: cut, not padded
      before = 0;
    }
    writeAllAt(file, bytes.length >= before ? bytes : padded(bytes, before));
  } catch (error) {
    file.close();
    throw error;
  }
  const blank = () => {
    try {
      writeAllAt(file, new Uint8Array(file.statSync().size).fill(0x0a));
    } catch { /* the next appender drops the committed leaves */ }
  };
  return { made, blank, close: () => file.close() };
}

/**
 * True when the run folder is sealed and its seal makes the leaf: the same manifest, last hash and attestation.
 * A leaf left for the next appender (in the pending file, or an entry bundle past the size) is appended only
 * then, so that a leaf forged there with a sealed run's manifest hash puts nothing false in the log.
 */
export async function sealedAs(folder: string, leaf: RunLeaf): Promise<boolean> {
  let text: string | null;
  try {
    text = await readTextOrNull(join(folder, "evidence", "manifest.json"));
  } catch {
    return false; // a link, a pipe, a folder or a file past the cap: no seal of this toolkit
  }
  if (text === null || sha256Hex(text) !== leaf.manifest_sha256) return false;
  let attestation: Uint8Array | null = null;
  try {
    attestation = await readCapped(
      join(folder, "evidence", "attestation.dsse.json"),
      EVIDENCE_TEXT_MAX_BYTES,
    );
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) return false;
  }
  try {
    return sameLeaf(leafOfSeal(text, attestation), leaf);
  } catch {
    return false;
  }
}

/** Gives a run's `.manifest.json.tmp` its name when the log recorded its seal and the bytes are the ones recorded. */
export async function completeManifest(folder: string, leaf: RunLeaf): Promise<void> {
  // The names FileStore's evidencePaths gives them (the store imports the log, not the other way).
  const manifest = join(folder, "evidence", "manifest.json");
  const tmp = join(folder, ".manifest.json.tmp");
  let text: string | null;
  try {
    if (await readTextOrNull(manifest) !== null) return;
    text = await readTextOrNull(tmp);
  } catch {
    return; // a manifest or its copy aside that is not a plain file of a reader's size is not for us to name
  }
  if (text !== null && sha256Hex(text) === leaf.manifest_sha256) {
    await Deno.rename(tmp, manifest);
    await syncPaths([], [dirname(manifest)]);
  }
}

/** Writes all the bytes at the start of the file. */
function writeAllAt(file: Deno.FsFile, bytes: Uint8Array): void {
  file.seekSync(0, Deno.SeekMode.Start);
  for (let at = 0; at < bytes.length;) at += file.writeSync(bytes.subarray(at));
}

/** The bytes, then newlines up to `length`. */
function padded(bytes: Uint8Array, length: number): Uint8Array {
  const out = new Uint8Array(length).fill(0x0a);
  out.set(bytes);
  return out;
}

/** A file's text, or null when it is missing; a link, a pipe or a file past the cap refused (ProveviError). */
async function readTextOrNull(path: string): Promise<string | null> {
  try {
    return decoder.decode(await readCapped(path, EVIDENCE_TEXT_MAX_BYTES));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

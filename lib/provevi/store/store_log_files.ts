/**
 * What an indexed store's log reads from and writes to a run folder: the leaf of a sealed folder (its manifest
 * and attestation), and the run's proof, `log.tlog-proof`, written after the append's commit.
 * @module
 */
import { replaceFile } from "../evidence/replace_file.ts";
import { EVIDENCE_TEXT_MAX_BYTES } from "../evidence/payload_pack.ts";
import { readCapped } from "../evidence/open_file.ts";
import { join } from "node:path";
import { sha256Hex } from "../evidence/hash.ts";
import type { RowsAppend } from "../log/rows_log.ts";
import { leafOfSeal, type RunLeaf } from "../log/run_leaf.ts";
import { PROOF_FILE } from "../log/tlog_proof.ts";
import { evidencePaths } from "./file_store.ts";

/**
 * The leaf of a sealed run folder, read from its manifest and attestation.
 *
 * @param folder The run folder.
 * @param manifestSha256 The SHA-256 of the manifest that the store is about to record.
 * @returns The leaf, or null when the manifest is not that one (or cannot be read).
 */
export async function logLeafOfFolder(folder: string, manifestSha256: string): Promise<RunLeaf | null> {
  const paths = evidencePaths(folder);
  try {
    const text = new TextDecoder().decode(await readCapped(paths.manifest, EVIDENCE_TEXT_MAX_BYTES));
    if (sha256Hex(text) !== manifestSha256) return null;
    const attestation = await readCapped(paths.attestation, EVIDENCE_TEXT_MAX_BYTES).catch((error) => {
      if (error instanceof Deno.errors.NotFound) return null;
      throw error;
    });
    return leafOfSeal(text, attestation);
  } catch {
    return null;
  }
}

/**
 * Writes a run's `log.tlog-proof` after its append was committed: against the checkpoint of that append, signed
 * by the log only (`prove log wait` writes it again under a witnessed one). A run that was in the log already,
 * or a folder that takes no file, is left as it is: `prove log proof RUN --write` makes the file from the log.
 *
 * @param folder The run folder.
 * @param append The committed append of the run's leaf.
 */
export async function writeProofFile(folder: string, append: RowsAppend): Promise<void> {
  if (append.entries.length === 0) return;
  try {
    await replaceFile(join(folder, PROOF_FILE), append.proofOf(append.result.indexes[0]!));
  } catch { /* prove log proof RUN --write makes it again */ }
}

/**
 * Signing as a part of the run: the key is read before the run starts, so that a key file that cannot be read
 * fails the command and makes no run; the core signs the seal with it (an in-toto statement in a DSSE envelope,
 * fsynced with the manifest) and records its ID in `run_created`.
 * @module
 */
import { resolve } from "node:path";
import { readSigningKey, type SigningKey } from "../../provevi/evidence/mod.ts";
import type { RunFile } from "../run/run_file.ts";
import type { RunPart } from "../run/run_part.ts";

/**
 * The signing part: the key of `signKey`, else of the run file's `run.sign_key` (relative to the run file);
 * none when neither names one.
 *
 * @param file The run file.
 * @param signKey The private key file given in place of the run file's.
 * @throws ProveviError when the key file cannot be read, is not such a key, or others than its owner may read it.
 */
export async function signingPart(file: RunFile, signKey?: string): Promise<RunPart> {
  const sign = file.data.run.sign_key;
  const path = signKey ?? (sign ? resolve(file.folder, sign) : undefined);
  const key: SigningKey | null = path === undefined ? null : await readSigningKey(path);
  return { name: "signing", ...(key ? { signingKey: key } : {}) };
}

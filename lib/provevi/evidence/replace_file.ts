/**
 * Writing a file into a folder that someone else may have filled: a run folder copied from a bundle, a store
 * another user shares. `Deno.writeTextFile` follows a link at its path, so a `log.tlog-proof` or
 * `attestation.dsse.json` put there as a link to `~/.bashrc` had the proof or the signature written over the
 * file it names. A file written here goes to a new name of its own (refused if anything is there) and is renamed
 * over the path: a link at the path is replaced, never followed.
 * @module
 */
import { basename, dirname, join } from "node:path";

const encoder = new TextEncoder();

function scratchOf(path: string, scratch: string | undefined): string {
  return join(scratch ?? dirname(path), `.${basename(path)}.${crypto.randomUUID()}.tmp`);
}

/**
 * Renames the new file over the path; a folder there (which a rename cannot replace, and which stopped every
 * write of the file: a run's proof, its signature) is first moved aside, whole, into the scratch folder, as
 * `.<name>.moved-<uuid>`.
 */
function renameOver(tmp: string, path: string, scratch: string | undefined): void {
  try {
    Deno.renameSync(tmp, path);
  } catch (error) {
    let folder = false;
    try {
      folder = Deno.lstatSync(path).isDirectory;
    } catch { /* nothing there: the rename's own error */ }
    if (!folder) throw error;
    Deno.renameSync(path, join(scratch ?? dirname(path), `.${basename(path)}.moved-${crypto.randomUUID()}`));
    Deno.renameSync(tmp, path);
  }
}

/**
 * Writes `data` as the file at `path`, replacing what is there (a link included) and following no link.
 *
 * @param path The file.
 * @param data Its text or bytes.
 * @param options `scratch`: the folder, on the same file system, that holds the new file until its rename (the
 *   path's own folder by default; `evidence/` takes no file it does not name, so its writers give the run folder).
 * @example
 * ```ts
 * import { replaceFile } from "./replace_file.ts";
 * const folder = await Deno.makeTempDir();
 * await replaceFile(`${folder}/note.txt`, "hello\n");
 * ```
 */
export async function replaceFile(
  path: string,
  data: string | Uint8Array,
  options: { scratch?: string } = {},
): Promise<void> {
  const tmp = scratchOf(path, options.scratch);
  try {
    await Deno.writeFile(tmp, typeof data === "string" ? encoder.encode(data) : data, { createNew: true });
    renameOver(tmp, path, options.scratch);
  } catch (error) {
    await Deno.remove(tmp).catch(() => {});
    throw error;
  }
}

/**
 * {@linkcode replaceFile} with synchronous calls.
 *
 * @param path The file.
 * @param data Its text or bytes.
 * @param options `scratch`: the folder that holds the new file until its rename.
 */
export function replaceFileSync(
  path: string,
  data: string | Uint8Array,
  options: { scratch?: string } = {},
): void {
  const tmp = scratchOf(path, options.scratch);
  try {
    Deno.writeFileSync(tmp, typeof data === "string" ? encoder.encode(data) : data, { createNew: true });
    renameOver(tmp, path, options.scratch);
  } catch (error) {
    try {
      Deno.removeSync(tmp);
    } catch { /* never made */ }
    throw error;
  }
}

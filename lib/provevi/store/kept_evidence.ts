/**
 * The check, after a writer's seal, that the store kept the run folder's evidence: provevi-reference.txt, "Write
 * a run through a store": a store that keeps no `events.jsonl` and `manifest.json` fails the run when it
 * closes, in both modes, because no check could verify the run without them.
 * @module
 */
import { parseWeighed } from "../evidence/json_depth.ts";
import { readCapped } from "../evidence/open_file.ts";
import { join } from "node:path";
import { type Manifest, MANIFEST_FORMAT_PACKED } from "../evidence/manifest.ts";
import { EVIDENCE_TEXT_MAX_BYTES, packedPayloads } from "../evidence/payload_pack.ts";
import { evidencePaths } from "./file_store.ts";

/**
 * What the run folder lacks of what a seal must leave there, or null when it holds it: `evidence/events.jsonl`
 * (a plain file, empty only for a run of no events) and `evidence/manifest.json` (a plain file whose run, count
 * of events and last hash are the seal's), and for each payload the manifest lists, a file of `payloads/` or (format
 * 2) a record of `payloads.pack`.
 * It reads the folder's files, never the store's own copy: the folder is what a bundle commits and a check
 * reads.
 *
 * @param folder The run folder the writer names.
 * @param manifest The manifest the writer's seal returned.
 * @returns One line naming what is missing or wrong, or null.
 * @example
 * ```ts
 * import { FileStore, keptEvidenceProblem } from "../mod.ts";
 * await using store = new FileStore({ runs: await Deno.makeTempDir() });
 * const writer = await store.openRun("run-x");
 * const manifest = await writer.seal();
 * await keptEvidenceProblem(writer.folder, manifest); // null
 * ```
 */
export async function keptEvidenceProblem(folder: string, manifest: Manifest): Promise<string | null> {
  const paths = evidencePaths(folder);
  const events = await plainFile(paths.events);
  if (typeof events === "string") return `${paths.events} ${events}`;
  if ((events.size === 0) !== (manifest.events === 0)) {
    return `${paths.events} holds ${events.size} bytes, but the seal counts ${manifest.events} events`;
  }
  const kept = await plainFile(paths.manifest);
  if (typeof kept === "string") return `${paths.manifest} ${kept}`;
  let written: Partial<Manifest> | null = null;
  try {
    written = parseWeighed(
      new TextDecoder().decode(await readCapped(paths.manifest, EVIDENCE_TEXT_MAX_BYTES)),
    ) as Partial<Manifest>;
  } catch { /* below */ }
  if (written === null || typeof written !== "object") return `${paths.manifest} is not JSON`;
  for (const key of ["run_id", "events", "last_hash"] as const) {
    if (written[key] !== manifest[key]) {
      return `${paths.manifest} says ${key} ${JSON.stringify(written[key])}, but the seal made ${
        JSON.stringify(manifest[key])
      }`;
    }
  }
  const packed = manifest.format === MANIFEST_FORMAT_PACKED ? await packedPayloads(folder) : new Map();
  for (const p of manifest.payloads) {
    if (packed.get(p.sha256) === p.size) continue;
    const file = await plainFile(join(paths.payloads, p.sha256));
    if (typeof file === "string") {
      return `payload ${p.sha256} of the manifest ${file} in ${paths.payloads}${
        manifest.format === MANIFEST_FORMAT_PACKED ? ` and has no record in ${paths.pack}` : ""
      }`;
    }
  }
  return null;
}

/** The file's information, or why it is not a plain file. */
async function plainFile(path: string): Promise<Deno.FileInfo | string> {
  try {
    const info = await Deno.lstat(path);
    if (info.isSymlink) return "is a link, not the file itself";
    return info.isFile ? info : "is not a plain file";
  } catch (error) {
    return error instanceof Deno.errors.NotFound
      ? "is missing"
      : `cannot be read: ${(error as Error).message}`;
  }
}

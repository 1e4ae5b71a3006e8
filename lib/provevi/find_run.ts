/**
 * Finds a run from what a user typed: a run ID under the runs root, or the path of a run folder.
 * @module
 */
import { basename, resolve } from "node:path";
import { RunNotFound } from "./errors.ts";
import { FileRunRecord } from "./file_store.ts";
import { FileStore } from "./file_store.ts";
import type { EvidenceStore, RunRecord } from "./store.ts";

/**
 * Finds a run. A text with a `/`, or `.`/`..`, is a run folder's path; anything else is a run ID, looked up in
 * `store` (by default a file store under the runs root). A run ID that names a link under the runs root is
 * refused, so a link cannot pass off one run as another.
 *
 * @param ref A run ID or a run folder's path.
 * @param options `store` to look in; `runs` for the runs root of the default file store.
 * @returns The run's record.
 * @throws RunNotFound when there is no such run.
 * @example
 * ```ts
 * import { findRun } from "./find_run.ts";
 * const record = await findRun("fixtures/runs/run-20261031T182026Z-f9c3b25f");
 * ```
 */
export async function findRun(
  ref: string,
  options: { store?: EvidenceStore; runs?: string } = {},
): Promise<RunRecord> {
  if (ref.includes("/") || ref === "." || ref === "..") {
    const folder = resolve(ref);
    try {
      const info = await Deno.stat(folder);
      if (!info.isDirectory) throw new RunNotFound(`${ref} is not a run folder`);
      await Deno.stat(`${folder}/evidence`);
    } catch (error) {
      if (error instanceof RunNotFound) throw error;
      throw new RunNotFound(`${ref} is not a run folder: it has no evidence/ folder`, { cause: error });
    }
    return new FileRunRecord(await runIdOfFolder(folder), folder);
  }
  const store = options.store ?? new FileStore(options.runs === undefined ? {} : { runs: options.runs });
  return await store.readRun(ref);
}

/** The run ID a folder's first event names, or else the folder's name. */
async function runIdOfFolder(folder: string): Promise<string> {
  try {
    using file = await Deno.open(`${folder}/evidence/events.jsonl`);
    const buffer = new Uint8Array(4096);
    const n = await file.read(buffer);
    if (n) {
      const text = new TextDecoder().decode(buffer.subarray(0, n));
      const match = /"run_id":"([^"\\]{1,200})"/.exec(text.split("\n")[0] ?? "");
      if (match) return match[1]!;
    }
  } catch { /* the checks report a missing or unreadable file */ }
  return basename(folder);
}

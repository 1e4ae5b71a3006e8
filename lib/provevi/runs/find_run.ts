/**
 * Finds a run from what a user typed: a run ID under the runs root, or the path of a run folder.
 * @module
 */
import { basename, resolve } from "node:path";
import { RunNotFound } from "../evidence/errors.ts";
import { FileRunRecord } from "../store/file_store.ts";
import { FileStore } from "../store/file_store.ts";
import type { RunRecord } from "../evidence/record.ts";
import type { EvidenceStore } from "../store/store.ts";
import { firstLine } from "./_run_lines.ts";
import { resolveRunRef } from "./resolve_run_ref.ts";

/**
 * Finds a run. A text with a `/`, or `.`/`..`, is a run folder's path; anything else is a run ID, `latest`, or
 * the start of one run's ID ({@linkcode resolveRunRef}), looked up in `store` (by default a file store under
 * the runs root). A run ID that names a link under the runs root is
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
  if (ref === "latest") return await store.readRun(await resolveRunRef(store, ref));
  try {
    return await store.readRun(ref);
  } catch (error) {
    // Not a whole run ID: the start of one, if exactly one run has it.
    if (!(error instanceof RunNotFound)) throw error;
    const id = await resolveRunRef(store, ref);
    if (id === ref) throw error;
    return await store.readRun(id);
  }
}

/** The run ID a folder's first event names, or else the folder's name. */
async function runIdOfFolder(folder: string): Promise<string> {
  try {
    const first = await firstLine(`${folder}/evidence/events.jsonl`);
    // Parsed, not matched: the canonical line sorts "data" before "run_id", so a "run_id" key inside the
    // data (an agent's spec may hold one) came first and named another run.
    const event = first === null ? null : JSON.parse(first);
    if (typeof event?.run_id === "string" && event.run_id !== "") return event.run_id;
  } catch { /* the checks report a missing or unreadable file, or a first line that is not an event */ }
  return basename(folder);
}

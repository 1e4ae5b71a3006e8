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
import { resolveRunRef } from "./resolve_run_ref.ts";

/**
 * Finds a run. A text with a `/`, or `.`/`..`, is a run folder's path, and the run's ID is the folder's name;
 * anything else is a run ID, `latest`, or the start of one run's ID ({@linkcode resolveRunRef}), looked up in
 * `store` (by default a file store under the runs root). A run ID that names a link under the runs root is
 * refused, so a link cannot pass off one run as another.
 *
 * @param ref A run ID or a run folder's path.
 * @param options `store` to look in; `runs` for the runs root of the default file store.
 * @returns The run's record.
 * @throws RunNotFound when there is no such run.
 * @example
 * ```ts
 * import { findRun } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const record = await findRun("run-20261129T120000Z-0badc0de", { runs: "fixtures/runs" });
 * assert.equal(record.runId, "run-20261129T120000Z-0badc0de");
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
    // The run's ID is its folder's name, as under the runs root: events that name another run do not verify.
    return new FileRunRecord(basename(folder), folder);
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

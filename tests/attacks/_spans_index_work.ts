/**
 * The work of spans_index_attacks_test.ts that is measured in a process of its own (`measuredInChild`): the
 * readers of a run's span index, `spans.jsonl` (`prove show`'s span tree, the store's `trace`).
 * @module
 */
import { readSpansFile } from "../../lib/provevi/evidence/spans_file.ts";
import { FileStore } from "../../lib/provevi/store/file_store.ts";

/** Measured: the spans the index of the run in `folder` gives. */
export async function index(folder: string) {
  return (await readSpansFile(folder)).length;
}

/** Measured: the spans of a trace the file store under `runs` finds (it looks through every run's index). */
export async function trace(runs: string, traceId: string) {
  await using store = new FileStore({ runs });
  return (await store.trace(traceId)).length;
}

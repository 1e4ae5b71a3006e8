/** Helpers of the tests of the indexed stores' logs: checks that a store's log is whole and one history. */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { EvidenceStore } from "../../../lib/provevi/store/store.ts";
import { auditStoreLog } from "../../../lib/provevi/runs/store_log.ts";
import { verifyConsistency } from "../../../lib/provevi/log/merkle.ts";
import { checkRunInLog, readRunLogFiles } from "../../../lib/provevi/log/run_in_log.ts";
import { proveConsistency } from "../../../lib/provevi/log/log_proofs.ts";
import type { RowsLog } from "../../../lib/provevi/log/rows_log.ts";
import { parseCheckpoint } from "../../../lib/provevi/log/checkpoint.ts";
import { parseNote } from "../../../lib/provevi/log/note.ts";

/**
 * Checks that a store's log holds each of `runIds` once and nothing else, that every checkpoint it ever signed
 * is a prefix of the latest (no fork), that the audit finds nothing, and that each run's proof file verifies.
 *
 * @param store The store.
 * @param runIds The runs that must be in the log.
 * @param options `proofs`: how many runs' proof files to check (all by default).
 */
export async function assertWholeLog(
  store: EvidenceStore & { log: RowsLog },
  runIds: readonly string[],
  options: { proofs?: number } = {},
): Promise<void> {
  const log = store.log;
  const latest = parseCheckpoint(parseNote((await log.checkpoint())!).text);
  assert.equal(latest.size, runIds.length, "one leaf per sealed run");
  const indexes = new Set<number>();
  for (const id of runIds) {
    const index = await log.indexOf(id);
    assert.notEqual(index, null, `run ${id} is in the log`);
    indexes.add(index!);
  }
  assert.equal(indexes.size, runIds.length, "no two runs share a leaf");
  const notes = await log.checkpoints();
  for (const note of notes) {
    const c = parseCheckpoint(parseNote(note).text);
    const { proof, oldRoot, newRoot } = await proveConsistency(log, c.size, latest.size);
    assert.deepEqual(oldRoot, c.root, `the checkpoint of size ${c.size} is the tree's root at that size`);
    assert.ok(verifyConsistency(c.size, latest.size, proof, c.root, newRoot));
  }
  const audit = await auditStoreLog(store, { verify: false });
  assert.deepEqual(audit.problems.map((p) => p.message), []);
  const key = (await log.key())!;
  for (const id of runIds.slice(0, options.proofs ?? runIds.length)) {
    const folder = join(store.runsRoot, id);
    const files = await readRunLogFiles(folder);
    const manifestText = await Deno.readTextFile(join(folder, "evidence", "manifest.json"));
    const checked = checkRunInLog({ runId: id, manifestText, ...files }, {
      logs: [key.verifier],
      witnesses: [],
      quorum: 0,
    });
    assert.deepEqual(checked.problems.map((p) => p.message), [], id);
  }
}

import assert from "node:assert/strict";
import {
  checkCheckpoint,
  leafBytes,
  leafHash,
  parseCheckpoint,
  parseNote,
  proveConsistency,
  proveRun,
  verifyConsistency,
  verifyInclusion,
} from "../../../lib/provevi/log/mod.ts";
import { fakeLeaf, tempLog } from "./_log_fixtures.ts";

Deno.test("a file log appends leaves one by one and in batches, and proves each against a signed checkpoint", async () => {
  const { log } = await tempLog();
  const leaves = Array.from({ length: 600 }, (_, i) => fakeLeaf(i));
  const r1 = await log.append(leaves.slice(0, 1));
  assert.deepEqual(r1.indexes, [0]);
  await log.append(leaves.slice(1, 300));
  for (const l of leaves.slice(300, 305)) await log.append([l]);
  const last = await log.append(leaves.slice(305));
  assert.equal(last.size, 600);
  const key = (await log.key())!;
  const checked = checkCheckpoint(last.checkpoint, { logs: [key.verifier], witnesses: [], quorum: 0 });
  assert.ok(checked.ok);
  const { root, size } = parseCheckpoint(parseNote(last.checkpoint).text);
  for (const i of [0, 1, 255, 256, 299, 303, 599]) {
    const proof = await proveRun(log, leaves[i]!.run_id);
    assert.equal(proof.index, i);
    assert.ok(verifyInclusion(leafHash(leafBytes(leaves[i]!)), i, size, proof.proof, root));
  }
  const c = await proveConsistency(log, 300, 600);
  assert.ok(verifyConsistency(300, 600, c.proof, c.oldRoot, root));
  assert.equal(await log.indexOf("run-none"), null);
});

Deno.test("a leaf already in the log is found by its run, and a pending leaf of a killed appender is appended by the next one", async () => {
  const { log } = await tempLog();
  await log.append([fakeLeaf(0)]);
  // An appender killed after writing its pending file and tiles, before its commit: the run was not sealed, so
  // nothing is appended for it, and the log goes on from its committed size.
  const prepared = await log.prepare([fakeLeaf(1)], null);
  prepared.abort();
  const next = await log.append([fakeLeaf(2)]);
  assert.deepEqual(next.indexes, [1]);
  assert.equal(await log.indexOf(fakeLeaf(2).run_id), 1);
  assert.equal(await log.indexOf(fakeLeaf(1).run_id), null);
});

import assert from "node:assert/strict";
import { EMPTY_ROOT, inclusionProof, leafHash, nodeHash } from "../../../lib/provevi/log/merkle.ts";
import {
  extendRange,
  lastLeafProof,
  rangeOfEdge,
  rangeRoot,
} from "../../../lib/provevi/log/compact_range.ts";
import { appendToEdge, type TreeEdge } from "../../../lib/provevi/log/tree_edge.ts";
import { type AppendPlan, planAppend } from "../../../lib/provevi/log/log_storage.ts";
import { logKeyOf, newKeyFile } from "../../../lib/provevi/log/log_key.ts";
import { leafBytes, type RunLeaf } from "../../../lib/provevi/log/run_leaf.ts";
import { parseTlogProof } from "../../../lib/provevi/log/tlog_proof.ts";
import { parseCheckpoint } from "../../../lib/provevi/log/checkpoint.ts";
import { parseNote } from "../../../lib/provevi/log/note.ts";

/** RFC 9162's MTH, written from its definition, over leaf hashes. */
function mth(hashes: Uint8Array[]): Uint8Array {
  if (hashes.length === 0) return EMPTY_ROOT;
  if (hashes.length === 1) return hashes[0]!;
  let k = 1;
  while (k * 2 < hashes.length) k *= 2;
  return nodeHash(mth(hashes.slice(0, k)), mth(hashes.slice(k)));
}

const leaf = (i: number): RunLeaf => ({
  run_id: `run-20261201T000000Z-${i.toString(16).padStart(8, "0")}`,
  manifest_sha256: i.toString(16).padStart(64, "0"),
  last_hash: (i + 1).toString(16).padStart(64, "0"),
  attestation_sha256: null,
});
const hashes = Array.from({ length: 600 }, (_, i) => leafHash(leafBytes(leaf(i))));
const known = new Map<string, Uint8Array>();
const at = (level: number, index: number) => {
  const key = `${level}/${index}`;
  let hash = known.get(key);
  if (!hash) known.set(key, hash = mth(hashes.slice(index * 2 ** level, (index + 1) * 2 ** level)));
  return hash;
};

Deno.test("a compact range extended leaf by leaf has MTH for its root, the last leaf's proof, and the edge's range", () => {
  let range = rangeOfEdge({ size: 0, partial: [] });
  let edge: TreeEdge = { size: 0, partial: [] };
  for (let n = 1; n <= 600; n++) {
    const before = range;
    range = extendRange(range, hashes[n - 1]!);
    edge = appendToEdge(edge, [hashes[n - 1]!]).edge;
    assert.deepEqual(rangeRoot(range), mth(hashes.slice(0, n)), `root of ${n}`);
    assert.deepEqual(lastLeafProof(before), inclusionProof(n - 1, n, at), `proof of leaf ${n - 1}`);
    assert.deepEqual(rangeOfEdge(edge), range, `range of the edge of ${n}`);
  }
});

Deno.test("an append planned with a kept range or with none signs the root of MTH and proves each new leaf", () => {
  const key = logKeyOf(JSON.stringify(newKeyFile()), "file", "test");
  let edge: TreeEdge = { size: 0, partial: [] };
  let kept: AppendPlan["range"] | undefined;
  let partialEntries: Uint8Array[] = [];
  let n = 0;
  for (const [i, batch] of [1, 1, 3, 250, 1, 2, 255, 1, 86].entries()) {
    const leaves = Array.from({ length: batch }, (_, j) => leaf(n + j));
    // Every other append makes the range from the edge, as a writer that kept none does.
    const plan = planAppend({ edge, partialEntries, range: i % 2 ? kept : undefined }, leaves, key);
    n += batch;
    const { root, size } = parseCheckpoint(parseNote(plan.checkpoint).text);
    assert.equal(size, n);
    assert.deepEqual(root, mth(hashes.slice(0, n)), `root of ${n}`);
    for (let index = n - batch; index < n; index++) {
      assert.deepEqual(
        parseTlogProof(plan.proofOf(index)).proof,
        inclusionProof(index, n, at),
        `leaf ${index}`,
      );
    }
    edge = plan.edge;
    kept = plan.range;
    const bundle = plan.bundles.at(-1);
    partialEntries = bundle && bundle.entries.length < 256 ? bundle.entries : [];
  }
  assert.throws(
    () => planAppend({ edge, partialEntries, range: rangeOfEdge({ size: 0, partial: [] }) }, [leaf(n)], key),
    RangeError,
  );
});

import assert from "node:assert/strict";
import {
  consistencyProof,
  EMPTY_ROOT,
  inclusionProof,
  leafHash,
  nodeHash,
  rangeHash,
  treeHash,
  verifyConsistency,
  verifyInclusion,
} from "../../../lib/provevi/log/merkle.ts";
import { appendToEdge, edgeRoot, type TreeEdge } from "../../../lib/provevi/log/tree_edge.ts";
import { TileHashes, tilesRead } from "../../../lib/provevi/log/tiles.ts";

/** RFC 9162's MTH, written from its definition, over leaf hashes. */
function mth(leaves: Uint8Array[]): Uint8Array {
  if (leaves.length === 0) return EMPTY_ROOT;
  if (leaves.length === 1) return leaves[0]!;
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return nodeHash(mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}

const leaves = Array.from({ length: 700 }, (_, i) => leafHash(new TextEncoder().encode(`leaf ${i}`)));
const at = (level: number, index: number) => mth(leaves.slice(index * 2 ** level, (index + 1) * 2 ** level));

Deno.test("treeHash() is RFC 9162's MTH for every size up to 70", () => {
  for (let n = 0; n <= 70; n++) assert.deepEqual(treeHash(n, at), mth(leaves.slice(0, n)));
});

Deno.test("RFC 6962's test vector: the root of the empty tree and of one empty leaf", () => {
  assert.equal(
    Buffer.from(EMPTY_ROOT).toString("hex"),
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
  );
  assert.equal(
    Buffer.from(leafHash(new Uint8Array())).toString("hex"),
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
  );
});

Deno.test("inclusion proofs verify for every leaf of trees up to 40, and fail for another leaf or index", () => {
  for (let n = 1; n <= 40; n++) {
    const root = mth(leaves.slice(0, n));
    for (let m = 0; m < n; m++) {
      const proof = inclusionProof(m, n, at);
      assert.ok(verifyInclusion(leaves[m]!, m, n, proof, root), `${m} in ${n}`);
      assert.ok(!verifyInclusion(leaves[m + 1]!, m, n, proof, root));
      if (n > 1) assert.ok(!verifyInclusion(leaves[m]!, (m + 1) % n, n, proof, root));
    }
  }
});

Deno.test("consistency proofs verify between every pair of sizes up to 40, and fail for a changed root", () => {
  for (let n = 1; n <= 40; n++) {
    for (let m = 0; m <= n; m++) {
      const proof = consistencyProof(m, n, at);
      const [r1, r2] = [mth(leaves.slice(0, m)), mth(leaves.slice(0, n))];
      assert.ok(verifyConsistency(m, n, proof, r1, r2), `${m} to ${n}`);
      if (m > 0 && m < n) assert.ok(!verifyConsistency(m, n, proof, new Uint8Array(32), r2));
    }
  }
});

Deno.test("appending leaf by leaf or in batches gives the same tiles and the root of MTH, and tiles prove", () => {
  let edge: TreeEdge = { size: 0, partial: [] };
  const tiles = new Map<string, Uint8Array>();
  const batches = [1, 2, 3, 250, 1, 5, 300, 138];
  let at0 = 0;
  for (const b of batches) {
    const out = appendToEdge(edge, leaves.slice(at0, at0 + b));
    for (const t of out.tiles) tiles.set(`${t.tile.level}/${t.tile.index}`, t.hashes);
    edge = out.edge;
    at0 += b;
    assert.deepEqual(edgeRoot(edge), mth(leaves.slice(0, at0)), `size ${at0}`);
  }
  assert.equal(edge.size, 700);
  const compute = (h: typeof at) => inclusionProof(300, 700, h);
  const hashes = new TileHashes();
  for (const t of tilesRead(700, compute)) hashes.put(t, tiles.get(`${t.level}/${t.index}`)!);
  assert.deepEqual(compute(hashes.at), inclusionProof(300, 700, at));
  assert.deepEqual(rangeHash(0, 700, hashes.at), mth(leaves));
});

Deno.test("tile hashes that dropped their lowest level keep proving from the upper tiles, and read level 0 again", () => {
  const { tiles: written } = appendToEdge({ size: 0, partial: [] }, leaves);
  const byName = new Map(written.map((t) => [`${t.tile.level}/${t.tile.index}`, t.hashes]));
  const hashes = new TileHashes();
  const fill = (m: number) => {
    for (const t of tilesRead(700, (h) => inclusionProof(m, 700, h))) {
      if (!hashes.has(t)) hashes.put(t, byName.get(`${t.level}/${t.index}`)!);
    }
  };
  fill(10);
  fill(600);
  assert.equal(hashes.count, 3); // level 0's tiles 0 and 2, and level 1's
  hashes.dropBelow(1);
  assert.equal(hashes.count, 1);
  assert.throws(() => inclusionProof(10, 700, hashes.at), RangeError);
  fill(10);
  fill(600);
  assert.deepEqual(inclusionProof(10, 700, hashes.at), inclusionProof(10, 700, at));
  assert.deepEqual(inclusionProof(600, 700, hashes.at), inclusionProof(600, 700, at));
});

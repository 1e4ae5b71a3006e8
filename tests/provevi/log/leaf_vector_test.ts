import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { leafHash } from "../../../lib/provevi/log/merkle.ts";
import { leafBytes, parseLeaf } from "../../../lib/provevi/log/run_leaf.ts";

const DOC = new URL("../../../docs/evidence-format.md", import.meta.url);

Deno.test("the leaf vector of docs/evidence-format.md: its bytes and its hash", async () => {
  const doc = await Deno.readTextFile(DOC);
  const leaf = {
    run_id: "run-20261201T000000Z-00000000",
    manifest_sha256: "0".repeat(63) + "2",
    last_hash: "0".repeat(63) + "1",
    attestation_sha256: null,
  };
  const bytes = leafBytes(leaf);
  assert.ok(doc.includes(new TextDecoder().decode(bytes)));
  const hash = Buffer.from(leafHash(bytes)).toString("hex");
  assert.equal(hash, "27a1858843773143ba18a6a7403ff80c2ed83f3848f86d2a792f837368df0d71");
  assert.ok(doc.includes(hash));
  assert.deepEqual(parseLeaf(bytes), leaf);
  assert.throws(() =>
    parseLeaf(new TextEncoder().encode(JSON.stringify({ ...leaf, format: "provevi-log-leaf/1" })))
  );
});

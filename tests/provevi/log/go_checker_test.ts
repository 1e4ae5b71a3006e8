/**
 * Other people's code checks the log: tlogcheck (tests/provevi/log/tlogcheck, Go) verifies the checkpoints with
 * golang.org/x/mod/sumdb/note and transparency-dev/formats, the tiles and proofs with sumdb/tlog and
 * transparency-dev/merkle, and the witnesses' cosignatures with formats' cosignature/v1 verifier.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Buffer } from "node:buffer";
import { parseCheckpoint } from "../../../lib/provevi/log/checkpoint.ts";
import { proveConsistency, proveRun } from "../../../lib/provevi/log/log_proofs.ts";
import { bundleBytes, type LogStorage } from "../../../lib/provevi/log/log_storage.ts";
import { parseNote } from "../../../lib/provevi/log/note.ts";
import { leafBytes } from "../../../lib/provevi/log/run_leaf.ts";
import { entriesPath, TILE_WIDTH, tilePath } from "../../../lib/provevi/log/tiles.ts";
import { tlogProofText } from "../../../lib/provevi/log/tlog_proof.ts";
import { cosignLatest } from "../../../lib/provevi/log/witness_client.ts";
import { serveWitness } from "../../../lib/provevi/log/witness_server.ts";
import { fakeLeaf, tempLog, witnessOf } from "./_log_fixtures.ts";
import { SqliteStore } from "../../../lib/provevi/sqlite/sqlite_store.ts";
import { peerTest } from "../../_peers.ts";

const CHECKER = Deno.env.get("PROVEVI_TEST_TLOGCHECK");

async function check(...args: string[]): Promise<string> {
  if (!CHECKER) throw new Error("PROVEVI_TEST_TLOGCHECK is unset: .ci/peers/tlogcheck.sh did not run");
  const out = await new Deno.Command(CHECKER, { args, stdout: "piped", stderr: "piped" }).output();
  return new TextDecoder().decode(out.stdout).trim() + new TextDecoder().decode(out.stderr).trim();
}

peerTest("tlogcheck", {
  name:
    "Go's sumdb/note, sumdb/tlog and transparency-dev verify the log's checkpoint, tiles and every leaf's proof",
  fn: async () => {
    const { log } = await tempLog();
    const leaves = Array.from({ length: 700 }, (_, i) => fakeLeaf(i));
    await log.append(leaves.slice(0, 300));
    for (const l of leaves.slice(300, 303)) await log.append([l]);
    await log.append(leaves.slice(303));
    const vkey = (await log.key())!.verifier.vkey;
    assert.equal(await check("log", join(log.dir, "tlog"), vkey), "ok");
  },
});

peerTest("tlogcheck", {
  name:
    "Go verifies a run's tlog-proof with a witness's cosignature/v1, and a consistency proof; it refuses a changed leaf",
  fn: async () => {
    const { log, dir } = await tempLog();
    const witness = await witnessOf(log);
    await using server = serveWitness(witness, { port: 0 });
    await log.append([fakeLeaf(0), fakeLeaf(1), fakeLeaf(2)]);
    const old = (await log.checkpoint())!;
    await log.append([fakeLeaf(3), fakeLeaf(4)]);
    const { replies } = await cosignLatest(log, [server.url]);
    assert.equal(replies[0]!.status, 200);
    const vkey = (await log.key())!.verifier.vkey;
    const proofFile = join(dir, "run.tlog-proof");
    await Deno.writeTextFile(proofFile, tlogProofText(await proveRun(log, fakeLeaf(3).run_id)));
    const leafFile = join(dir, "leaf");
    await Deno.writeFile(leafFile, leafBytes(fakeLeaf(3)));
    assert.equal(await check("proof", proofFile, leafFile, vkey, witness.verifier.vkey), "ok");
    await Deno.writeFile(leafFile, leafBytes({ ...fakeLeaf(3), last_hash: "f".repeat(64) }));
    assert.notEqual(await check("proof", proofFile, leafFile, vkey, witness.verifier.vkey), "ok");
    const [oldFile, newFile, cFile] = ["old", "new", "c"].map((n) => join(dir, n));
    await Deno.writeTextFile(oldFile!, old);
    await Deno.writeTextFile(newFile!, (await log.checkpoint())!);
    const c = await proveConsistency(log, 3, 5);
    await Deno.writeTextFile(cFile!, c.proof.map((h) => Buffer.from(h).toString("base64")).join("\n"));
    assert.equal(await check("consistency", oldFile!, newFile!, vkey, cFile!), "ok");
  },
});

/** Writes a log's tiles, entry bundles and checkpoint at `size` in the layout of C2SP tlog-tiles. */
async function writeTiles(log: LogStorage, dir: string): Promise<void> {
  const note = (await log.checkpoint())!;
  const size = parseCheckpoint(parseNote(note).text).size;
  const put = async (rel: string, bytes: Uint8Array) => {
    await Deno.mkdir(join(dir, rel, ".."), { recursive: true });
    await Deno.writeFile(join(dir, rel), bytes);
  };
  for (let level = 0; TILE_WIDTH ** level <= size; level++) {
    const count = Math.floor(size / TILE_WIDTH ** level);
    for (let index = 0; index * TILE_WIDTH < count; index++) {
      const width = Math.min(TILE_WIDTH, count - index * TILE_WIDTH);
      const [bytes] = await log.readTiles([{ level, index, width }]);
      await put(tilePath({ level, index, width }), bytes!);
      if (level === 0) await put(entriesPath(index, width), bundleBytes(await log.readEntries(index, width)));
    }
  }
  await put("checkpoint", new TextEncoder().encode(note));
}

peerTest("tlogcheck", {
  name: "Go's sumdb/tlog reads a sqlite store's log, its tiles served from its rows, and verifies every leaf",
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "log-rows-go-" });
    await using store = new SqliteStore(join(dir, "e.db"), { runs: join(dir, "runs") });
    const leaves = Array.from({ length: 600 }, (_, i) => fakeLeaf(i));
    await store.log.append(leaves.slice(0, 300));
    for (const l of leaves.slice(300, 303)) await store.log.append([l]);
    await store.log.append(leaves.slice(303));
    await writeTiles(store.log, join(dir, "tlog"));
    assert.equal(await check("log", join(dir, "tlog"), (await store.log.key())!.verifier.vkey), "ok");
  },
});

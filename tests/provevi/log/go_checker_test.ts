/**
 * Other people's code checks the log: tlogcheck (tests/provevi/log/tlogcheck, Go) verifies the checkpoints with
 * golang.org/x/mod/sumdb/note and transparency-dev/formats, the tiles and proofs with sumdb/tlog and
 * transparency-dev/merkle, and the witnesses' cosignatures with formats' cosignature/v1 verifier.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Buffer } from "node:buffer";
import {
  bundleBytes,
  checkCheckpoint,
  cosignLatest,
  ed25519Signer,
  entriesPath,
  leafBytes,
  leafHash,
  type LogStorage,
  parseCheckpoint,
  parseNote,
  parseTlogProof,
  proveConsistency,
  proveRun,
  serveWitness,
  signatureLine,
  signNote,
  TILE_WIDTH,
  tilePath,
  tlogProofText,
  type TrustPolicy,
  verifyInclusion,
} from "../../../lib/provevi/log/mod.ts";
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
    // A second cosignature of the witness that fails, after its good one: both refuse it (signed-note).
    await Deno.writeFile(leafFile, leafBytes(fakeLeaf(3)));
    const good = tlogProofText(await proveRun(log, fakeLeaf(3).run_id));
    const line = good.split("\n").find((l) => l.startsWith(`\u2014 ${witness.verifier.name} `))!;
    const sig = Buffer.from(line.split(" ")[2]!, "base64");
    sig[sig.length - 1]! ^= 1;
    const twice = good.replace(
      `${line}\n`,
      `${line}\n\u2014 ${witness.verifier.name} ${sig.toString("base64")}\n`,
    );
    await Deno.writeTextFile(proofFile, twice);
    assert.notEqual(await check("proof", proofFile, leafFile, vkey, witness.verifier.vkey), "ok");
    const policy = { logs: [(await log.key())!.verifier], witnesses: [witness.verifier], quorum: 1 };
    assert.equal(checkCheckpoint(parseTlogProof(good).checkpoint, policy).ok, true);
    assert.equal(checkCheckpoint(parseTlogProof(twice).checkpoint, policy).ok, false);
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

/** prove's reading of a tlog-proof of `leaf`: readable, its checkpoint trusted, and the leaf included. */
function proveAccepts(text: string, leaf: Uint8Array, policy: TrustPolicy): boolean {
  try {
    const proof = parseTlogProof(text);
    const checked = checkCheckpoint(proof.checkpoint, policy);
    if (!checked.ok) return false;
    const { size, root } = checked.trusted.checkpoint;
    return verifyInclusion(leafHash(leaf), proof.index, size, proof.proof, root);
  } catch {
    return false;
  }
}

peerTest("tlogcheck", {
  name:
    "Go and prove read a tlog-proof alike as C2SP writes it: an extra line is taken; an index or a tree size with a leading zero, or a failed second signature of the log's key, is refused",
  fn: async () => {
    const { log, dir } = await tempLog();
    await log.append([fakeLeaf(0), fakeLeaf(1), fakeLeaf(2)]);
    const key = (await log.key())!;
    const policy = { logs: [key.verifier], witnesses: [], quorum: 0 };
    const good = tlogProofText(await proveRun(log, fakeLeaf(1).run_id));
    const [head, note] = [good.slice(0, good.indexOf("\n\n")), good.slice(good.indexOf("\n\n") + 2)];
    const text = parseNote(note).text;
    const other = ed25519Signer(key.origin, new Uint8Array(32).fill(7)).signer;
    const cases: [string, string, boolean][] = [
      ["as written", good, true],
      ["an extra line", head.replace("\nindex", "\nextra AAEC\nindex") + "\n\n" + note, true],
      ["index 01", head.replace("index 1", "index 01") + "\n\n" + note, false],
      ["tree size 03", `${head}\n\n${signNote(text.replace("\n3\n", "\n03\n"), [key.signer])}`, false],
      [
        "a second signature of the log's name and key ID that fails",
        `${head}\n\n${note}${
          signatureLine(key.origin, key.signer.keyId, other.sign(new TextEncoder().encode(text)))
        }\n`,
        false,
      ],
    ];
    const leafFile = join(dir, "leaf");
    await Deno.writeFile(leafFile, leafBytes(fakeLeaf(1)));
    for (const [what, proof, ok] of cases) {
      const file = join(dir, "case.tlog-proof");
      await Deno.writeTextFile(file, proof);
      assert.equal(proveAccepts(proof, leafBytes(fakeLeaf(1)), policy), ok, `prove: ${what}`);
      const go = await check("proof", file, leafFile, key.verifier.vkey);
      assert.equal(go === "ok", ok, `Go: ${what}: ${go}`);
    }
  },
});

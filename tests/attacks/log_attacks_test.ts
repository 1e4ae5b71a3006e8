/**
 * Attacks on the log of all runs (issue #28): a run removed from the store, a leaf rewritten, a run changed and
 * sealed again, a log rolled back, a split view (two checkpoints of one size with different roots), a checkpoint
 * signed by another key, a proof for another run. Each must be caught and named by `prove verify` (check 10),
 * by a witness, or by the audit; the tally is printed at the end.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import type { TrustPolicy } from "../../lib/provevi/log/trust_policy.ts";
import { witnessVerifier } from "../../lib/provevi/log/trust_policy.ts";
import { findRun } from "../../lib/provevi/runs/find_run.ts";
import { auditStoreLog } from "../../lib/provevi/runs/store_log.ts";
import { verifyRun } from "../../lib/provevi/runs/verify_run.ts";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { parseCheckpoint } from "../../lib/provevi/log/checkpoint.ts";
import { FileLog } from "../../lib/provevi/log/file_log.ts";
import { parseNote } from "../../lib/provevi/log/note.ts";
import { Witness } from "../../lib/provevi/log/witness.ts";
import { cosignLatest } from "../../lib/provevi/log/witness_client.ts";
import { serveWitness } from "../../lib/provevi/log/witness_server.ts";
import { checkpointText } from "../../lib/provevi/log/checkpoint.ts";
import { ed25519Signer, signNote } from "../../lib/provevi/log/note.ts";
import { addCheckpointBody } from "../../lib/provevi/log/witness.ts";
import { bundleBytes } from "../../lib/provevi/log/log_storage.ts";
import { leafBytes, leafOfSeal } from "../../lib/provevi/log/run_leaf.ts";
import { writeRun } from "../provevi/_run.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("log attacks");
const ids = [0, 1, 2].map((i) => `run-20261201T000000Z-0000000${i}`);

async function setup() {
  const dir = await Deno.makeTempDir({ prefix: "log-attack-" });
  const runs = join(dir, "runs");
  for (const id of ids) await writeRun(join(runs, id), id);
  const store = new FileStore({ runs });
  const key = (await store.log.key())!;
  const witness = (name: string) =>
    new Witness({
      name,
      seed: new Uint8Array(randomBytes(32)),
      state: join(dir, name),
      logs: [key.verifier],
    });
  const policy: TrustPolicy = { logs: [key.verifier], witnesses: [], quorum: 0 };
  return { dir, runs, store, key, witness, policy };
}

async function codesOfVerify(folder: string, policy: TrustPolicy): Promise<string[]> {
  return (await verifyRun(await findRun(folder), { log: policy })).problems.map((p) => p.code);
}

Deno.test("a run removed from the store is named by the audit (log.added)", async () => {
  const { runs, store } = await setup();
  assert.deepEqual((await auditStoreLog(store)).problems, []);
  await Deno.remove(join(runs, ids[1]!), { recursive: true });
  const codes = (await auditStoreLog(store)).problems.map((p) => p.code);
  tally.add("run removed", { stopped: codes.includes("log.added"), recorded: true });
  assert.deepEqual(codes, ["log.added"]);
});

Deno.test("a leaf rewritten in the entries is named by the audit (log.tree_mismatch), and a re-signed tree is refused by the witness", async () => {
  const { runs, store, key, witness } = await setup();
  const w = witness("witness.test/a");
  const note = (await store.log.checkpoint())!;
  assert.equal((await w.addCheckpoint(addCheckpointBody(0, [], note))).status, 200);
  const bundle = join(runs, ".log", "tlog", "tile", "entries", "000.p", "3");
  const bytes = await Deno.readFile(bundle);
  const text = new TextDecoder().decode(bytes).replace(ids[1]!, ids[1]!.replace("01", "09"));
  await Deno.writeFile(bundle, new TextEncoder().encode(text));
  const codes = (await auditStoreLog(store)).problems.map((p) => p.code);
  // The forger signs a checkpoint of the rewritten tree with the log's key; the witness has the other root.
  const forged = signNote(
    checkpointText({ ...parseCheckpoint(parseNote(note).text), root: new Uint8Array(32).fill(7) }),
    [key.signer],
  );
  const answer = await w.addCheckpoint(addCheckpointBody(3, [], forged));
  tally.add("leaf rewritten", {
    stopped: codes.includes("log.tree_mismatch") && answer.status === 422,
    recorded: true,
  });
  assert.ok(codes.includes("log.tree_mismatch"), codes.join());
  assert.equal(answer.status, 422);
});

Deno.test("a run changed and sealed again is named by prove verify (log.not_included) and the audit (log.changed)", async () => {
  const { runs, store, policy } = await setup();
  const folder = join(runs, ids[2]!);
  const proof = await Deno.readTextFile(join(folder, "log.tlog-proof"));
  await Deno.remove(folder, { recursive: true });
  await writeRun(join(runs, "..", "elsewhere", ids[2]!), ids[2]!, { note: "a rerun" });
  await Deno.rename(join(runs, "..", "elsewhere", ids[2]!), folder);
  await Deno.writeTextFile(join(folder, "log.tlog-proof"), proof); // the old proof, kept
  const codes = await codesOfVerify(folder, policy);
  const audit = (await auditStoreLog(store)).problems.map((p) => p.code);
  tally.add("run replaced", {
    stopped: codes.includes("log.not_included") && audit.includes("log.changed"),
    recorded: true,
  });
  assert.deepEqual(codes, ["log.not_included"]);
  assert.ok(audit.includes("log.changed"), audit.join());
});

Deno.test("a log rolled back is named by the audit --since (log.rolled_back) and refused by the witness (409)", async () => {
  const { dir, runs, store, witness } = await setup();
  const w = witness("witness.test/b");
  const seen = (await store.log.checkpoint())!;
  assert.equal((await w.addCheckpoint(addCheckpointBody(0, [], seen))).status, 200);
  // The owner rebuilds the log with the first run only, with the same key.
  const other = new FileLog(join(dir, "other"));
  await Deno.mkdir(other.dir, { recursive: true });
  await Deno.copyFile(join(runs, ".log", "key"), join(other.dir, "key"));
  const rebuilt = await other.append([(await import("../../lib/provevi/log/mod.ts")).leafOfSeal(
    await Deno.readTextFile(join(runs, ids[0]!, "evidence", "manifest.json")),
    null,
  )]);
  await Deno.remove(join(runs, ".log", "tlog"), { recursive: true });
  await Deno.rename(join(other.dir, "tlog"), join(runs, ".log", "tlog"));
  const codes = (await auditStoreLog(store, { since: seen, verify: false })).problems.map((p) => p.code);
  const answer = await w.addCheckpoint(addCheckpointBody(1, [], rebuilt.checkpoint));
  tally.add("log rolled back", {
    stopped: codes.includes("log.rolled_back") && answer.status === 409,
    recorded: true,
  });
  assert.ok(codes.includes("log.rolled_back"), codes.join());
  assert.deepEqual([answer.status, answer.body], [409, "3\n"]);
});

Deno.test("a split view (two roots at one size shown to two witnesses) lacks the quorum, and a witness refuses the other root", async () => {
  const { runs, store, key, witness, policy } = await setup();
  const [w1, w2] = [witness("witness.test/c1"), witness("witness.test/c2")];
  const real = (await store.log.checkpoint())!;
  const forged = signNote(
    checkpointText({ ...parseCheckpoint(parseNote(real).text), root: new Uint8Array(32).fill(9) }),
    [key.signer],
  );
  const a1 = await w1.addCheckpoint(addCheckpointBody(0, [], real));
  const a2 = await w2.addCheckpoint(addCheckpointBody(0, [], forged));
  assert.deepEqual([a1.status, a2.status], [200, 200]);
  const quorum = {
    ...policy,
    witnesses: [witnessVerifier(w1.verifier.vkey), witnessVerifier(w2.verifier.vkey)],
    quorum: 2,
  };
  const proofFile = join(runs, ids[0]!, "log.tlog-proof");
  const proof = await Deno.readTextFile(proofFile);
  const withOne = proof.replace(/\n$/, "") + "\n" + a1.body;
  await Deno.writeTextFile(proofFile, withOne);
  const codes = await codesOfVerify(join(runs, ids[0]!), quorum);
  const crossed = await w1.addCheckpoint(addCheckpointBody(3, [], forged));
  tally.add("split view", {
    stopped: codes.includes("log.quorum") && crossed.status === 422,
    recorded: true,
  });
  assert.deepEqual(codes, ["log.quorum"]);
  assert.equal(crossed.status, 422);
});

Deno.test("a checkpoint signed by another key is refused by prove verify (log.untrusted), the witness (403) and the audit", async () => {
  const { runs, store, witness, policy } = await setup();
  const w = witness("witness.test/d");
  const real = (await store.log.checkpoint())!;
  const { signer } = ed25519Signer(
    parseCheckpoint(parseNote(real).text).origin,
    new Uint8Array(randomBytes(32)),
  );
  const forged = signNote(parseNote(real).text, [signer]);
  const proofFile = join(runs, ids[0]!, "log.tlog-proof");
  const proof = await Deno.readTextFile(proofFile);
  await Deno.writeTextFile(proofFile, proof.slice(0, proof.indexOf("\n\n") + 2) + forged);
  const codes = await codesOfVerify(join(runs, ids[0]!), policy);
  const answer = await w.addCheckpoint(addCheckpointBody(0, [], forged));
  await Deno.writeTextFile(join(runs, ".log", "tlog", "checkpoint"), forged);
  const audit = (await auditStoreLog(store, { policy, verify: false })).problems.map((p) => p.code);
  tally.add("another key", {
    stopped: codes.includes("log.untrusted") && answer.status === 403 && audit.includes("log.untrusted"),
    recorded: true,
  });
  assert.deepEqual(codes, ["log.untrusted"]);
  assert.equal(answer.status, 403);
  assert.ok(audit.includes("log.untrusted"), audit.join());
});

Deno.test("a proof for another run is named by prove verify (log.not_included)", async () => {
  const { runs, policy } = await setup();
  await Deno.copyFile(join(runs, ids[0]!, "log.tlog-proof"), join(runs, ids[1]!, "log.tlog-proof"));
  const codes = await codesOfVerify(join(runs, ids[1]!), policy);
  tally.add("proof for another run", { stopped: codes.includes("log.not_included"), recorded: true });
  assert.deepEqual(codes, ["log.not_included"]);
});

Deno.test("a witness over HTTP answers an unknown log 404 and keeps its state across a new process", async () => {
  const { dir, store, key } = await setup();
  const seed = new Uint8Array(randomBytes(32));
  const state = join(dir, "state");
  const first = new Witness({ name: "witness.test/e", seed, state, logs: [key.verifier] });
  {
    await using server = serveWitness(first, { port: 0 });
    assert.equal((await cosignLatest(store.log, [server.url])).replies[0]!.status, 200);
  }
  // A new witness process on the same state: it has size 3, so old 0 is a conflict, not a second cosignature.
  const again = new Witness({ name: "witness.test/e", seed, state, logs: [] });
  const unknown = await again.addCheckpoint(addCheckpointBody(0, [], (await store.log.checkpoint())!));
  const same = new Witness({ name: "witness.test/e", seed, state, logs: [key.verifier] });
  const stale = await same.addCheckpoint(addCheckpointBody(0, [], (await store.log.checkpoint())!));
  tally.add("witness state", { stopped: unknown.status === 404 && stale.status === 409, recorded: true });
  assert.deepEqual([unknown.status, stale.status, stale.body], [404, 409, "3\n"]);
});

Deno.test("a leaf forged for a sealed run (its manifest's hash, another last hash) in an entry bundle past the size or in the pending file is not appended; the audit names the run missing (log.missing), not changed", async () => {
  const { dir, runs, store } = await setup();
  const id = "run-20261201T000000Z-000000f1";
  const unlogged = new FileStore({ runs });
  Object.defineProperty(unlogged, "log", { value: undefined });
  await writeRun(join(runs, id), id, { store: unlogged });
  const genuine = leafOfSeal(await Deno.readTextFile(join(runs, id, "evidence", "manifest.json")), null);
  const forged = { ...genuine, last_hash: "0".repeat(64) };
  const entries = await store.log.readEntries(0, 3);
  const tlog = join(store.log.dir, "tlog");
  await Deno.writeFile(
    join(tlog, "tile", "entries", "000.p", "4"),
    bundleBytes([...entries, leafBytes(forged)]),
  );
  const line = { index: 3, folder: join(runs, id), leaf: new TextDecoder().decode(leafBytes(forged)) };
  await Deno.writeTextFile(join(store.log.dir, "pending.jsonl"), JSON.stringify(line) + "\n");
  await writeRun(join(runs, "run-20261201T000000Z-000000f2"), "run-20261201T000000Z-000000f2");
  const codes = (await auditStoreLog(store)).problems.map((p) => p.code);
  const inLog = await store.log.indexOf(id);
  tally.add("forged pending leaf", {
    stopped: inLog === null && !codes.includes("log.changed"),
    recorded: true,
  });
  assert.equal(inLog, null);
  assert.deepEqual(codes, ["log.missing"]);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("the log attack tally", () => {
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});

import assert from "node:assert/strict";
import { proveConsistency } from "../../../lib/provevi/log/log_proofs.ts";
import { checkCheckpoint, witnessVerifier } from "../../../lib/provevi/log/trust_policy.ts";
import { addCheckpointBody } from "../../../lib/provevi/log/witness.ts";
import { cosignLatest } from "../../../lib/provevi/log/witness_client.ts";
import { serveWitness } from "../../../lib/provevi/log/witness_server.ts";
import { fakeLeaf, tempLog, witnessOf } from "./_log_fixtures.ts";

Deno.test("a witness cosigns a consistent checkpoint and answers 409 with its size, 422 for a bad proof", async () => {
  const { log } = await tempLog();
  const witness = await witnessOf(log);
  await log.append([fakeLeaf(0), fakeLeaf(1)]);
  const first = (await log.checkpoint())!;
  const ok = await witness.addCheckpoint(addCheckpointBody(0, [], first));
  assert.equal(ok.status, 200, ok.body);
  await log.append([fakeLeaf(2)]);
  const second = (await log.checkpoint())!;
  const stale = await witness.addCheckpoint(addCheckpointBody(0, [], second));
  assert.deepEqual([stale.status, stale.body, stale.contentType], [409, "2\n", "text/x.tlog.size"]);
  const bad = await witness.addCheckpoint(addCheckpointBody(2, [new Uint8Array(32)], second));
  assert.equal(bad.status, 422);
  const { proof } = await proveConsistency(log, 2, 3);
  assert.equal((await witness.addCheckpoint(addCheckpointBody(2, proof, second))).status, 200);
});

Deno.test("cosignLatest() gathers a witness's cosignature over HTTP, and the policy counts it toward the quorum", async () => {
  const { log } = await tempLog();
  const witness = await witnessOf(log);
  await using server = serveWitness(witness, { port: 0 });
  await log.append([fakeLeaf(0)]);
  const { note, replies } = await cosignLatest(log, [server.url]);
  assert.equal(replies[0]!.status, 200, replies[0]!.text);
  const key = (await log.key())!;
  const policy = { logs: [key.verifier], witnesses: [witnessVerifier(witness.verifier.vkey)], quorum: 1 };
  assert.ok(checkCheckpoint(note, policy).ok);
  assert.equal(await log.witnessed(), note);
  const unwitnessed = checkCheckpoint((await log.checkpoint())!, policy);
  assert.equal(unwitnessed.ok ? "ok" : unwitnessed.refusal.code, "log.quorum");
});

/**
 * `prove log` and `prove verify --log-key` on a sqlite store and a file store: the key, a run's proof, a
 * consistency proof, the audit, a witness's cosignature gathered by `prove log cosign` and `prove log wait`, and
 * the audit's refusal of a run removed from the store.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { bufferIo } from "../../cli/_io.ts";
import { prove } from "../../cli/prove.ts";
import { SqliteStore } from "../../lib/provevi/sqlite/sqlite_store.ts";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { Witness } from "../../lib/provevi/log/witness.ts";
import { serveWitness } from "../../lib/provevi/log/witness_server.ts";
import { writeRichRun } from "../provevi/_rich_run.ts";
import { writeRun } from "../provevi/_run.ts";

async function run(args: string[]) {
  const io = bufferIo();
  const code = await prove(args, io);
  return { code, out: io.stdout.join("\n"), err: io.stderr.join("\n") };
}

const A = "run-20261201T000000Z-0000000a";
const B = "run-20261201T000000Z-0000000b";

async function sqliteStore(): Promise<{ store: string; runs: string; db: string }> {
  const dir = await Deno.makeTempDir({ prefix: "prove-log-" });
  const db = join(dir, "evidence.db");
  const runs = join(dir, "runs");
  await using store = new SqliteStore(db, { runs });
  for (const id of [A, B]) await writeRichRun(await store.openRun(id));
  return { store: `sqlite:///${db}`, runs, db };
}

Deno.test("prove log key|proof|consistency|audit and prove verify --log-key work on a sqlite store", async () => {
  const { store, runs } = await sqliteStore();
  const at = ["--store", store, "--runs", runs];
  const key = await run([...at, "log", "key"]);
  assert.equal(key.code, 0, key.err);
  assert.match(key.out, /^provevi\.local\/sqlite\/[0-9a-f]{16}\+[0-9a-f]{8}\+[A-Za-z0-9+/]+=*$/);
  const proof = await run([...at, "log", "proof", B]);
  assert.equal(proof.code, 0, proof.err);
  assert.match(proof.out, /^c2sp\.org\/tlog-proof@v1\nindex 1\n/);
  // A run is named as for every prove command: latest, or the start of its ID that no other run shares.
  assert.deepEqual(await run([...at, "log", "proof", "latest"]), proof);
  const both = await run([...at, "log", "proof", B.slice(0, -1)]);
  assert.equal(both.code, 1);
  assert.match(
    both.err,
    /^prove: "run-20261201T000000Z-0000000" starts more than one run in .* \(.*0000000a, .*0000000b\); write more/,
  );
  assert.equal(both.err.split("\n").length, 1);
  const consistency = await run([...at, "log", "consistency", "1", "2", "--json"]);
  assert.equal(JSON.parse(consistency.out).new.size, 2);
  const audit = await run([...at, "log", "audit"]);
  assert.deepEqual([audit.code, audit.out], [0, "the log of 2 runs agrees with the store"]);
  const verified = await run([...at, "verify", B, "--log-key", key.out, "--json"]);
  assert.equal(verified.code, 0, verified.out + verified.err);
  assert.equal(JSON.parse(verified.out).in_log.index, 1);
});

Deno.test("prove log cosign and prove log wait gather a witness, and prove verify asks for its quorum", async () => {
  const { store, runs } = await sqliteStore();
  const at = ["--store", store, "--runs", runs];
  const logKey = (await run([...at, "log", "key"])).out;
  await using reader = new SqliteStore(store, { runs, create: false });
  const witness = new Witness({
    name: "witness.test/w1",
    seed: new Uint8Array(randomBytes(32)),
    state: await Deno.makeTempDir({ prefix: "prove-log-witness-" }),
    logs: [(await reader.log.key())!.verifier],
  });
  await using server = serveWitness(witness, { port: 0 });
  const policy = ["--log-key", logKey, "--witness", witness.verifier.vkey, "--quorum", "1"];
  // The proof of the seal is signed by the log only: the quorum of one witness is not there yet.
  const before = await run([...at, "verify", A, ...policy]);
  assert.equal(before.code, 1);
  assert.match(before.out + before.err, /log\.quorum|cosigned by 0/);
  const cosign = await run([...at, "log", "cosign", server.url]);
  assert.deepEqual([cosign.code, cosign.out], [0, `${server.url}: 200 cosigned`]);
  const wait = await run([...at, "log", "wait", A, ...policy, "--timeout", "30"]);
  assert.equal(wait.code, 0, wait.err);
  assert.match(wait.out, /\n— witness\.test\/w1 /);
  const after = await run([...at, "verify", A, ...policy]);
  assert.equal(after.code, 0, after.out + after.err);
});

Deno.test("prove log cosign --witness keeps no cosignature that does not verify for the key given, and writes nothing", async () => {
  const { store, runs } = await sqliteStore();
  const at = ["--store", store, "--runs", runs];
  await using reader = new SqliteStore(store, { runs, create: false });
  const witness = new Witness({
    name: "witness.test/w1",
    seed: new Uint8Array(randomBytes(32)),
    state: await Deno.makeTempDir({ prefix: "prove-log-witness-" }),
    logs: [(await reader.log.key())!.verifier],
  });
  await using server = serveWitness(witness, { port: 0 });
  // a witness (or what stands between) that answers with its cosignature's last signature byte changed
  await using forger = Deno.serve({ port: 0, onListen: () => {} }, async (request) => {
    const answer = await fetch(`${server.url}/add-checkpoint`, {
      method: "POST",
      body: await request.text(),
    });
    const line = (await answer.text()).trim();
    const [head, sig] = [line.slice(0, line.lastIndexOf(" ") + 1), line.slice(line.lastIndexOf(" ") + 1)];
    const bytes = Uint8Array.from(atob(sig), (c) => c.charCodeAt(0));
    bytes[bytes.length - 1]! ^= 1;
    return new Response(`${head}${btoa(String.fromCharCode(...bytes))}\n`, { status: answer.status });
  });
  const url = `http://127.0.0.1:${forger.addr.port}`;
  const witnessed = await reader.log.witnessed();
  const cosign = await run([...at, "log", "cosign", url, "--witness", witness.verifier.vkey]);
  assert.equal(cosign.code, 1, cosign.out + cosign.err);
  assert.equal(
    cosign.out,
    `${url}: 502 it answered 200 with a cosignature by witness.test/w1 that does not verify for this checkpoint`,
  );
  assert.equal(await reader.log.witnessed(), witnessed, "a witnessed checkpoint was written");
  // the right answer, checked by the same key, is kept
  const good = await run([...at, "log", "cosign", server.url, "--witness", witness.verifier.vkey]);
  assert.deepEqual([good.code, good.out], [0, `${server.url}: 200 cosigned`]);
  const wrong = await run([...at, "log", "cosign", server.url, "--witness", "no-such-key"]);
  assert.equal(wrong.code, 2);
  assert.match(wrong.err, /no-such-key is neither a verifier key/);
});

Deno.test("prove log audit names a run removed from a file store and exits 1", async () => {
  const runs = join(await Deno.makeTempDir({ prefix: "prove-log-file-" }), "runs");
  for (const id of [A, B]) await writeRun(join(runs, id), id);
  assert.equal((await run(["--runs", runs, "log", "audit"])).code, 0);
  await Deno.remove(join(runs, A), { recursive: true });
  const audit = await run(["--runs", runs, "log", "audit", "--json"]);
  assert.equal(audit.code, 1);
  assert.deepEqual(JSON.parse(audit.out).problems.map((p: { code: string }) => p.code), ["log.added"]);
  new FileStore({ runs }).log.close();
});

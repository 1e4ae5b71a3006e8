import canonicalize from "canonicalize";
import assert from "node:assert/strict";
import { join } from "node:path";
import { ATTESTATION_FILE, attestRun, runStatement } from "../../../lib/provevi/evidence/attestation.ts";
import { jsonLineWeight } from "../../../lib/provevi/evidence/json_depth.ts";
import { EventChain } from "../../../lib/provevi/evidence/chain.ts";
import { signBytes } from "../../../lib/provevi/evidence/signing_key.ts";
import { FileRunRecord } from "../../../lib/provevi/store/file_run_record.ts";
import { FileRunWriter } from "../../../lib/provevi/store/file_run_writer.ts";
import type { Json } from "../../../lib/provevi/evidence/event.ts";
import { readSigningKey, readTrustedKey, writeKeyPair } from "../../../lib/provevi/evidence/signing_key.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { SAMPLE_RUN_ID } from "../_sample_run.ts";
import { fixtureCopy, rechain } from "../_tamper.ts";
import { peerTest } from "../../_peers.ts";

const PYTHON = Deno.env.get("PROVEVI_TEST_INTOTO_PYTHON");
const VERIFIER = new URL("./intoto_verify.py", import.meta.url).pathname;

/** A signed copy of the fixture run (its run_created naming the key when `record` is set), and a key pair. */
async function signedRun(
  fn: (ctx: { folder: string; dir: string; key: string; pub: string }) => Promise<void>,
  options: { record?: boolean } = {},
): Promise<void> {
  const { dir, folder } = await fixtureCopy();
  try {
    const key = join(dir, "signing.key");
    const { keyid } = await writeKeyPair(key);
    if (options.record) {
      await rechain(folder, (es) => {
        (es[0]!.data as Record<string, unknown>).signing_key = keyid;
        return es;
      });
    }
    await attestRun(new FileRunRecord(SAMPLE_RUN_ID, folder), await readSigningKey(key));
    await fn({ folder, dir, key, pub: `${key}.pub` });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const check = async (folder: string, trust: string[] = []) =>
  await verifyRun(new FileRunRecord(SAMPLE_RUN_ID, folder), {
    ...(trust.length ? { trust: await Promise.all(trust.map((t) => readTrustedKey(t))) } : {}),
  });

Deno.test("writeKeyPair() writes a private key only its owner may read, and refuses to replace one", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const made = await writeKeyPair(join(dir, "k"));
    assert.equal((await Deno.stat(made.privatePath)).mode! & 0o777, 0o600);
    assert.equal((await readTrustedKey(made.publicPath)).keyid, made.keyid);
    await assert.rejects(() => writeKeyPair(join(dir, "k")), /exists; choose another name/);
    await Deno.chmod(made.privatePath, 0o644);
    await assert.rejects(() => readSigningKey(made.privatePath), /may be read by others \(mode 644\)/);
    await Deno.writeTextFile(join(dir, "bad.pub"), "{}");
    await assert.rejects(() => readTrustedKey(join(dir, "bad.pub")), /is not an Ed25519 public key file/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("readSigningKey() reads a key file again when it changed, and checks its mode every time", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const a = await writeKeyPair(join(dir, "a"));
    const b = await writeKeyPair(join(dir, "b"));
    const path = join(dir, "signing.key");
    await Deno.copyFile(a.privatePath, path);
    await Deno.chmod(path, 0o600);
    assert.equal((await readSigningKey(path)).keyid, a.keyid);
    assert.equal((await readSigningKey(path)).keyid, a.keyid);
    // Another key of the same size in the same file, at once: the text differs, so the key is read again.
    await Deno.writeFile(path, await Deno.readFile(b.privatePath));
    assert.equal((await readSigningKey(path)).keyid, b.keyid);
    await Deno.chmod(path, 0o640);
    await assert.rejects(() => readSigningKey(path), /may be read by others \(mode 640\)/);
    await Deno.chmod(path, 0o600);
    await Deno.writeTextFile(path, "{}");
    await assert.rejects(() => readSigningKey(path), /is not an Ed25519 private key file/);
    await Deno.remove(path);
    await assert.rejects(
      () => readSigningKey(path),
      /^ProveviError: cannot read the signing key .*: there is no such file$/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("signBytes() gives the very signature WebCrypto gives with the same key, which the public key verifies", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const pair = await writeKeyPair(join(dir, "k"));
    const key = await readSigningKey(pair.privatePath);
    const trusted = await readTrustedKey(pair.publicPath);
    for (const size of [0, 1, 64, 5_000]) {
      const bytes = crypto.getRandomValues(new Uint8Array(size));
      const ours = await signBytes(key, bytes);
      const webCrypto = new Uint8Array(await crypto.subtle.sign("Ed25519", key.key, bytes));
      assert.deepEqual(ours, webCrypto, `${size} bytes`);
      assert.ok(await crypto.subtle.verify("Ed25519", trusted.key, ours, bytes));
    }
    // A key made elsewhere, with no file behind it, signs through WebCrypto alone.
    const made = await crypto.subtle.generateKey("Ed25519", false, ["sign", "verify"]) as CryptoKeyPair;
    const sig = await signBytes({ keyid: "elsewhere", key: made.privateKey }, new Uint8Array([1, 2]));
    assert.ok(await crypto.subtle.verify("Ed25519", made.publicKey, sig, new Uint8Array([1, 2])));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("verifyRun() --trust passes a run signed by the trusted key; without --trust it says the signature was not checked", async () => {
  await signedRun(async ({ folder, pub }) => {
    const trusted = await check(folder, [pub]);
    assert.deepEqual([trusted.ok, trusted.problems.map((p) => p.message)], [true, []]);
    assert.deepEqual(trusted.signedBy, [(await readTrustedKey(pub)).keyid]);
    const untrusted = await check(folder);
    assert.equal(untrusted.ok, true);
    assert.match(
      untrusted.notes[0]!,
      /^the run is signed by key [0-9a-f]{64}; the signature was not checked/,
    );
  }, { record: true });
});

Deno.test("verifyRun() --trust fails an unsigned run, a run signed by another key, and a forged signature", async () => {
  const { dir, folder } = await fixtureCopy();
  try {
    const { publicPath } = await writeKeyPair(join(dir, "k"));
    assert.deepEqual((await check(folder, [publicPath])).problems.map((p) => p.message), [
      `evidence/${ATTESTATION_FILE} is missing: the run is not signed, and --trust requires a signature by a trusted key`,
    ]);
    assert.deepEqual((await check(folder)).notes, ["the run is not signed"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  await signedRun(async ({ folder, dir }) => {
    const other = await writeKeyPair(join(dir, "other"));
    assert.deepEqual((await check(folder, [other.publicPath])).problems.map((p) => p.message), [
      `evidence/${ATTESTATION_FILE} has no valid signature by a trusted key (trusted: ${other.keyid})`,
    ]);
  });
  await signedRun(async ({ folder, pub }) => {
    const path = join(folder, "evidence", ATTESTATION_FILE);
    const envelope = JSON.parse(await Deno.readTextFile(path));
    envelope.signatures[0].sig = btoa("x".repeat(64));
    await Deno.writeTextFile(path, canonicalize(envelope) + "\n");
    assert.deepEqual((await check(folder, [pub])).problems.map((p) => p.code), ["attestation.untrusted"]);
  });
});

Deno.test("verifyRun() fails a run re-chained and re-sealed after it was signed, and one whose attestation was removed", async () => {
  await signedRun(async ({ folder, pub }) => {
    await rechain(folder, (es) => {
      (es[8]!.data as Record<string, unknown>).output_tokens = 7;
      return es;
    });
    assert.deepEqual((await check(folder, [pub])).problems.map((p) => p.message), [
      `evidence/${ATTESTATION_FILE} states another run than the folder holds: its statement is not the one the evidence gives (subjects, last hash, inputs); the run was changed after it was signed`,
    ]);
  });
  await signedRun(async ({ folder }) => {
    await Deno.remove(join(folder, "evidence", ATTESTATION_FILE));
    const problems = (await check(folder)).problems.map((p) => p.message);
    assert.equal(problems.length, 1, problems.join("\n"));
    assert.match(
      problems[0]!,
      /attestation\.dsse\.json is missing, but run_created records that the run is signed by key/,
    );
  }, { record: true });
});

peerTest("intoto", {
  name: "the signed seal verifies with in-toto's and securesystemslib's own Python code",
  fn: async () => {
    if (!PYTHON) throw new Error("PROVEVI_TEST_INTOTO_PYTHON is unset: .ci/peers/intoto.sh did not run");
    await signedRun(async ({ folder, pub, dir }) => {
      const run = async (key: string) => {
        const out = await new Deno.Command(PYTHON, {
          args: [VERIFIER, folder, key],
          stdout: "piped",
          stderr: "piped",
        })
          .output();
        return {
          code: out.code,
          text: new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr),
        };
      };
      const good = await run(pub);
      assert.equal(good.code, 0, good.text);
      assert.equal(good.text.trim(), `ok ${(await readTrustedKey(pub)).keyid}`);
      const other = await writeKeyPair(join(dir, "other"));
      assert.equal((await run(other.publicPath)).code, 1);
      // A changed output is a subject whose digest no longer holds.
      await Deno.writeTextFile(join(folder, "output", "answer.txt"), "Revenue fell.\n");
      const changed = await run(pub);
      assert.equal(changed.code, 1);
      assert.match(changed.text, /^subject output\/answer\.txt: /);
    }, { record: true });
  },
});

/** A writer of a run whose run_created names `keyid`, and a function that appends an event to it. */
async function signedWriter(dir: string, runId: string, keyid: string | null) {
  await Deno.mkdir(join(dir, "runs"), { recursive: true });
  const writer = await FileRunWriter.create(runId, join(dir, "runs", runId));
  const chain = new EventChain(runId);
  const make = (type: string, data: Record<string, Json>) =>
    chain.next({ type, component: "Test", actor: "ada", refs: [`run://a/b/c/${runId}`], data });
  const add = async (type: string, data: Record<string, Json>) => {
    const next = make(type, data);
    await writer.append(next.line, next.event);
    chain.accept(next);
    return next.event;
  };
  await add("run_created", { agent: "q", agent_version: "1", ...(keyid ? { signing_key: keyid } : {}) });
  return { writer, chain, make, add };
}

Deno.test("a signed seal's statement, made from what the writer kept of its events, is the statement of the file: with lines taken back, written many at a time, and with no key named", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const pair = await writeKeyPair(join(dir, "k"));
    const key = await readSigningKey(pair.privatePath);
    const trust = [await readTrustedKey(pair.publicPath)];
    const store = new FileStore({ runs: join(dir, "runs") });
    for (const named of [true, false]) {
      const runId = `run-20261130T120000Z-0000000${named ? 1 : 2}`;
      const { writer, chain, make, add } = await signedWriter(dir, runId, named ? key.keyid : null);
      await add("input_staged", { name: "report", sha256: "a".repeat(64) });
      // A line written and taken back, as a store whose row could not be kept does.
      const dropped = make("note_added", { text: "dropped" });
      const before = writer.last;
      writer.appendSync(dropped.line, dropped.event);
      writer.unappendLast(dropped.line, before);
      // Three lines in one write, the last an output.
      const many = [];
      for (const step of ["one", "two"]) {
        const next = make("note_added", { text: step });
        chain.accept(next);
        many.push(next);
      }
      const out = make("output_artifact_created", { path: "answer.txt", sha256: "b".repeat(64), size: 4 });
      chain.accept(out);
      many.push(out);
      await writer.appendMany(many.map((m) => m.line), many.map((m) => m.event));
      await add("run_completed", { status: "completed" });
      await writer.seal({ signingKey: key });
      const record = await store.readRun(runId);
      const envelope = JSON.parse(await Deno.readTextFile(join(writer.folder, "evidence", ATTESTATION_FILE)));
      const signed = JSON.parse(
        new TextDecoder().decode(Uint8Array.from(atob(envelope.payload), (c) => c.charCodeAt(0))),
      );
      assert.deepEqual(signed, runStatement((await record.eventsText())!, (await record.manifestText())!));
      const check = await verifyRun(record, { trust });
      assert.deepEqual([
        check.signedBy,
        check.problems.map((p) => p.message).filter((p) => !/output/.test(p)),
      ], [[key.keyid], []]);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a signed seal signs the lines written, whatever becomes of the event objects after, and after lines taken back from a write of many", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const pair = await writeKeyPair(join(dir, "k"));
    const key = await readSigningKey(pair.privatePath);
    const trust = [await readTrustedKey(pair.publicPath)];
    const store = new FileStore({ runs: join(dir, "runs") });
    const runId = "run-20261130T120000Z-00000011";
    const { writer, chain, make, add } = await signedWriter(dir, runId, key.keyid);
    const staged = await add("input_staged", { name: "report", sha256: "a".repeat(64) });
    // The caller changes the event objects it was handed: the file keeps the lines, and so does the seal.
    (staged.data as Record<string, Json>).name = "changed";
    staged.refs.length = 0;
    // Three lines in one write, and the last two taken back, one at a time.
    const many = ["one", "two", "three"].map((text) => make("note_added", { text }));
    await writer.appendMany!(many.map((m) => m.line), many.map((m) => m.event));
    chain.accept(many[0]!);
    writer.unappendLast(many[2]!.line, { line: many[1]!.line, event: many[1]!.event });
    writer.unappendLast(many[1]!.line, { line: many[0]!.line, event: many[0]!.event });
    await add("run_completed", { status: "completed" });
    await writer.seal({ signingKey: key });
    const check = await verifyRun(await store.readRun(runId), { trust });
    assert.deepEqual([check.problems.map((p) => p.message), check.signedBy], [[], [key.keyid]]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a writer refuses to seal a run whose run_created names a key with another key or none, and a seal that failed says so when called again", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const a = await readSigningKey((await writeKeyPair(join(dir, "a"))).privatePath);
    const b = await readSigningKey((await writeKeyPair(join(dir, "b"))).privatePath);
    const { writer, add } = await signedWriter(dir, "run-20261130T120000Z-00000012", a.keyid);
    await add("run_completed", { status: "completed" });
    await assert.rejects(
      () => writer.seal({ signingKey: b }),
      new RegExp(`records signing key ${a.keyid} in run_created; it cannot be sealed with key ${b.keyid}$`),
    );
    await assert.rejects(
      () => writer.seal(),
      /its seal failed already \(.*cannot be sealed with key .*\); it stays unsealed, with every event it recorded$/,
    );
    assert.deepEqual(
      (await Array.fromAsync(Deno.readDir(join(writer.folder, "evidence")))).map((e) => e.name).sort(),
      ["events.jsonl", "payloads"],
    );
    const other = await signedWriter(dir, "run-20261130T120000Z-00000013", a.keyid);
    await other.add("run_completed", { status: "completed" });
    await assert.rejects(
      () => other.writer.seal(),
      /records signing key .* in run_created; seal it with that key/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a signed run killed before its manifest took its name is not said to be signed by the trusted key", async () => {
  await signedRun(async ({ folder, pub }) => {
    await Deno.rename(
      join(folder, "evidence", "manifest.json"),
      join(folder, "evidence", "manifest.json.tmp"),
    );
    const result = await check(folder, [pub]);
    assert.equal(result.ok, false);
    assert.deepEqual(result.signedBy, []);
    assert.ok(
      result.problems.map((p) => p.message).some((p) => /manifest\.json is missing/.test(p)),
      result.problems.map((p) => p.message).join("\n"),
    );
    assert.ok(
      !result.problems.map((p) => p.message).some((p) => /no valid signature/.test(p)),
      result.problems.map((p) => p.message).join("\n"),
    );
  }, { record: true });
});

Deno.test("runStatement() takes an input_staged line without refs or data without a crash", () => {
  const statement = runStatement(
    '{"type":"run_created","data":{}}\n{"type":"input_staged","data":{}}\n{"type":"input_staged"}\n',
    "{}",
  );
  assert.deepEqual(statement.predicate.inputs, [{ name: null, uri: null, sha256: null }]);
});

Deno.test("a statement made from events.jsonl's text weighs the lines it parses: lines of many small values are refused unparsed", () => {
  const dense = `{"data":{"a":[${"{},".repeat(50_000)}{}]},"type":"output_artifact_created"}`;
  const text = `{"data":{},"type":"run_created"}\n${dense}\n${dense}\n`;
  const manifest = '{"events":3,"last_hash":null}';
  assert.throws(
    () => runStatement(text, manifest, { weight: jsonLineWeight(dense) }),
    /events\.jsonl's lines of inputs and outputs would take more than \d+ bytes of memory read: no statement is made of them$/,
  );
  // within the weight, made as before
  assert.ok(runStatement(text, manifest, { weight: 3 * jsonLineWeight(dense) }).subject.length > 0);
});

/**
 * Attacks on a witness (`prove witness`, C2SP tlog-witness) over HTTP, by class: malformed `add-checkpoint`
 * bodies (no empty line, sizes that are not canonical or not safe integers, too many or bad proof lines, bytes
 * that are not UTF-8, a body past its cap with no length declared), checkpoints it must not cosign (an unknown
 * log, the right origin signed by another key, an old size above the new one, a stale old size, a split view),
 * and its state (two witnesses on one state folder racing two roots for one size; a write torn by a kill). It
 * must never cosign two roots for one size, nor a smaller tree; every refusal is a 4xx of one line.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { Buffer } from "node:buffer";
import { checkpointText, parseCheckpoint } from "../../lib/provevi/log/checkpoint.ts";
import { ed25519Signer, parseNote, signatureLine, signNote } from "../../lib/provevi/log/note.ts";
import { checkCheckpoint, witnessVerifier } from "../../lib/provevi/log/trust_policy.ts";
import { addCheckpointBody, Witness } from "../../lib/provevi/log/witness.ts";
import { cosignLatest } from "../../lib/provevi/log/witness_client.ts";
import { serveWitness } from "../../lib/provevi/log/witness_server.ts";
import { sha256Hex } from "../../lib/provevi/evidence/hash.ts";
import { fakeLeaf, tempLog, witnessOf } from "../provevi/log/_log_fixtures.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("witness attacks");

async function setup() {
  const { log } = await tempLog();
  await log.append([fakeLeaf(0), fakeLeaf(1), fakeLeaf(2)]);
  const key = (await log.key({ create: true }))!;
  const state = await Deno.makeTempDir({ prefix: "witness-attack-" });
  const witness = () =>
    new Witness({
      name: "witness.test/a",
      seed: new Uint8Array(randomBytes(32)),
      state,
      logs: [key.verifier],
    });
  const real = (await log.checkpoint())!;
  const checkpoint = parseCheckpoint(parseNote(real).text);
  /** The log's checkpoint with another root (or size), signed with the log's own key: a split view. */
  const forged = (change: { root?: Uint8Array; size?: number }) =>
    signNote(checkpointText({ ...checkpoint, ...change }), [key.signer]);
  return { log, key, state, witness, real, checkpoint, forged };
}

Deno.test("malformed add-checkpoint bodies are each a 400 or 413 of one line, and cosign nothing", async () => {
  const { witness, real, checkpoint, state } = await setup();
  await using server = serveWitness(witness(), { port: 0 });
  const hash = Buffer.from(new Uint8Array(32)).toString("base64");
  const bodies: [string, BodyInit, number][] = [
    ["no empty line before the checkpoint", `old 0\n${real}`, 400],
    ["a negative old size", `old -1\n\n${real}`, 400],
    ["an old size with a leading zero", `old 01\n\n${real}`, 400],
    ["an old size past 2^53", `old 99999999999999999999\n\n${real}`, 400],
    ["64 proof lines", `old 0\n${`${hash}\n`.repeat(64)}\n${real}`, 400],
    ["a proof line that is not base64 of 32 bytes", `old 0\nAAAA\n\n${real}`, 400],
    ["a checkpoint that is not a note", `old 0\n\nnot a checkpoint\n`, 400],
    [
      "a checkpoint with a size that is not a number",
      `old 0\n\n${real.replace(`\n${checkpoint.size}\n`, "\n3x\n")}`,
      400,
    ],
    ["bytes that are not UTF-8", new Uint8Array([0x6f, 0x6c, 0x64, 0x20, 0x30, 0x0a, 0x0a, 0xff, 0xfe]), 400],
    [
      "1 MiB with no declared length",
      new Blob([new Uint8Array(1024 * 1024).fill(0x41)]).stream(),
      413,
    ],
  ];
  for (const [name, body, status] of bodies) {
    const r = await fetch(`${server.url}/add-checkpoint`, { method: "POST", body });
    const text = await r.text();
    const stopped = r.status === status && text.trim().split("\n").length === 1;
    tally.add(name, { stopped, recorded: r.status < 500 });
    assert.ok(stopped, `${name}: ${r.status} ${text.slice(0, 200)}`);
  }
  const kept = [...Deno.readDirSync(state)].filter((e) => e.name !== "lock");
  tally.add("malformed bodies leave no state", { stopped: kept.length === 0, recorded: true });
  assert.deepEqual(kept, []);
});

Deno.test("a witness cosigns no unknown log, no other key, no smaller tree, no stale size, and never a second root for one size", async () => {
  const { witness, real, checkpoint, forged, state } = await setup();
  const w = witness();
  const other = ed25519Signer("provevi.local/other/0000000000000000", new Uint8Array(randomBytes(32)));
  const sameName = ed25519Signer(checkpoint.origin, new Uint8Array(randomBytes(32)));
  const cases: [string, string, number][] = [
    [
      "a checkpoint of an unknown log",
      addCheckpointBody(
        0,
        [],
        signNote(checkpointText({ ...checkpoint, origin: other.signer.name }), [other.signer]),
      ),
      404,
    ],
    [
      "the log's origin signed by another key",
      addCheckpointBody(0, [], signNote(checkpointText(checkpoint), [sameName.signer])),
      403,
    ],
    ["an old size above the checkpoint's", addCheckpointBody(5, [], real), 400],
  ];
  for (const [name, body, status] of cases) {
    const answer = await w.addCheckpoint(body);
    tally.add(name, { stopped: answer.status === status, recorded: true });
    assert.equal(answer.status, status, `${name}: ${answer.body}`);
  }
  assert.equal((await w.addCheckpoint(addCheckpointBody(0, [], real))).status, 200);
  const size = checkpoint.size;
  const after: [string, string, number][] = [
    ["a stale old size", addCheckpointBody(0, [], real), 409],
    [
      "a split view: another root at the size it has",
      addCheckpointBody(size, [], forged({ root: new Uint8Array(32).fill(7) })),
      422,
    ],
    ["a smaller tree", addCheckpointBody(size, [], forged({ size: size - 1 })), 400],
    [
      "a larger tree with no proof",
      addCheckpointBody(size, [], forged({ size: size + 1, root: new Uint8Array(32).fill(8) })),
      422,
    ],
  ];
  for (const [name, body, status] of after) {
    const answer = await w.addCheckpoint(body);
    tally.add(name, { stopped: answer.status === status, recorded: true });
    assert.equal(answer.status, status, `${name}: ${answer.body}`);
  }
  const kept = parseCheckpoint(
    parseNote(await Deno.readTextFile(join(state, sha256Hex(checkpoint.origin)))).text,
  );
  assert.deepEqual([kept.size, Buffer.from(kept.root).toString("hex")], [
    size,
    Buffer.from(checkpoint.root).toString("hex"),
  ]);
});

Deno.test("two witnesses on one state folder, raced with two roots for one size, cosign exactly one; a write torn by a kill changes nothing", async () => {
  const { witness, real, checkpoint, forged, state } = await setup();
  // A kill during a write leaves the file written aside, torn: the next write replaces it.
  await Deno.writeTextFile(join(state, `${sha256Hex(checkpoint.origin)}.tmp`), "provevi.local/torn\n9");
  const [a, b] = [witness(), witness()];
  const split = forged({ root: new Uint8Array(32).fill(3) });
  const answers = await Promise.all(
    Array.from(
      { length: 24 },
      (_, i) => (i % 2 ? a : b).addCheckpoint(addCheckpointBody(0, [], i % 4 < 2 ? real : split)),
    ),
  );
  const cosigned = answers.filter((x) => x.status === 200).length;
  const refused = answers.filter((x) => x.status === 409 && x.body === `${checkpoint.size}\n`).length;
  tally.add("24 racing adds of two roots for one size, two witnesses", {
    stopped: cosigned === 1 && refused === 23,
    recorded: true,
  });
  assert.deepEqual([cosigned, refused], [1, 23]);
  const kept = await Deno.readTextFile(join(state, sha256Hex(checkpoint.origin)));
  const keptRoot = parseCheckpoint(parseNote(kept).text).root;
  const won = answers.findIndex((x) => x.status === 200);
  const expected = parseCheckpoint(parseNote(won % 4 < 2 ? real : split).text).root;
  tally.add("the state holds the one root cosigned", {
    stopped: Buffer.from(keptRoot).equals(Buffer.from(expected)),
    recorded: true,
  });
  assert.ok(Buffer.from(keptRoot).equals(Buffer.from(expected)));
});

Deno.test("a link planted at the witness's scratch file is replaced, and the file it names left alone", async () => {
  const { witness, real, checkpoint, state } = await setup();
  const victim = join(state, "..", `victim-${crypto.randomUUID()}.txt`);
  await Deno.writeTextFile(victim, "the operator's own file\n");
  const file = join(state, sha256Hex(checkpoint.origin));
  await Deno.symlink(victim, `${file}.tmp`);
  try {
    const answer = await witness().addCheckpoint(addCheckpointBody(0, [], real));
    const kept = await Deno.readTextFile(victim) === "the operator's own file\n";
    tally.add("a link at the witness's state scratch file", { stopped: kept, recorded: kept });
    assert.equal(answer.status, 200, answer.body);
    assert.ok(kept, "the cosigned checkpoint was written through the link");
    assert.ok(Deno.lstatSync(file).isFile, "the witness's state is its own file");
  } finally {
    await Deno.remove(victim);
  }
});

/** A witness's address that answers every add-checkpoint with 200 and these lines. */
function answering(lines: () => string[]): Deno.HttpServer<Deno.NetAddr> & { url: string } {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
    await request.arrayBuffer();
    return new Response(lines().map((l) => `${l}\n`).join(""));
  });
  return Object.assign(server, { url: `http://127.0.0.1:${server.addr.port}` });
}

Deno.test("a witness's answer does not spoil the log's witnessed checkpoint: a line under the log's own key, or a cosignature of an older checkpoint, is not kept", async () => {
  const { log } = await tempLog();
  const key = (await log.key({ create: true }))!;
  const honest = await witnessOf(log);
  const verifier = witnessVerifier(honest.verifier.vkey);
  const policy = { logs: [key.verifier], witnesses: [verifier], quorum: 1 };
  await using real = serveWitness(honest, { port: 0 });
  await log.append([fakeLeaf(0)]);
  const first = await cosignLatest(log, [real.url], { witnesses: [verifier] });
  assert.ok(checkCheckpoint(first.note, policy).ok);
  const old = parseNote(first.note).signatures.find((s) => s.name === verifier.name)!.line;
  // a line under the log's name and key ID whose signature is not the log's
  const logLine = signatureLine(key.verifier.name, key.verifier.keyId, new Uint8Array(64));
  await using rogue = answering(() => [logLine]);
  await log.append([fakeLeaf(1)]);
  await cosignLatest(log, [rogue.url], { witnesses: [verifier] });
  const afterRogue = checkCheckpoint((await log.witnessed())!, { ...policy, witnesses: [], quorum: 0 });
  tally.add("a witness answering with a line under the log's key", {
    stopped: afterRogue.ok,
    recorded: true,
  });
  assert.ok(afterRogue.ok, JSON.stringify(afterRogue));
  // the honest witness's cosignature of size 1, replayed for the checkpoint of size 2
  await using replay = answering(() => [old]);
  await cosignLatest(log, [replay.url], { witnesses: [verifier] });
  const afterReplay = checkCheckpoint((await log.witnessed())!, policy);
  tally.add("an old cosignature replayed for a newer checkpoint", {
    stopped: afterReplay.ok,
    recorded: true,
  });
  assert.ok(afterReplay.ok, JSON.stringify(afterReplay));
  // the honest witness still cosigns the newer checkpoint, and that one is kept
  const second = await cosignLatest(log, [real.url], { witnesses: [verifier] });
  assert.ok(checkCheckpoint(second.note, policy).ok);
  assert.equal(await log.witnessed(), second.note);
  assert.equal(parseCheckpoint(parseNote(second.note).text).size, 2);
});

Deno.test("the witness attack counts", () => {
  console.log(tally.line());
  assert.equal(tally.missed.length, 0, tally.line());
});

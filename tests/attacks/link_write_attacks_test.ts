/**
 * Attacks on the files a command writes into a run folder it did not make: a run copied in from a bundle or a
 * shared store, with `log.tlog-proof`, `bundle.json` or `evidence/attestation.dsse.json` put there as a link
 * to a file of the user's (here `victim.txt`, outside the store). Each was written with `Deno.writeTextFile`,
 * which follows the link: `prove log proof RUN --write`, or a signature of the run, wrote the proof or the
 * envelope over the user's file. Now each is written to a new name and renamed over the link (`replaceFile`):
 * the link is replaced, the user's file is left as it was. So are the log's scratch files (`.log/tlog/checkpoint.tmp`,
 * `.log/witnessed.tmp`), made new at each append and cosign, and its tiles.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { FileRunRecord } from "../../lib/provevi/store/file_run_record.ts";
import type { FileStore } from "../../lib/provevi/store/file_store.ts";
import { runProof } from "../../lib/provevi/runs/store_log.ts";
import { attestRun } from "../../lib/provevi/evidence/attestation.ts";
import { readSigningKey, writeKeyPair } from "../../lib/provevi/evidence/signing_key.ts";
import { SAMPLE_RUN_ID } from "../provevi/_sample_run.ts";
import { appendAssessmentLine } from "../../lib/provevi/evidence/assessments_file.ts";
import { ProveviError } from "../../lib/provevi/evidence/errors.ts";
import { isolateBytes } from "../_memory.ts";
import { parseCheckpoint } from "../../lib/provevi/log/checkpoint.ts";
import { parseNote } from "../../lib/provevi/log/note.ts";
import { cosignLatest } from "../../lib/provevi/log/witness_client.ts";
import { serveWitness } from "../../lib/provevi/log/witness_server.ts";
import { fakeLeaf, tempLog, witnessOf } from "../provevi/log/_log_fixtures.ts";
import { sampleRun } from "./_setup.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("links at the files a command writes");

const VICTIM = "the user's own file\n";

/** A sealed run in a file store, and a victim file beside the store that a planted link names. */
async function planted(
  file: string,
): Promise<{ dir: string; folder: string; victim: string; store: FileStore }> {
  const { dir, folder, store } = await sampleRun("attack-link-write-", { open: true });
  const victim = join(dir, "victim.txt");
  await Deno.writeTextFile(victim, VICTIM);
  await Deno.remove(join(folder, file)).catch(() => {});
  await Deno.symlink(victim, join(folder, file));
  return { dir, folder, victim, store };
}

/** Counts one case: stopped when the victim is as it was; recorded when the path now holds a plain file. */
async function count(name: string, at: { victim: string; path: string }): Promise<void> {
  const intact = await Deno.readTextFile(at.victim) === VICTIM;
  const info = await Deno.lstat(at.path);
  tally.add(name, { stopped: intact, recorded: info.isFile && !info.isSymlink });
  assert.ok(intact, `${name}: the victim's file was written`);
  assert.ok(info.isFile, `${name}: the path holds no plain file`);
}

Deno.test("runProof --write replaces a log.tlog-proof planted as a link, and leaves the file it names alone", async () => {
  const { dir, folder, victim, store } = await planted("log.tlog-proof");
  try {
    const proof = await runProof(store, SAMPLE_RUN_ID, { write: true });
    await count("log.tlog-proof as a link", { victim, path: join(folder, "log.tlog-proof") });
    assert.equal(await Deno.readTextFile(join(folder, "log.tlog-proof")), proof);
  } finally {
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runProof --write and signing a run write over a folder planted as log.tlog-proof or the attestation", async () => {
  const { dir, folder, store } = await planted("log.tlog-proof");
  try {
    for (const name of ["log.tlog-proof", "evidence/attestation.dsse.json"]) {
      await Deno.remove(join(folder, name)).catch(() => {});
      await Deno.mkdir(join(folder, name, "inside"), { recursive: true });
    }
    // a folder at the name failed every write of the proof (prove log proof --write, prove log wait) and the seal
    const proof = await runProof(store, SAMPLE_RUN_ID, { write: true }).catch((e: Error) => e.message);
    const key = join(dir, "signing.key");
    await writeKeyPair(key);
    const signed = await attestRun(new FileRunRecord(SAMPLE_RUN_ID, folder), await readSigningKey(key))
      .then(() => "signed", (e: Error) => e.message);
    const files = ["log.tlog-proof", "evidence/attestation.dsse.json"].map((n) =>
      Deno.lstatSync(join(folder, n)).isFile
    );
    tally.add("log.tlog-proof and the attestation as folders", {
      stopped: files.every((f) => f),
      recorded: signed === "signed" && files[0] === true,
    });
    assert.equal(await Deno.readTextFile(join(folder, "log.tlog-proof")), proof);
    assert.equal(signed, "signed");
    assert.deepEqual(files, [true, true]);
    // each folder is kept, whole, beside the run's files (evidence/ takes no file it does not name)
    const moved = [...Deno.readDirSync(folder)].filter((e) => /\.moved-/.test(e.name) && e.isDirectory);
    assert.equal(moved.length, 2);
  } finally {
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("signing a run replaces an attestation planted as a link, and leaves the file it names alone", async () => {
  const { dir, folder, victim, store } = await planted("evidence/attestation.dsse.json");
  try {
    const key = join(dir, "signing.key");
    await writeKeyPair(key);
    await attestRun(new FileRunRecord(SAMPLE_RUN_ID, folder), await readSigningKey(key));
    await count("evidence/attestation.dsse.json as a link", {
      victim,
      path: join(folder, "evidence", "attestation.dsse.json"),
    });
    const left = [...Deno.readDirSync(folder)].map((e) => e.name).filter((n) => n.endsWith(".tmp"));
    assert.deepEqual(left, []);
  } finally {
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

const ENTRY = {
  run_id: SAMPLE_RUN_ID,
  seq: null,
  span_id: null,
  name: "correct",
  value: true,
  rationale: null,
  source: "ada",
  created_at: "2026-12-01T00:00:00.000000Z",
};

Deno.test("an assessment is not added through a hard link to another file, nor after reading a sparse file whole", async () => {
  const dir = await Deno.makeTempDir({ prefix: "attack-link-write-" });
  try {
    const folder = join(dir, "run");
    await Deno.mkdir(folder);
    const victim = join(dir, "victim.txt");
    await Deno.writeTextFile(victim, VICTIM);
    const path = join(folder, "assessments.jsonl");
    await Deno.link(victim, path);
    const linked = await appendAssessmentLine(folder, "0".repeat(64), ENTRY).then(() => null, (e) => e);
    const intact = await Deno.readTextFile(victim) === VICTIM;
    tally.add("assessments.jsonl as a hard link", {
      stopped: intact,
      recorded: linked instanceof ProveviError,
    });
    assert.ok(intact && linked instanceof ProveviError, String(linked));
    await Deno.remove(path);
    using file = await Deno.open(path, { write: true, create: true });
    await file.truncate(2 * 1024 ** 3);
    const before = isolateBytes();
    const big = await appendAssessmentLine(folder, "0".repeat(64), ENTRY).then(() => null, (e) => e);
    const grew = isolateBytes() - before;
    const refused = big instanceof ProveviError && /more than/.test(big.message);
    tally.add("a sparse 2 GiB assessments.jsonl", {
      stopped: refused && grew < 256 * 1024 ** 2,
      recorded: refused,
    });
    assert.ok(refused, String(big));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the log's scratch files planted as links (checkpoint.tmp, witnessed.tmp) are replaced, and the files they name left alone", async () => {
  const { log, dir } = await tempLog();
  const victims = { checkpoint: join(dir, "victim-1.txt"), witnessed: join(dir, "victim-2.txt") };
  try {
    await log.append([fakeLeaf(0)]);
    const witness = await witnessOf(log);
    await using server = serveWitness(witness, { port: 0 });
    for (const victim of Object.values(victims)) await Deno.writeTextFile(victim, VICTIM);
    await Deno.symlink(victims.checkpoint, join(log.dir, "tlog", "checkpoint.tmp"));
    await Deno.symlink(victims.witnessed, join(log.dir, "witnessed.tmp"));
    await log.append([fakeLeaf(1)]);
    const { replies } = await cosignLatest(log, [server.url]);
    assert.equal(replies[0]!.status, 200, replies[0]!.text);
    for (const [name, victim] of Object.entries(victims)) {
      const kept = await Deno.readTextFile(victim) === VICTIM;
      tally.add(`a link at the log's ${name}.tmp`, { stopped: kept, recorded: kept });
      assert.ok(kept, `${victim} was written through the link at ${name}.tmp`);
    }
    const witnessed = (await log.witnessed())!;
    assert.equal(parseCheckpoint(parseNote(witnessed).text).size, 2);
    assert.ok(parseNote(witnessed).signatures.some((s) => s.name === witness.verifier.name));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the log's next tiles planted as links are not written through: the files they name are left alone", async () => {
  const { log, dir } = await tempLog();
  try {
    await log.append([fakeLeaf(0)]);
    const planted = ["tile/0/000.p/2", "tile/entries/000.p/2"];
    for (const [i, rel] of planted.entries()) {
      await Deno.writeTextFile(join(dir, `victim-${i}.txt`), VICTIM);
      await Deno.symlink(join(dir, `victim-${i}.txt`), join(log.dir, "tlog", rel));
    }
    await log.append([fakeLeaf(1)]);
    for (const [i, rel] of planted.entries()) {
      const kept = await Deno.readTextFile(join(dir, `victim-${i}.txt`)) === VICTIM;
      tally.add(`a link at the log's next ${rel}`, { stopped: kept, recorded: kept });
      assert.ok(kept, `the tile ${rel} was written through its link`);
      assert.ok(Deno.lstatSync(join(log.dir, "tlog", rel)).isFile, `${rel} is the log's own file`);
    }
    assert.equal(parseCheckpoint(parseNote((await log.checkpoint())!).text).size, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("links at the files a command writes: the tally", () => {
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});

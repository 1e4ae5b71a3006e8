import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { parseCheckpoint } from "../../../lib/provevi/log/checkpoint.ts";
import { FileLog } from "../../../lib/provevi/log/file_log.ts";
import { proveConsistency, proveRun } from "../../../lib/provevi/log/log_proofs.ts";
import { leafHash, verifyConsistency, verifyInclusion } from "../../../lib/provevi/log/merkle.ts";
import { parseNote } from "../../../lib/provevi/log/note.ts";
import { leafBytes } from "../../../lib/provevi/log/run_leaf.ts";
import { checkCheckpoint } from "../../../lib/provevi/log/trust_policy.ts";
import { auditStoreLog } from "../../../lib/provevi/runs/store_log.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { leafOfSeal } from "../../../lib/provevi/log/run_leaf.ts";
import { writeRun } from "../_run.ts";
import { fakeLeaf, tempLog } from "./_log_fixtures.ts";

Deno.test("a file log appends leaves one by one and in batches, and proves each against a signed checkpoint", async () => {
  const { log } = await tempLog();
  const leaves = Array.from({ length: 600 }, (_, i) => fakeLeaf(i));
  const r1 = await log.append(leaves.slice(0, 1));
  assert.deepEqual(r1.indexes, [0]);
  await log.append(leaves.slice(1, 300));
  for (const l of leaves.slice(300, 305)) await log.append([l]);
  const last = await log.append(leaves.slice(305));
  assert.equal(last.size, 600);
  const key = (await log.key())!;
  const checked = checkCheckpoint(last.checkpoint, { logs: [key.verifier], witnesses: [], quorum: 0 });
  assert.ok(checked.ok);
  const { root, size } = parseCheckpoint(parseNote(last.checkpoint).text);
  for (const i of [0, 1, 255, 256, 299, 303, 599]) {
    const proof = await proveRun(log, leaves[i]!.run_id);
    assert.equal(proof.index, i);
    assert.ok(verifyInclusion(leafHash(leafBytes(leaves[i]!)), i, size, proof.proof, root));
  }
  const c = await proveConsistency(log, 300, 600);
  assert.ok(verifyConsistency(300, 600, c.proof, c.oldRoot, root));
  assert.equal(await log.indexOf("run-none"), null);
});

Deno.test("a leaf already in the log is found by its run, and a pending leaf of a killed appender is appended by the next one", async () => {
  const { log } = await tempLog();
  await log.append([fakeLeaf(0)]);
  // An appender killed after writing its pending file and tiles, before its commit: the run was not sealed, so
  // nothing is appended for it, and the log goes on from its committed size.
  const prepared = await log.prepare([fakeLeaf(1)], null);
  prepared.abort();
  const next = await log.append([fakeLeaf(2)]);
  assert.deepEqual(next.indexes, [1]);
  assert.equal(await log.indexOf(fakeLeaf(2).run_id), 1);
  assert.equal(await log.indexOf(fakeLeaf(1).run_id), null);
});

Deno.test("a run sealed by an appender killed before its commit is appended by the next one, once, and the audit is clean", async () => {
  const { dir } = await tempLog();
  const runs = join(dir, "runs");
  const store = new FileStore({ runs });
  await writeRun(join(runs, "run-20261201T000000Z-000000a0"), "run-20261201T000000Z-000000a0");
  // A run whose manifest took its name, by an appender killed before it renamed the checkpoint: its leaf is only
  // in the pending file.
  const id = "run-20261201T000000Z-000000a1";
  const unlogged = new FileStore({ runs });
  Object.defineProperty(unlogged, "log", { value: undefined });
  await writeRun(join(runs, id), id, { store: unlogged });
  const manifest = await Deno.readTextFile(join(runs, id, "evidence", "manifest.json"));
  const killed = await store.log.prepare([leafOfSeal(manifest, null)], join(runs, id));
  killed.abort();
  assert.equal(await store.log.indexOf(id), null);
  await writeRun(join(runs, "run-20261201T000000Z-000000a2"), "run-20261201T000000Z-000000a2");
  assert.equal(await store.log.indexOf(id), 1);
  assert.equal(await store.log.indexOf("run-20261201T000000Z-000000a2"), 2);
  // The pending file was blanked at the commit: the next append takes nothing of it again.
  await writeRun(join(runs, "run-20261201T000000Z-000000a3"), "run-20261201T000000Z-000000a3");
  assert.equal(await store.log.indexOf("run-20261201T000000Z-000000a3"), 3);
  assert.equal(parseCheckpoint(parseNote((await store.log.checkpoint())!).text).size, 4);
  assert.deepEqual((await auditStoreLog(store)).problems, []);
});

Deno.test("a seal in the runs root writes no pending file: an appender killed before its commit leaves its entry bundle, from which the next one appends the run", async () => {
  const { dir } = await tempLog();
  const runs = join(dir, "runs");
  const store = new FileStore({ runs });
  await writeRun(join(runs, "run-20261201T000000Z-000000b0"), "run-20261201T000000Z-000000b0");
  const pending = join(store.log.dir, "pending.jsonl");
  await assert.rejects(Deno.stat(pending), Deno.errors.NotFound);
  const id = "run-20261201T000000Z-000000b1";
  const unlogged = new FileStore({ runs });
  Object.defineProperty(unlogged, "log", { value: undefined });
  await writeRun(join(runs, id), id, { store: unlogged });
  const manifest = await Deno.readTextFile(join(runs, id, "evidence", "manifest.json"));
  const killed = await store.log.prepare([leafOfSeal(manifest, null)], join(runs, id));
  assert.deepEqual(killed.files.filter((f) => f.endsWith("pending.jsonl")), []);
  killed.abort();
  await assert.rejects(Deno.stat(pending), Deno.errors.NotFound);
  await writeRun(join(runs, "run-20261201T000000Z-000000b2"), "run-20261201T000000Z-000000b2");
  assert.equal(await store.log.indexOf(id), 1);
  assert.equal(await store.log.indexOf("run-20261201T000000Z-000000b2"), 2);
  assert.deepEqual((await auditStoreLog(store)).problems, []);
});

Deno.test("a run sealed in a folder of its own is named in the pending file, and appended by the next appender when its appender was killed", async () => {
  const { dir } = await tempLog();
  const runs = join(dir, "runs");
  const store = new FileStore({ runs });
  const id = "run-20261201T000000Z-000000c1";
  const elsewhere = join(dir, "elsewhere", id);
  await Deno.mkdir(join(dir, "elsewhere"));
  const unlogged = new FileStore({ runs });
  Object.defineProperty(unlogged, "log", { value: undefined });
  await writeRun(elsewhere, id, { store: unlogged });
  const manifest = await Deno.readTextFile(join(elsewhere, "evidence", "manifest.json"));
  const killed = await store.log.prepare([leafOfSeal(manifest, null)], elsewhere);
  killed.abort();
  assert.match(await Deno.readTextFile(join(store.log.dir, "pending.jsonl")), /000000c1/);
  await writeRun(join(runs, "run-20261201T000000Z-000000c2"), "run-20261201T000000Z-000000c2");
  assert.equal(await store.log.indexOf(id), 0);
  assert.equal(await store.log.indexOf("run-20261201T000000Z-000000c2"), 1);
  // Blanked at the commit: the next append takes nothing of it again, and writes it no more.
  assert.equal((await Deno.readTextFile(join(store.log.dir, "pending.jsonl"))).trim(), "");
  await writeRun(join(runs, "run-20261201T000000Z-000000c3"), "run-20261201T000000Z-000000c3");
  assert.equal(await store.log.indexOf("run-20261201T000000Z-000000c3"), 2);
});

Deno.test("the last run in the log whose manifest lost its name in a crash (its checkpoint's rename kept) gets it from the next appender", async () => {
  const { dir } = await tempLog();
  const runs = join(dir, "runs");
  const store = new FileStore({ runs });
  const id = "run-20261201T000000Z-000000d1";
  await writeRun(join(runs, id), id);
  await Deno.rename(join(runs, id, "evidence", "manifest.json"), join(runs, id, ".manifest.json.tmp"));
  await writeRun(join(runs, "run-20261201T000000Z-000000d2"), "run-20261201T000000Z-000000d2");
  assert.ok((await Deno.stat(join(runs, id, "evidence", "manifest.json"))).isFile);
  assert.deepEqual((await auditStoreLog(store)).problems, []);
});

Deno.test("a file log keeps the partial tiles of every checkpoint until their full tile, as C2SP tlog-tiles asks", async () => {
  const { log } = await tempLog();
  const leaves = Array.from({ length: 260 }, (_, i) => fakeLeaf(i));
  await log.append(leaves.slice(0, 3));
  const old = (await log.checkpoint())!;
  await log.append(leaves.slice(3, 5));
  const tiles = join(log.dir, "tlog", "tile");
  // A client holding the checkpoint of size 3 fetches the tile of width 3, and proves leaf 1 against it.
  assert.ok((await Deno.stat(join(tiles, "0", "000.p", "3"))).isFile);
  assert.ok((await Deno.stat(join(tiles, "entries", "000.p", "3"))).isFile);
  const proof = await proveRun(log, leaves[1]!.run_id, { checkpoint: old });
  const { root } = parseCheckpoint(parseNote(old).text);
  assert.ok(verifyInclusion(leafHash(leafBytes(leaves[1]!)), 1, 3, proof.proof, root));
  await log.append(leaves.slice(5));
  // The full tile is there: its partial ones go.
  assert.ok((await Deno.stat(join(tiles, "0", "000"))).isFile);
  await assert.rejects(Deno.stat(join(tiles, "0", "000.p")), Deno.errors.NotFound);
  await assert.rejects(Deno.stat(join(tiles, "entries", "000.p")), Deno.errors.NotFound);
});

Deno.test("a run is found through the run index, and a log whose index was lost is read from its entries and indexed again", async () => {
  const { log: first, dir } = await tempLog();
  await first.append(Array.from({ length: 300 }, (_, i) => fakeLeaf(i)));
  assert.equal(await first.indexOf(fakeLeaf(270).run_id), 270);
  first.close();
  const index = join(first.dir, "index.db");
  assert.deepEqual(indexRows(index), { rows: 300, size: 300 });
  // The index is lost (a copy of the log without it): the entries say where each run is.
  for (const suffix of ["", "-wal", "-shm"]) await Deno.remove(index + suffix).catch(() => {});
  const log = new FileLog(join(dir, "runs"));
  assert.equal(await log.indexOf(fakeLeaf(270).run_id), 270);
  assert.equal(await log.indexOf("run-none"), null);
  await log.append([fakeLeaf(300)]); // the next appender indexes every leaf again
  assert.deepEqual(indexRows(index), { rows: 301, size: 301 });
  assert.equal(await log.indexOf(fakeLeaf(300).run_id), 300);
  log.close();
});

function indexRows(path: string): { rows: number; size: number } {
  const db = new DatabaseSync(path);
  try {
    const rows = db.prepare("SELECT count(*) AS n FROM provevi_log_index").get() as { n: number };
    const size = db.prepare("SELECT size FROM provevi_log_indexed").get() as { size: number };
    return { rows: Number(rows.n), size: Number(size.size) };
  } finally {
    db.close();
  }
}

Deno.test("two writers of one file log, each keeping its tree between appends, append by turns into one tree whose every checkpoint extends the last", async () => {
  const { dir, log: a } = await tempLog();
  const b = new FileLog(join(dir, "runs"));
  const leaves = Array.from({ length: 530 }, (_, i) => fakeLeaf(i));
  const checkpoints: string[] = [];
  // Runs of appends by one writer, then the other: each finds the checkpoint it kept replaced, and reads the
  // tree again; across tile boundaries (256, 512) and in batches.
  const turns = [[a, 3], [b, 1], [a, 250], [a, 1], [b, 4], [b, 1], [a, 255], [b, 14], [a, 1]] as const;
  let at = 0;
  for (const [writer, n] of turns) {
    for (let i = 0; i < n; i++) checkpoints.push((await writer.append([leaves[at++]!])).checkpoint);
  }
  await a.append(leaves.slice(at));
  const fresh = new FileLog(join(dir, "runs"));
  const { root, size } = parseCheckpoint(parseNote((await fresh.checkpoint())!).text);
  assert.equal(size, 530);
  for (const i of [0, 3, 4, 255, 256, 300, 511, 512, 529]) {
    const proof = await proveRun(fresh, leaves[i]!.run_id);
    assert.equal(proof.index, i);
    assert.ok(verifyInclusion(leafHash(leafBytes(leaves[i]!)), i, size, proof.proof, root));
  }
  for (const note of checkpoints.filter((_, i) => i % 37 === 0)) {
    const old = parseCheckpoint(parseNote(note).text);
    const c = await proveConsistency(fresh, old.size, size);
    assert.ok(verifyConsistency(old.size, size, c.proof, old.root, root), `from ${old.size}`);
  }
});

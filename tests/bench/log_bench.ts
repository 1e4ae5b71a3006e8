/**
 * The log of all runs (issue #28), each figure beside a reference measured in the same run:
 * - appends: runs per second into a file log and into a sqlite store's log, in batches of 1,000 (target
 *   ≥ 3,000/s), beside SHA-256 of the same leaves alone;
 * - an inclusion proof of a run in a file log of 1,000,000 leaves, found by its run ID, from the tiles on disk
 *   (target < 5 ms), beside the same proof computed from its tiles held in memory (no run index, no files: the
 *   hashing of the tiles' inner levels, the same in both); its check (target < 1 ms), beside checking the
 *   checkpoint's signature;
 * - the seal of a run signed and appended to the log, less an unsigned seal without a log (target ≤ 2 ms), in
 *   pairs in either order by turns;
 * - the time from a seal's start to its checkpoint: the seal is synchronous, so it returns with its run in a
 *   checkpoint (target: median ≤ 1 s), in the file store and in a sqlite store, beside the unsigned seal
 *   without a log.
 * @module
 */
import { join } from "node:path";
import type { Json } from "../../lib/provevi/evidence/event.ts";
import type { RunWriter, SealInfo } from "../../lib/provevi/store/store.ts";
import { readSigningKey, writeKeyPair } from "../../lib/provevi/evidence/signing_key.ts";
import { SqliteStore } from "../../lib/provevi/sqlite/sqlite_store.ts";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { EventChain } from "../../lib/provevi/evidence/chain.ts";
import { FileLog } from "../../lib/provevi/log/file_log.ts";
import { checkCheckpoint } from "../../lib/provevi/log/trust_policy.ts";
import { parseCheckpoint } from "../../lib/provevi/log/checkpoint.ts";
import { inclusionProof, leafHash, verifyInclusion } from "../../lib/provevi/log/merkle.ts";
import { TileHashes, tilesRead } from "../../lib/provevi/log/tiles.ts";
import { parseNote } from "../../lib/provevi/log/note.ts";
import { proveRun } from "../../lib/provevi/log/log_proofs.ts";
import { leafBytes, type RunLeaf } from "../../lib/provevi/log/run_leaf.ts";
import type { LogStorage } from "../../lib/provevi/log/log_storage.ts";
import { median, report } from "./_report.ts";
import { keptLog } from "./_log_tree.ts";

const leaf = (i: number): RunLeaf => ({
  run_id: `run-20261201T000000Z-${i.toString(16).padStart(8, "0")}`,
  manifest_sha256: i.toString(16).padStart(64, "0"),
  last_hash: (i + 1).toString(16).padStart(64, "0"),
  attestation_sha256: null,
});

/** Runs per second of appends in batches of 1,000. */
async function appendRate(log: LogStorage, from: number, n: number): Promise<number> {
  const t = performance.now();
  for (let i = from; i < from + n; i += 1000) {
    await log.append(Array.from({ length: 1000 }, (_, j) => leaf(i + j)));
  }
  return n / ((performance.now() - t) / 1000);
}

async function appends(dir: string): Promise<void> {
  const N = 20_000;
  const file = await appendRate(new FileLog(join(dir, "append-file")), 0, N);
  await using sqlite = new SqliteStore(join(dir, "append.db"), { runs: join(dir, "append-sqlite") });
  const rows = await appendRate(sqlite.log, 0, N);
  const t = performance.now();
  for (let i = 0; i < N; i++) leafHash(leafBytes(leaf(i)));
  const hashing = N / ((performance.now() - t) / 1000);
  report(
    "log appends, file log (batches of 1,000)",
    file,
    hashing,
    "runs/s",
    "≥ 3,000/s; reference: leaf hashing alone",
  );
  report(
    "log appends, sqlite log (batches of 1,000)",
    rows,
    hashing,
    "runs/s",
    "≥ 3,000/s; reference: leaf hashing alone",
  );
}

async function proofs(): Promise<void> {
  const N = 1_000_000;
  const { runs, madeSeconds } = await keptLog(N, leaf);
  if (madeSeconds !== null) {
    console.log(`(the log of 1,000,000 leaves was made in ${madeSeconds.toFixed(1)} s, and kept)`);
  }
  const log = new FileLog(runs);
  const note = (await log.checkpoint())!;
  const { root, size } = parseCheckpoint(parseNote(note).text);
  const policy = { logs: [(await log.key())!.verifier], witnesses: [], quorum: 0 };
  const proving: number[] = [];
  const checking: number[] = [];
  const inMemory: number[] = [];
  const memory = new TileHashes(); // the tiles of the proofs' paths, read before the reference is timed
  const signatures: number[] = [];
  for (let k = 0; k < 200; k++) {
    const i = Math.floor(Math.random() * N);
    let s = performance.now();
    const p = await proveRun(log, leaf(i).run_id);
    proving.push(performance.now() - s);
    s = performance.now();
    if (!verifyInclusion(leafHash(leafBytes(leaf(i))), i, size, p.proof, root)) throw new Error("bad proof");
    checking.push(performance.now() - s);
    const tiles = tilesRead(size, (at) => inclusionProof(i, size, at));
    const bytes = await log.readTiles(tiles.filter((t) => !memory.has(t)));
    tiles.filter((t) => !memory.has(t)).forEach((t, j) => memory.put(t, bytes[j]!));
    s = performance.now();
    const same = inclusionProof(i, size, memory.at);
    inMemory.push(performance.now() - s);
    if (same.length !== p.proof.length) throw new Error("another proof");
    s = performance.now();
    if (!checkCheckpoint(note, policy).ok) throw new Error("bad checkpoint");
    signatures.push(performance.now() - s);
  }
  report(
    "inclusion proof of a run, 1,000,000 leaves",
    median(proving),
    median(inMemory),
    "ms",
    "< 5 ms; reference: the same proof from its tiles held in memory",
  );
  report(
    "inclusion proof check",
    median(checking),
    median(signatures),
    "ms",
    "< 1 ms; reference: the checkpoint's signature check",
  );
}

/** Writes a small run and times its seal. */
async function sealOne(writer: RunWriter, info: SealInfo, keyid: string | null): Promise<number> {
  const chain = new EventChain(writer.runId);
  for (const type of ["run_created", "note_added", "run_completed"]) {
    const data: Record<string, Json> = type === "run_created" && keyid
      ? { signing_key: keyid }
      : { text: "x" };
    const next = chain.next({ type, component: "Bench", actor: "bench", data });
    await writer.append(next.line, next.event);
    chain.accept(next);
  }
  const t = performance.now();
  await writer.seal(info);
  return performance.now() - t;
}

async function seals(dir: string): Promise<void> {
  const keyPath = join(dir, "signing.key");
  const { keyid } = await writeKeyPair(keyPath);
  const signingKey = await readSigningKey(keyPath);
  const logged = new FileStore({ runs: join(dir, "logged") });
  const plain = new FileStore({ runs: join(dir, "plain") });
  Object.defineProperty(plain, "log", { value: undefined }); // a store without a log: the reference seal
  await using sqlite = new SqliteStore(join(dir, "seal.db"), { runs: join(dir, "sqlite") });
  const diffs: number[] = [];
  const withLog: number[] = [];
  const without: number[] = [];
  const rows: number[] = [];
  for (let i = 0; i < 60; i++) {
    const id = `run-20261201T000000Z-${i.toString(16).padStart(8, "0")}`;
    const signed = () => logged.openRun(id).then((w) => sealOne(w, { signingKey }, keyid));
    const bare = () => plain.openRun(id).then((w) => sealOne(w, {}, null));
    // In either order by turns, so that a machine busy with other work weighs on both alike.
    let a: number, b: number;
    if (i % 2) (a = await signed(), b = await bare());
    else (b = await bare(), a = await signed());
    diffs.push(a - b);
    withLog.push(a);
    without.push(b);
    rows.push(await sqlite.openRun(id).then((w) => sealOne(w, {}, null)));
  }
  report(
    "seal + signature + log append, less an unsigned seal without log",
    median(diffs),
    median(without),
    "ms",
    "≤ 2 ms; reference: the unsigned seal without log",
  );
  report(
    "seal start to its checkpoint, file store (synchronous)",
    median(withLog),
    median(without),
    "ms",
    "≤ 1 s median; reference: the unsigned seal without log",
  );
  report(
    "seal start to its checkpoint, sqlite store (synchronous)",
    median(rows),
    median(without),
    "ms",
    "≤ 1 s median; reference: the unsigned seal without log",
  );
}

/** Runs the benchmark and prints its lines. */
export async function main(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "bench-log-" });
  try {
    await appends(dir);
    await proofs();
    await seals(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) await main();

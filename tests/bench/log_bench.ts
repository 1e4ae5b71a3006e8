/**
 * The log of all runs (issue #28), each figure beside a reference measured in the same run:
 * - appends: runs per second into a file log in batches of 1,000 (target ≥ 3,000/s), beside SHA-256 of the same
 *   leaves alone;
 * - an inclusion proof in a log of 1,000,000 leaves from its tiles on disk (target < 5 ms) and its check (< 1 ms),
 *   beside reading one tile;
 * - the seal of a run with its log append, less an unsigned seal without a log (target ≤ 2 ms), and the time from
 *   a seal's start to its checkpoint (synchronous: the seal returns with it).
 * @module
 */
import { join } from "node:path";
import {
  EventChain,
  FileLog,
  FileStore,
  leafBytes,
  leafHash,
  parseCheckpoint,
  parseNote,
  proveRun,
  type RunLeaf,
  verifyInclusion,
} from "../../lib/provevi/mod.ts";
import { median, report } from "./_report.ts";

const leaf = (i: number): RunLeaf => ({
  run_id: `run-20261201T000000Z-${i.toString(16).padStart(8, "0")}`,
  manifest_sha256: i.toString(16).padStart(64, "0"),
  last_hash: (i + 1).toString(16).padStart(64, "0"),
  attestation_sha256: null,
});

async function sealOne(store: FileStore, runId: string): Promise<number> {
  const writer = await store.openRun(runId);
  const chain = new EventChain(runId);
  for (const type of ["run_created", "note_added", "run_completed"]) {
    const next = chain.next({ type, component: "Bench", actor: "bench", data: { text: "x" } });
    await writer.append(next.line, next.event);
    chain.accept(next);
  }
  const t = performance.now();
  await writer.seal();
  return performance.now() - t;
}

/** Runs the benchmark and prints its lines. */
export async function main(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "bench-log-" });
  const log = new FileLog(join(dir, "runs"));
  const N = 1_000_000;
  const batch = 1000;
  let t = performance.now();
  for (let i = 0; i < N; i += batch) await log.append(Array.from({ length: batch }, (_, j) => leaf(i + j)));
  const appendSeconds = (performance.now() - t) / 1000;
  t = performance.now();
  for (let i = 0; i < 100_000; i++) leafHash(leafBytes(leaf(i)));
  const hashSeconds = (performance.now() - t) / 1000 * (N / 100_000);
  report(
    "log appends (batches of 1,000)",
    N / appendSeconds,
    N / hashSeconds,
    "runs/s",
    "≥ 3,000/s; reference: leaf hashing alone",
  );
  const { root, size } = parseCheckpoint(parseNote((await log.checkpoint())!).text);
  const proofs: number[] = [];
  const checks: number[] = [];
  const reads: number[] = [];
  for (let k = 0; k < 40; k++) {
    const i = Math.floor(Math.random() * N);
    let s = performance.now();
    const p = await proveRun(log, leaf(i).run_id);
    proofs.push(performance.now() - s);
    s = performance.now();
    if (!verifyInclusion(leafHash(leafBytes(leaf(i))), i, size, p.proof, root)) throw new Error("bad proof");
    checks.push(performance.now() - s);
    s = performance.now();
    await log.readTiles([{ level: 0, index: Math.floor(i / 256), width: 256 }]);
    reads.push(performance.now() - s);
  }
  report(
    "inclusion proof, 1,000,000 leaves",
    median(proofs),
    median(reads),
    "ms",
    "< 5 ms; reference: one tile read",
  );
  report("inclusion proof check", median(checks), median(reads), "ms", "< 1 ms; reference: one tile read");
  const logged = new FileStore({ runs: join(dir, "logged") });
  const plain = new FileStore({ runs: join(dir, "plain") });
  Object.defineProperty(plain, "log", { value: undefined }); // a store without a log: the reference seal
  const diffs: number[] = [];
  const withLog: number[] = [];
  for (let i = 0; i < 40; i++) {
    const id = `run-20261201T000000Z-${i.toString(16).padStart(8, "0")}`;
    const a = await sealOne(logged, id);
    const b = await sealOne(plain, id);
    diffs.push(a - b);
    withLog.push(a);
  }
  report(
    "seal + log append, less a seal without log",
    median(diffs),
    median(withLog) - median(diffs),
    "ms",
    "≤ 2 ms; reference: the seal without log",
  );
  report(
    "seal start to its checkpoint (synchronous)",
    median(withLog),
    median(withLog),
    "ms",
    "≤ 1 s median",
  );
  await Deno.remove(dir, { recursive: true });
}

if (import.meta.main) await main();

/**
 * Attacks on what a reader takes whole of one payload: a sparse payload file of more than a gigabyte, a pack
 * whose one record claims more than the pack's cap (the single-record reader had no cap of its own), and a file
 * that grows while it is read. Each reader (`RunRecord.payload`, the one way the viewer, the MLflow copy,
 * provtrace, replay and the price table's re-check get a payload's bytes) refuses before it reads the bytes,
 * with an error that names the file and its size, and its memory stays bounded.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { FileRunRecord } from "../../lib/provevi/store/file_run_record.ts";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { listRuns } from "../../lib/provevi/runs/list_runs.ts";
import { verifyRun } from "../../lib/provevi/runs/verify_run.ts";
import type { TrustPolicy } from "../../lib/provevi/log/trust_policy.ts";
import { ProveviError } from "../../lib/provevi/evidence/errors.ts";
import { PACK_MAX_BYTES, packRecord, readPack } from "../../lib/provevi/evidence/payload_pack.ts";
import { readCapped, readCappedSync } from "../../lib/provevi/evidence/open_file.ts";
import { SAMPLE_RUN_ID } from "../provevi/_sample_run.ts";
import { readSpansFile, SPANS_FILE } from "../../lib/provevi/evidence/spans_file.ts";
import { liveTail } from "../../lib/provevi/viewer/live_tail.ts";
import { isolateBytes } from "../_memory.ts";
import { sampleRun } from "./_setup.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("capped evidence read attacks");

/** A sealed run of format 2, its folder, and the first payload its pack holds. */
async function packedRun(): Promise<{ dir: string; folder: string; pack: string; sha: string }> {
  const { dir, folder } = await sampleRun("attack-capped-");
  const pack = join(folder, "evidence", "payloads.pack");
  return { dir, folder, pack, sha: readPack(await Deno.readFile(pack)).records[0]!.sha256 };
}

/** Makes `path` a sparse file: `head`, then zeros up to `size` bytes, then `tail` (no disk is used for the zeros). */
async function sparse(path: string, size: number, parts: { head?: Uint8Array; tail?: Uint8Array } = {}) {
  using f = await Deno.open(path, { write: true, create: true, truncate: true });
  if (parts.head) await f.write(parts.head);
  await f.truncate(size);
  if (parts.tail) {
    await f.seek(size, Deno.SeekMode.Start);
    await f.write(parts.tail);
  }
}

/** The payload read, its error, and how much memory the read held. */
async function readPayload(folder: string, sha: string): Promise<{ error: unknown; grew: number }> {
  const before = isolateBytes();
  const error = await new FileRunRecord(SAMPLE_RUN_ID, folder).payload(sha).then(() => null, (e) => e);
  return { error, grew: isolateBytes() - before };
}

Deno.test("a sparse payload file past 1 GiB is refused by RunRecord.payload before a byte is read, naming its size", async () => {
  const run = await packedRun();
  // The pack no longer holds the payload, so the reader goes to its file: a sparse file of 1 GiB and a byte.
  const others = readPack(await Deno.readFile(run.pack)).records.filter((r) => r.sha256 !== run.sha);
  const packBytes = await Deno.readFile(run.pack);
  const kept = others.map((r) => packRecord(r.sha256, packBytes.subarray(r.offset, r.offset + r.size)));
  await Deno.writeFile(run.pack, new Uint8Array(kept.flatMap((k) => [...k])));
  await sparse(join(run.folder, "evidence", "payloads", run.sha), PACK_MAX_BYTES + 1);
  const { error, grew } = await readPayload(run.folder, run.sha);
  const named = error instanceof ProveviError && /holds 1073741825 bytes/.test(error.message);
  tally.add("a sparse 1 GiB + 1 payload file", { stopped: named, recorded: grew < 256 * 1024 * 1024 });
  assert.ok(named, String(error));
  assert.ok(grew < 256 * 1024 * 1024, `the read held ${grew} bytes`);
  await Deno.remove(run.dir, { recursive: true });
});

Deno.test("a pack past 1 GiB whose one record claims all of it is refused by the single-payload reader too, not read whole", async () => {
  const run = await packedRun();
  const head = new TextEncoder().encode(`${run.sha} ${PACK_MAX_BYTES + 1}\n`);
  await sparse(run.pack, head.length + PACK_MAX_BYTES + 1, { head, tail: new Uint8Array([0x0a]) });
  const { error, grew } = await readPayload(run.folder, run.sha);
  const named = error instanceof ProveviError &&
    /payloads\.pack holds \d+ bytes, more than/.test(error.message);
  tally.add("a sparse pack of one 1 GiB + 1 record", { stopped: named, recorded: grew < 256 * 1024 * 1024 });
  assert.ok(named, String(error));
  assert.ok(grew < 256 * 1024 * 1024, `the read held ${grew} bytes`);
  await Deno.remove(run.dir, { recursive: true });
});

Deno.test("a file that grows while it is read (another process appending without end) is refused at the cap, asynchronously and synchronously", async () => {
  const dir = await Deno.makeTempDir({ prefix: "attack-capped-" });
  const path = join(dir, "growing");
  await Deno.writeFile(path, new Uint8Array(16));
  // An appender of 64 KiB at a time, 256 MiB at most: the file grows past the cap while it is read.
  const append = `for i in $(seq 4096); do head -c 65536 /dev/zero; done >> '${path}'`;
  const child = new Deno.Command("sh", { args: ["-c", append] }).spawn();
  try {
    while ((await Deno.stat(path)).size < 1024 * 1024) await new Promise((r) => setTimeout(r, 10));
    const most = 8 * 1024 * 1024;
    for (
      const [name, read] of [["async", () => readCapped(path, most)], [
        "sync",
        () => Promise.resolve().then(() => readCappedSync(path, most)),
      ]] as const
    ) {
      const error = await read().then(() => null, (e) => e);
      const size = (await Deno.stat(path)).size;
      // It may still end below the cap if the appender is slow; only bytes past the cap must be refused.
      const stopped = error instanceof ProveviError ? /more than/.test(error.message) : size <= most;
      tally.add(`a growing file, read ${name}`, { stopped, recorded: stopped });
      assert.ok(stopped, `${name}: ${error}`);
    }
  } finally {
    child.kill("SIGKILL");
    await child.status;
    await Deno.remove(dir, { recursive: true });
  }
});

/** A named pipe at `path`, and how to free any reader left waiting on it (opening it both ways never waits). */
async function pipeAt(path: string): Promise<() => void> {
  await Deno.remove(path).catch(() => {});
  const made = await new Deno.Command("mkfifo", { args: [path] }).output();
  assert.ok(made.success, "mkfifo");
  return () => Deno.openSync(path, { read: true, write: true }).close();
}

/** The promise's value, or "waited" when it has not settled in a minute (a reader left waiting on a pipe). */
function withinAMinute<T>(work: Promise<T>): Promise<T | "waited"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const waited = new Promise<"waited">((resolve) => timer = setTimeout(() => resolve("waited"), 60_000));
  return Promise.race([work, waited]).finally(() => clearTimeout(timer));
}

/** A log policy that trusts no key: the check of `log.tlog-proof` runs, and names the checkpoint untrusted. */
const NO_LOG_KEY: TrustPolicy = { logs: [], witnesses: [], quorum: 0 };

const VERIFY_FILES: [string, string, string][] = [
  ["evidence/attestation.dsse.json", "attestation.unreadable", "sparse"],
  ["assessments.jsonl", "assessments.unreadable", "sparse"],
  ["log.tlog-proof", "log.proof_missing", "sparse"],
  ["assessments.jsonl", "assessments.unreadable", "pipe"],
  ["log.tlog-proof", "log.proof_missing", "pipe"],
  // found by redteam5: the pin was read whole after its look (a plain file, however large)
  ["bundle.json", "bundle.unreadable", "sparse"],
];

for (const [file, code, kind] of VERIFY_FILES) {
  Deno.test(`prove verify answers a ${kind === "sparse" ? "sparse 2 GiB" : "named pipe as"} ${file} with ${code}, without reading it`, async () => {
    const run = await packedRun();
    const path = join(run.folder, file);
    const free = kind === "pipe" ? await pipeAt(path) : null;
    if (kind === "sparse") await sparse(path, 2 * 1024 ** 3);
    const before = isolateBytes();
    const check = await withinAMinute(
      verifyRun(new FileRunRecord(SAMPLE_RUN_ID, run.folder), { log: NO_LOG_KEY }),
    );
    const grew = isolateBytes() - before;
    free?.();
    const codes = check === "waited" ? ["(waited a minute)"] : check.problems.map((p) => p.code);
    const stopped = codes.includes(code) && grew < 256 * 1024 * 1024;
    tally.add(`verify, ${kind} ${file}`, { stopped, recorded: check !== "waited" });
    assert.ok(stopped, `${codes.join(", ")}; grew ${grew} bytes`);
    await Deno.remove(run.dir, { recursive: true });
  });
}

const LIST_FILES: [string, string][] = [["events.jsonl", "pipe"], ["manifest.json", "pipe"], [
  "events.jsonl",
  "sparse",
]];
for (const [file, kind] of LIST_FILES) {
  Deno.test(`prove list lists a run whose ${file} is a ${kind === "pipe" ? "named pipe" : "sparse 2 GiB file"}, without waiting on it or reading it whole`, async () => {
    const run = await packedRun();
    const path = join(run.folder, "evidence", file);
    const free = kind === "pipe" ? await pipeAt(path) : null;
    if (kind === "sparse") await sparse(path, 2 * 1024 ** 3);
    const before = isolateBytes();
    const list = await withinAMinute(listRuns(new FileStore({ runs: join(run.dir, "runs") })));
    const grew = isolateBytes() - before;
    free?.();
    const listed = list !== "waited" && list.runs.some((r) => r.run_id === SAMPLE_RUN_ID);
    tally.add(`list, ${kind} ${file}`, { stopped: listed && grew < 256 * 1024 * 1024, recorded: listed });
    assert.ok(listed, `the listing ${list === "waited" ? "waited a minute" : "lacks the run"}`);
    assert.ok(grew < 256 * 1024 * 1024, `the listing held ${grew} bytes`);
    await Deno.remove(run.dir, { recursive: true });
  });
}

Deno.test("a sparse 2 GiB spans.jsonl is refused by its reader (the trace's spans), not read whole", async () => {
  const run = await packedRun();
  await sparse(join(run.folder, SPANS_FILE), 2 * 1024 ** 3);
  const before = isolateBytes();
  const error = await readSpansFile(run.folder).then(() => null, (e) => e);
  const grew = isolateBytes() - before;
  const named = error instanceof ProveviError &&
    /spans\.jsonl holds \d+ bytes, more than/.test(error.message);
  tally.add("a sparse spans.jsonl", { stopped: named, recorded: grew < 256 * 1024 * 1024 });
  assert.ok(named, String(error));
  assert.ok(grew < 256 * 1024 * 1024, `the read held ${grew} bytes`);
  await Deno.remove(run.dir, { recursive: true });
});

Deno.test("prove ui's live tail of a running run whose events.jsonl is a named pipe stops when asked, not waiting on the pipe", async () => {
  const run = await packedRun();
  await Deno.remove(join(run.folder, "evidence", "manifest.json"));
  const free = await pipeAt(join(run.folder, "evidence", "events.jsonl"));
  const stop = new AbortController();
  const tail = (async () => {
    const items = [];
    for await (
      const item of liveTail(new FileRunRecord(SAMPLE_RUN_ID, run.folder), {
        level: "bodies",
        signal: stop.signal,
        pollMs: 20,
      })
    ) items.push(item);
    return items;
  })();
  setTimeout(() => stop.abort(), 300);
  const ended = await withinAMinute(tail);
  free();
  await tail;
  tally.add("live tail, pipe events.jsonl", { stopped: ended !== "waited", recorded: ended !== "waited" });
  assert.notEqual(ended, "waited", "the tail waited a minute on the pipe");
  await Deno.remove(run.dir, { recursive: true });
});

Deno.test("capped evidence read attacks: the tally", () => {
  console.log(tally.line());
  assert.equal(tally.missed.length, 0, tally.line());
});

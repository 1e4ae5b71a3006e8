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
import { FileRunRecord, FileStore } from "../../lib/provevi/store/mod.ts";
import { ProveviError } from "../../lib/provevi/evidence/errors.ts";
import { PACK_MAX_BYTES, packRecord, readPack } from "../../lib/provevi/evidence/payload_pack.ts";
import { readCapped, readCappedSync } from "../../lib/provevi/store/capped_read.ts";
import { SAMPLE_RUN_ID, writeSampleRun } from "../provevi/_sample_run.ts";
import { isolateBytes } from "../_memory.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("capped payload read attacks");

/** A sealed run of format 2, its folder, and the first payload its pack holds. */
async function packedRun(): Promise<{ dir: string; folder: string; pack: string; sha: string }> {
  const dir = await Deno.makeTempDir({ prefix: "attack-capped-" });
  const store = new FileStore({ runs: join(dir, "runs") });
  await writeSampleRun(await store.openRun(SAMPLE_RUN_ID));
  await store.close();
  const folder = join(dir, "runs", SAMPLE_RUN_ID);
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

Deno.test("capped payload read attacks: the tally", () => {
  console.log(tally.line());
  assert.equal(tally.missed.length, 0, tally.line());
});

/**
 * Attacks on `payloads.pack` (manifest format 2), the small payloads of a run as records of one file: every
 * byte flipped, the pack cut at every length, a record past the end, two records of one hash, a record the
 * manifest does not name, a payload in neither place, a link in place of the pack, a pack in a run of format 1,
 * and a forger who rewrites a record's header to its new bytes. Each is caught by `prove verify` and named, no
 * reader hands out changed bytes, and nothing crashes a reader.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import canonicalize from "canonicalize";
import { verifyRun } from "../../lib/provevi/runs/verify_run.ts";
import { FileRunRecord } from "../../lib/provevi/store/file_run_record.ts";
import { concatBytes } from "../../lib/provevi/evidence/bytes.ts";
import { sha256Hex } from "../../lib/provevi/evidence/hash.ts";
import { packRecord, readPack } from "../../lib/provevi/evidence/payload_pack.ts";
import { SAMPLE_RUN_ID } from "../provevi/_sample_run.ts";
import { copyFolder } from "../_files.ts";
import { sampleRun } from "./_setup.ts";
import { Tally } from "./_tally.ts";
import { isolateBytes } from "../_memory.ts";
import { PackWriter } from "../../lib/provevi/store/pack_file.ts";
import { PACK_MAX_BYTES, packRecordSize } from "../../lib/provevi/evidence/payload_pack.ts";

const tally = new Tally("payload pack attacks");

/** A sealed run of format 2, written by the file store as provr writes one, and a place for its copies. */
async function packedRun(): Promise<{ dir: string; folder: string }> {
  const { dir, folder, manifest } = await sampleRun("attack-pack-");
  assert.equal(manifest.format, "provevi-manifest/2");
  return { dir, folder };
}

const packOf = (folder: string) => join(folder, "evidence", "payloads.pack");

/** Copies the run, changes the copy, and gives its problems' codes and files, and the copy. */
async function attacked(
  run: { dir: string; folder: string },
  change: (folder: string) => Promise<void>,
): Promise<{ codes: string[]; files: (string | null)[]; copy: string }> {
  const copy = join(await Deno.makeTempDir({ dir: run.dir }), SAMPLE_RUN_ID);
  await copyFolder(run.folder, copy);
  await change(copy);
  const check = await verifyRun(new FileRunRecord(SAMPLE_RUN_ID, copy));
  return { codes: check.problems.map((p) => p.code), files: check.problems.map((p) => p.file), copy };
}

/** True when no reader of the copy hands out bytes that do not hash to the SHA-256 asked for. */
async function readersRefuse(copy: string, shas: readonly string[]): Promise<boolean> {
  const record = new FileRunRecord(SAMPLE_RUN_ID, copy);
  for (const sha of shas) {
    const bytes = await record.payload(sha).catch(() => null);
    if (bytes !== null && sha256Hex(bytes) !== sha) return false;
  }
  return true;
}

Deno.test("every byte of payloads.pack flipped is caught and named in payloads.pack, and no reader hands out the changed bytes", async () => {
  const run = await packedRun();
  const pack = await Deno.readFile(packOf(run.folder));
  const shas = readPack(pack).records.map((r) => r.sha256);
  for (let at = 0; at < pack.length; at++) {
    const { codes, files, copy } = await attacked(run, async (f) => {
      const bytes = pack.slice();
      bytes[at] = bytes[at]! ^ (at % 2 ? 0x01 : 0x20);
      await Deno.writeFile(packOf(f), bytes);
    });
    const named = files.includes("payloads.pack");
    tally.add(`byte ${at} flipped`, {
      stopped: codes.length > 0,
      recorded: named && await readersRefuse(copy, shas),
    });
    assert.ok(named, `byte ${at}: ${codes}`);
  }
  await Deno.remove(run.dir, { recursive: true });
});

Deno.test("payloads.pack cut at every length is pack.broken or a missing payload, and the records before the cut still read", async () => {
  const run = await packedRun();
  const pack = await Deno.readFile(packOf(run.folder));
  const records = readPack(pack).records;
  for (let length = 0; length < pack.length; length += 3) {
    const { codes, copy } = await attacked(run, (f) => Deno.writeFile(packOf(f), pack.slice(0, length)));
    const whole = records.filter((r) => r.offset + r.size + 1 <= length);
    const read = await Promise.all(
      whole.map((r) =>
        new FileRunRecord(SAMPLE_RUN_ID, copy).payload(r.sha256).then(() => true, () => false)
      ),
    );
    // A cut between two records leaves whole records, and the payloads past it missing; any other is broken.
    const between = length === 0 || records.some((r) => r.offset + r.size + 1 === length);
    const stopped = codes.includes("payload.missing") && (between || codes.includes("pack.broken"));
    tally.add(`cut at ${length}`, { stopped, recorded: read.every(Boolean) });
    assert.ok(stopped, `cut at ${length}: ${codes}`);
    assert.ok(read.every(Boolean), `cut at ${length}: a whole record before the cut no longer reads`);
  }
  await Deno.remove(run.dir, { recursive: true });
});

Deno.test("a record past the end, two records of one hash, and a record the manifest does not name are each caught and named", async () => {
  const run = await packedRun();
  const pack = await Deno.readFile(packOf(run.folder));
  const first = readPack(pack).records[0]!;
  const firstWhole = pack.slice(0, first.offset + first.size + 1);
  const extra = new TextEncoder().encode('{"smuggled":true}');
  const attacks: [string, string, Uint8Array][] = [
    [
      "a header naming 1 MiB more than the pack holds",
      "pack.broken",
      concat(pack, utf8(`${"a".repeat(64)} 1048576\n{}\n`)),
    ],
    [
      "a header naming one byte more than its record",
      "pack.broken",
      concat(pack, packRecord(sha256Hex(extra), extra).slice(0, -1)),
    ],
    ["a size of 16 digits", "pack.broken", concat(pack, utf8(`${sha256Hex("")} 1000000000000000\n`))],
    ["a header in uppercase hex", "pack.broken", concat(pack, utf8(`${sha256Hex("").toUpperCase()} 0\n\n`))],
    ["the first record again at the end", "payload.stored_twice", concat(pack, firstWhole)],
    ["the first record again at the start", "payload.stored_twice", concat(firstWhole, pack)],
    [
      "a record of a payload the manifest does not list",
      "payload.unlisted",
      concat(pack, packRecord(sha256Hex(extra), extra)),
    ],
    [
      "an empty record the manifest does not list",
      "payload.unlisted",
      concat(pack, packRecord(sha256Hex(""), new Uint8Array())),
    ],
  ];
  for (const [name, code, bytes] of attacks) {
    const { codes, files } = await attacked(run, (f) => Deno.writeFile(packOf(f), bytes));
    const stopped = codes.includes(code);
    tally.add(name, { stopped, recorded: files[codes.indexOf(code)] === "payloads.pack" });
    assert.ok(stopped, `${name}: ${codes}`);
  }
  await Deno.remove(run.dir, { recursive: true });
});

Deno.test("a payload in neither place is named, sealed or not, and a forger who rewrites a record's header to its new bytes is caught", async () => {
  const run = await packedRun();
  const pack = await Deno.readFile(packOf(run.folder));
  const [first, ...rest] = readPack(pack).records;
  const withoutFirst = pack.slice(first!.offset + first!.size + 1);
  const cases: [string, string, (f: string) => Promise<void>][] = [
    [
      "a listed payload's record taken out",
      "payload.missing",
      (f) => Deno.writeFile(packOf(f), withoutFirst),
    ],
    ["a record taken out of a run not sealed yet", "payload.event_unlisted", async (f) => {
      await Deno.writeFile(packOf(f), withoutFirst);
      await Deno.remove(join(f, "evidence", "manifest.json"));
    }],
    ["the pack removed", "payload.missing", (f) => Deno.remove(packOf(f))],
    ["a record's bytes and header rewritten to each other", "payload.missing", async (f) => {
      const forged = new TextEncoder().encode('{"forged":true}');
      await Deno.writeFile(packOf(f), concat(packRecord(sha256Hex(forged), forged), withoutFirst));
    }],
    ["the pack a link to a copy of itself", "payloads.unreadable", async (f) => {
      await Deno.writeFile(join(f, "pack.copy"), pack);
      await Deno.remove(packOf(f));
      await Deno.symlink(join(f, "pack.copy"), packOf(f));
    }],
    ["a pack in a run whose manifest states format 1", "evidence.extra", async (f) => {
      const path = join(f, "evidence", "manifest.json");
      const m = JSON.parse(await Deno.readTextFile(path));
      m.format = "provevi-manifest/1";
      await Deno.writeTextFile(path, canonicalize(m) + "\n");
    }],
    ["a packed payload also written as a file of payloads/", "payload.stored_twice", async (f) => {
      const r = rest[0]!;
      await Deno.writeFile(
        join(f, "evidence", "payloads", r.sha256),
        pack.slice(r.offset, r.offset + r.size),
      );
    }],
  ];
  for (const [name, code, change] of cases) {
    const { codes, copy } = await attacked(run, change);
    const stopped = codes.includes(code);
    tally.add(name, { stopped, recorded: await readersRefuse(copy, [first!.sha256]) });
    assert.ok(stopped, `${name}: ${codes}`);
  }
  await Deno.remove(run.dir, { recursive: true });
});

Deno.test("a pack or an events.jsonl of many gigabytes (sparse) is refused before it is read: a named problem, at once, with the reader's memory bounded", async () => {
  const run = await packedRun();
  const cases: [string, string, number][] = [
    ["a 6 GiB payloads.pack", "evidence/payloads.pack", 6 * 1024 ** 3],
    ["a 3 GiB events.jsonl", "evidence/events.jsonl", 3 * 1024 ** 3],
    ["a 2 GiB manifest.json", "evidence/manifest.json", 2 * 1024 ** 3],
  ];
  for (const [name, file, size] of cases) {
    const before = isolateBytes();
    const { codes, copy } = await attacked(run, async (folder) => {
      // A sparse file: its size is claimed, no disk is used.
      const f = await Deno.open(join(folder, file), { write: true });
      await f.truncate(size);
      f.close();
    });
    const grew = isolateBytes() - before;
    const stopped = codes.length > 0 && grew < 256 * 1024 * 1024;
    tally.add(name, { stopped, recorded: codes.length > 0 });
    assert.ok(stopped, `${name}: ${codes.join(", ")}; grew ${grew} bytes`);
    await Deno.remove(copy, { recursive: true });
  }
  await Deno.remove(run.dir, { recursive: true });
});

Deno.test("a pack writer takes a record only while the pack stays under its limit (the writer puts the rest in files)", () => {
  const pack = new PackWriter("/nonexistent/never-opened.pack");
  // A record of n bytes takes a 64-digit hash, a space, n's digits and a newline before it, and a newline after.
  assert.equal(pack.fits(PACK_MAX_BYTES - 77), true);
  assert.equal(pack.fits(PACK_MAX_BYTES - 76), false);
  assert.equal(packRecordSize(0), 68);
  assert.equal(packRecordSize(1000), 1000 + 71);
  for (const n of [0, 9, 10, 99999, 262143]) {
    assert.equal(packRecordSize(n), packRecord("a".repeat(64), new Uint8Array(n)).length);
  }
});

Deno.test("payload pack attacks: the tally", () => {
  console.log(tally.line());
  assert.equal(tally.missed.length, 0, tally.line());
});

function utf8(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

const concat = (...parts: Uint8Array[]): Uint8Array => concatBytes(parts);

/**
 * `prove verify` against the verifier written from docs/evidence-format.md alone (Python), on runs of format 2
 * changed where the pack meets the rest of the run: a payload in both places with other bytes, a listed payload
 * that is a link or a folder, records reordered, a run without its manifest, a pack that is a folder or a pipe,
 * headers one character off the form, and bytes of the pack set, inserted, cut and spliced at random (a fixed
 * seed). Any case where the two name different problems (code, file, line, seq) is a finding: one of them does
 * not say what the doc says. Two were found and fixed in the Python verifier (a listed payload that is a link or
 * a folder is `payload.unreadable`, not missing; without a manifest, an event naming a payload in neither place
 * is `payload.event_unlisted`); `prove verify` already did what the doc says.
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
import { peerTest } from "../_peers.ts";
import { sampleRun } from "./_setup.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("pack cases, prove verify against the verifier from the doc");
const SCRIPT = new URL("../provevi/evidence/independent_verify.py", import.meta.url).pathname;
const enc = (s: string) => new TextEncoder().encode(s);

const cat = (...parts: Uint8Array[]): Uint8Array => concatBytes(parts);

/** The pack of the sample run, its records, and ways to change a copy of the run. */
class PackCases {
  readonly records;
  constructor(readonly pack: Uint8Array) {
    this.records = readPack(pack).records;
  }
  bytes(i: number): Uint8Array {
    const r = this.records[i]!;
    return this.pack.slice(r.offset, r.offset + r.size);
  }
  record(i: number): Uint8Array {
    return packRecord(this.records[i]!.sha256, this.bytes(i));
  }
  without(i: number): Uint8Array {
    return cat(...this.records.map((_, j) => j === i ? new Uint8Array() : this.record(j)));
  }
}

const ev = (f: string, name = "") => join(f, "evidence", name);
const packOf = (f: string) => ev(f, "payloads.pack");
const payloadOf = (f: string, sha: string) => join(ev(f), "payloads", sha);

/** The cases, each a change to a copy of the run. */
function cases(p: PackCases): [string, (f: string) => Promise<void>][] {
  const first = p.records[0]!.sha256;
  const write = (bytes: Uint8Array) => (f: string) => Deno.writeFile(packOf(f), bytes);
  const noManifest = (then: (f: string) => Promise<void>) => async (f: string) => {
    await Deno.remove(ev(f, "manifest.json"));
    await then(f);
  };
  const empty = sha256Hex("");
  return [
    ["the records in another order", write(cat(...p.records.map((_, i) => p.record(i)).reverse()))],
    ["a packed payload also a file of other bytes", (f) => Deno.writeFile(payloadOf(f, first), enc("other"))],
    ["a packed payload also a file of its bytes", (f) => Deno.writeFile(payloadOf(f, first), p.bytes(0))],
    ["a listed payload a link, the pack without it", async (f) => {
      await write(p.without(0))(f);
      await Deno.symlink("/etc/hostname", payloadOf(f, first));
    }],
    ["a listed payload a folder, the pack without it", async (f) => {
      await write(p.without(0))(f);
      await Deno.mkdir(payloadOf(f, first));
    }],
    ["a packed payload also a link", (f) => Deno.symlink("/etc/hostname", payloadOf(f, first))],
    ["a packed payload also a folder", (f) => Deno.mkdir(payloadOf(f, first))],
    ["a file of a payload and a record of other bytes first", async (f) => {
      await Deno.writeFile(payloadOf(f, first), p.bytes(0));
      await write(cat(packRecord(first, enc("zz")), p.without(0)))(f);
    }],
    ["an empty pack", write(new Uint8Array())],
    ["the pack a folder", async (f) => {
      await Deno.remove(packOf(f));
      await Deno.mkdir(packOf(f));
    }],
    ["the pack a named pipe", async (f) => {
      await Deno.remove(packOf(f));
      await new Deno.Command("mkfifo", { args: [packOf(f)] }).output();
    }],
    ["manifest format 1 with a pack", async (f) => {
      const m = ev(f, "manifest.json");
      await Deno.writeTextFile(m, (await Deno.readTextFile(m)).replace("manifest/2", "manifest/1"));
    }],
    ["a packed payload's listed size one more", async (f) => {
      const m = JSON.parse(await Deno.readTextFile(ev(f, "manifest.json")));
      m.payloads[0].size += 1;
      m.payload_bytes += 1;
      await Deno.writeTextFile(ev(f, "manifest.json"), canonicalize(m) + "\n");
    }],
    ["no manifest", noManifest(() => Promise.resolve())],
    ["no manifest, an empty pack", noManifest(write(new Uint8Array()))],
    ["no manifest, a record twice", noManifest(write(cat(p.pack, p.record(0))))],
    [
      "no manifest, a packed payload also a file",
      noManifest((f) => Deno.writeFile(payloadOf(f, first), p.bytes(0))),
    ],
    [
      "no manifest, an unlisted record",
      noManifest(write(cat(p.pack, packRecord(sha256Hex("{}"), enc("{}"))))),
    ],
    ["a size of 15 digits", write(cat(p.pack, enc(`${empty} 999999999999999\n\n`)))],
    ["a size with a plus", write(cat(p.pack, enc(`${empty} +0\n\n`)))],
    ["a size with a leading zero", write(cat(p.pack, enc(`${empty} 00\n\n`)))],
    ["a size in Arabic-Indic digits", write(cat(p.pack, enc(`${empty} \u0660\n\n`)))],
    ["a header ending CR LF", write(cat(p.pack, enc(`${empty} 0\r\n\n`)))],
    ["a header of two spaces", write(cat(p.pack, enc(`${empty}  0\n\n`)))],
    ["an empty record unlisted", write(cat(p.pack, enc(`${empty} 0\n\n`)))],
    ["a NUL after the last record", write(cat(p.pack, new Uint8Array([0])))],
    ["a newline after the last record", write(cat(p.pack, new Uint8Array([10])))],
    [
      "a changed record, then the record again",
      write(cat(
        p.pack.map((b, i) => i === p.records[0]!.offset ? b ^ 1 : b),
        p.record(0),
      )),
    ],
    ["another record of the first hash first", write(cat(packRecord(first, enc("xx")), p.pack))],
    ...randomCases(p.pack, 48),
  ];
}

/** Bytes of the pack changed at random, from a fixed seed: one byte set, inserted or cut, or a splice. */
function randomCases(pack: Uint8Array, n: number): [string, (f: string) => Promise<void>][] {
  let seed = 20261202;
  const rnd = (m: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return Math.floor(seed / 65536) % m;
  };
  const out: [string, (f: string) => Promise<void>][] = [];
  for (let i = 0; i < n; i++) {
    const kind = rnd(4), at = rnd(pack.length), value = rnd(256), other = rnd(pack.length);
    const bytes = [
      () => pack.map((b, j) => j === at ? value : b),
      () => cat(pack.slice(0, at), new Uint8Array([value]), pack.slice(at)),
      () => cat(pack.slice(0, at), pack.slice(at + 1 + (value % 4))),
      () => cat(pack.slice(0, at), pack.slice(other)),
    ][kind]!();
    out.push([`random change ${kind} at ${at}`, (f) => Deno.writeFile(packOf(f), bytes)]);
  }
  return out;
}

/** What a check found, one text a problem, sorted. */
const key = (p: { code: string; file: string | null; line?: number | null; seq?: number | null }) =>
  `${p.code} ${p.file} line ${p.line ?? null} seq ${p.seq ?? null}`;

peerTest("intoto", {
  name:
    "on every pack case, prove verify and the verifier written from the doc name the same problems, code, file, line and seq",
  fn: async () => {
    const python = Deno.env.get("PROVEVI_TEST_INTOTO_PYTHON");
    if (!python) throw new Error("PROVEVI_TEST_INTOTO_PYTHON is unset: .ci/peers/intoto.sh did not run");
    const { dir, folder: base } = await sampleRun("attack-pack-diff-");
    const found: string[] = [];
    for (const [name, change] of cases(new PackCases(await Deno.readFile(packOf(base))))) {
      const copy = join(await Deno.makeTempDir({ dir }), SAMPLE_RUN_ID);
      await copyFolder(base, copy);
      await change(copy);
      const ours = (await verifyRun(new FileRunRecord(SAMPLE_RUN_ID, copy))).problems.map(key).sort();
      const out = await new Deno.Command(python, { args: [SCRIPT, copy], stdout: "piped", stderr: "piped" })
        .output();
      const theirs = out.success
        ? (JSON.parse(new TextDecoder().decode(out.stdout)) as Parameters<typeof key>[0][]).map(key).sort()
        : [`(the verifier crashed: ${new TextDecoder().decode(out.stderr).trim().split("\n").at(-1)})`];
      const agree = JSON.stringify(ours) === JSON.stringify(theirs);
      // a changed run is stopped when it does not verify; the untouched reorder verifies, as the doc says
      const stopped = name === "the records in another order" ? ours.length === 0 : ours.length > 0;
      tally.add(name, { stopped, recorded: agree });
      if (!agree || !stopped) {
        found.push(`${name}: prove ${JSON.stringify(ours)}, doc's ${JSON.stringify(theirs)}`);
      }
    }
    await Deno.remove(dir, { recursive: true });
    console.log(tally.line({ stopped: "do not verify (or verify, as the doc says)", recorded: "agree" }));
    assert.deepEqual(found, []);
  },
});

/**
 * The test vectors of `payloads.pack` (manifest format 2): the fixture run with its payloads moved into a pack,
 * and one change each to the pack that a check must name.
 * @module
 */
import { join } from "node:path";
import canonicalize from "canonicalize";
import { sha256Hex } from "../../lib/provevi/evidence/hash.ts";
import { packRecord, readPack } from "../../lib/provevi/evidence/payload_pack.ts";
import { manifestPath } from "./_tamper.ts";
import type { Vector } from "./_vectors.ts";

const packPath = (f: string) => join(f, "evidence", "payloads.pack");
const payloadsDir = (f: string) => join(f, "evidence", "payloads");

/**
 * Moves every payload file of a run into `payloads.pack`, in the manifest's order, and states format 2 in the
 * manifest: the run as a writer of format 2 leaves it.
 */
export async function toPacked(f: string): Promise<void> {
  const m = JSON.parse(await Deno.readTextFile(manifestPath(f)));
  const parts: Uint8Array[] = [];
  for (const p of m.payloads as { sha256: string }[]) {
    const path = join(payloadsDir(f), p.sha256);
    parts.push(packRecord(p.sha256, await Deno.readFile(path)));
    await Deno.remove(path);
  }
  await Deno.writeFile(packPath(f), concat(parts));
  m.format = "provevi-manifest/2";
  await Deno.writeTextFile(manifestPath(f), canonicalize(m) + "\n");
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Rewrites the pack's bytes through `change`. */
const editPack = (change: (pack: Uint8Array) => Uint8Array) => async (f: string) => {
  await Deno.writeFile(packPath(f), change(await Deno.readFile(packPath(f))));
};

/** The first record of the pack and its bytes. */
const firstRecord = (pack: Uint8Array) => {
  const r = readPack(pack).records[0]!;
  return { ...r, whole: pack.slice(r.offset - 66 - String(r.size).length, r.offset + r.size + 1) };
};

/** The vectors of the pack; each starts from the fixture run in format 2. */
export const PACK_VECTORS: Vector[] = [
  {
    name: "packed",
    check: 5,
    what: "the run's payloads kept in payloads.pack, manifest format 2; it verifies",
    before: toPacked,
    change: () => Promise.resolve(),
  },
  {
    name: "packed-signed",
    check: 9,
    what: "a run of format 2 signed: the statement names payloads.pack in place of the payloads it holds",
    before: toPacked,
    signed: true,
    trust: true,
    change: () => Promise.resolve(),
  },
  {
    name: "pack-byte-flipped",
    check: 5,
    what: "one byte of a payload in payloads.pack changed",
    before: toPacked,
    change: editPack((pack) => {
      const r = readPack(pack).records[0]!;
      pack[r.offset] = pack[r.offset]! ^ 0x01;
      return pack;
    }),
  },
  {
    name: "pack-cut",
    check: 5,
    what: "payloads.pack cut in the middle of its last record",
    before: toPacked,
    change: editPack((pack) => pack.slice(0, pack.length - 3)),
  },
  {
    name: "pack-record-past-end",
    check: 5,
    what: "a record whose header names more bytes than the pack has left",
    before: toPacked,
    change: editPack((pack) => concat([pack, new TextEncoder().encode(`${sha256Hex("x")} 4096\nx\n`)])),
  },
  {
    name: "pack-record-twice",
    check: 5,
    what: "the first record of payloads.pack written again at its end",
    before: toPacked,
    change: editPack((pack) => concat([pack, firstRecord(pack).whole])),
  },
  {
    name: "pack-record-unlisted",
    check: 5,
    what: "a record in payloads.pack of a payload the manifest does not list",
    before: toPacked,
    change: editPack((pack) => {
      const extra = new TextEncoder().encode("extra");
      return concat([pack, packRecord(sha256Hex(extra), extra)]);
    }),
  },
  {
    name: "pack-record-missing",
    check: 5,
    what: "the record of a listed payload taken out of payloads.pack: it is in neither place",
    before: toPacked,
    change: editPack((pack) => pack.slice(firstRecord(pack).whole.length)),
  },
  {
    name: "pack-and-file",
    check: 5,
    what: "a payload in payloads.pack and again as a file of payloads/",
    before: toPacked,
    change: async (f) => {
      const pack = await Deno.readFile(packPath(f));
      const r = readPack(pack).records[0]!;
      await Deno.writeFile(join(payloadsDir(f), r.sha256), pack.slice(r.offset, r.offset + r.size));
    },
  },
  {
    name: "pack-in-format-1",
    check: 5,
    what: "a payloads.pack in a run whose manifest states format 1: not part of that format",
    before: async (f) => {
      await toPacked(f);
      const m = JSON.parse(await Deno.readTextFile(manifestPath(f)));
      m.format = "provevi-manifest/1";
      await Deno.writeTextFile(manifestPath(f), canonicalize(m) + "\n");
    },
    change: () => Promise.resolve(),
  },
];

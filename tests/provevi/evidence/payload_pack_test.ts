import assert from "node:assert/strict";
import { join } from "node:path";
import { sha256Hex } from "../../../lib/provevi/evidence/hash.ts";
import {
  indexPackFile,
  PACK_FILE,
  packedPayloads,
  packRecord,
  readPack,
} from "../../../lib/provevi/evidence/payload_pack.ts";

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A pack of `count` records of `size` bytes each. */
function pack(count: number, size: number): Uint8Array {
  return concat(Array.from({ length: count }, (_, i) => {
    const bytes = new Uint8Array(size).fill(65 + (i % 26));
    bytes[0] = i & 0xff;
    bytes[1] = i >> 8;
    return packRecord(sha256Hex(bytes), bytes);
  }));
}

/** The packed payloads of a folder whose pack is `bytes`, and what reading the pack by its headers gives. */
async function both(
  bytes: Uint8Array,
): Promise<{ packed: Map<string, number>; byHeaders: Map<string, number> }> {
  const folder = await Deno.makeTempDir();
  try {
    await Deno.mkdir(join(folder, "evidence"));
    const path = join(folder, "evidence", PACK_FILE);
    await Deno.writeFile(path, bytes);
    using file = await Deno.open(path, { read: true });
    const index = indexPackFile(file);
    // the window over the file finds what a read of the whole pack finds, record for record, and the same break
    assert.deepEqual(index, readPack(bytes));
    const byHeaders = new Map(index.records.map((r) => [r.sha256, r.size]));
    return { packed: await packedPayloads(folder), byHeaders };
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
}

Deno.test("packedPayloads() finds the records a read by headers finds, in a small pack read whole and a large one", async () => {
  for (const [count, size] of [[40, 300], [3, 3 * 1024 * 1024], [0, 0]] as const) {
    const { packed, byHeaders } = await both(pack(count, size));
    assert.equal(packed.size, count);
    assert.deepEqual(packed, byHeaders);
  }
});

Deno.test("a pack's records are found through a window of its bytes whatever their sizes: small ones many to a read, large ones passed over, sizes about each window's edge", async () => {
  const sizes = [
    0,
    1,
    4000,
    4096,
    4100,
    100,
    300_000,
    5,
    262_000,
    262_144,
    70,
    8000,
    1_000_000,
    3,
    4015,
    4016,
    4017,
  ];
  const parts = sizes.map((size, i) => {
    const bytes = new Uint8Array(size).fill(97 + (i % 26));
    return packRecord(sha256Hex(bytes), bytes);
  });
  const whole = concat(parts);
  const { packed } = await both(whole);
  assert.equal(packed.size, new Set(sizes).size);
  // cut at every record's end, and in each record's header and bytes: the same break as a whole read's
  let end = 0;
  for (const part of parts) {
    for (const cut of [end + 10, end + part.length - 1, end + part.length]) {
      await both(whole.subarray(0, cut));
    }
    end += part.length;
  }
});

Deno.test("packedPayloads() stops where a pack breaks, as a read by headers does: cut in a header, in the bytes, or past a record's size", async () => {
  const whole = pack(5, 100);
  const second = whole.indexOf(10, whole.indexOf(10) + 1) + 1; // the end of the first record
  const cuts = [
    whole.subarray(0, second + 20), // cut in the second record's header
    whole.subarray(0, whole.length - 30), // cut in the last record's bytes
    concat([whole, new TextEncoder().encode("not a header\n")]),
    (() => {
      const bad = whole.slice();
      bad[second - 1] = 65; // the first record's bytes run past its size
      return bad;
    })(),
  ];
  for (const bytes of cuts) {
    const { packed, byHeaders } = await both(bytes);
    assert.deepEqual(packed, byHeaders);
    assert.ok(packed.size < 6);
  }
});

import assert from "node:assert/strict";
import { join } from "node:path";
import { PackWriter } from "../../../lib/provevi/store/pack_file.ts";
import { packPayload, packRecord, readPack } from "../../../lib/provevi/evidence/payload_pack.ts";
import { sha256Hex } from "../../../lib/provevi/evidence/hash.ts";

const text = (s: string) => new TextEncoder().encode(s);

/** A pack of these payloads, as the span daemon writes `received.spans`: records one after the other. */
function packOf(...payloads: Uint8Array[]): Uint8Array {
  const records = payloads.map((p) => packRecord(sha256Hex(p), p));
  const out = new Uint8Array(records.reduce((n, r) => n + r.length, 0));
  let at = 0;
  for (const r of records) (out.set(r, at), at += r.length);
  return out;
}

Deno.test("PackWriter writes a payload read from a pack (a view into it) as the same record packRecord makes", async () => {
  const dir = await Deno.makeTempDir();
  const source = packOf(text("first"), text("second body"), new Uint8Array(300_000).fill(7));
  const writer = new PackWriter(join(dir, "payloads.pack"));
  const views = readPack(source).records.map((r) => ({ sha256: r.sha256, bytes: packPayload(source, r)! }));
  for (const { sha256, bytes } of views.reverse()) writer.put(sha256, bytes);
  writer.close();
  const written = await Deno.readFile(join(dir, "payloads.pack"));
  assert.deepEqual(written, packOf(...views.map((v) => v.bytes)));
  assert.deepEqual(readPack(written).broken, null);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("PackWriter makes its own record of bytes whose neighbours only look like a record of them", async () => {
  const dir = await Deno.makeTempDir();
  const body = text("payload");
  const sha = sha256Hex(body);
  // a header of another size, a header of another hash, no newline after, and bytes at the buffer's very start
  const cases = [
    text(`${sha} 8\npayload\n`).subarray(67, 74),
    text(`${"0".repeat(64)} 7\npayload\n`).subarray(67, 74),
    text(`${sha} 7\npayloadX`).subarray(67, 74),
    text("payload\n").subarray(0, 7),
  ];
  const writer = new PackWriter(join(dir, "payloads.pack"));
  for (const bytes of cases) {
    assert.deepEqual(bytes, body);
    writer.put(sha, bytes);
  }
  writer.close();
  const written = await Deno.readFile(join(dir, "payloads.pack"));
  assert.deepEqual(written, packOf(body, body, body, body));
  await Deno.remove(dir, { recursive: true });
});

Deno.test("PackWriter.put() writes each record byte for byte as packRecord makes it, whatever size came before", async () => {
  const dir = await Deno.makeTempDir();
  // Large then small then large again: the writer builds records in one reused buffer, so a short record
  // after a long one must carry nothing of it, and a record past the buffer must be whole too.
  const sizes = [10_240, 3, 65_000, 0, 70_000, 1, 10_240, 64 * 1024 - 90, 64 * 1024 - 80];
  const payloads = sizes.map((size, i) => new Uint8Array(size).fill(97 + i));
  const writer = new PackWriter(join(dir, "payloads.pack"));
  for (const bytes of payloads) writer.put(sha256Hex(bytes), bytes);
  writer.close();
  const pack = await Deno.readFile(join(dir, "payloads.pack"));
  const expected = payloads.map((bytes) => packRecord(sha256Hex(bytes), bytes));
  assert.deepEqual(pack, new Uint8Array(expected.flatMap((r) => [...r])));
  const { records, broken } = readPack(pack);
  assert.equal(broken, null);
  assert.deepEqual(records.map((r) => packPayload(pack, r)), payloads);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("PackWriter.flush() starts an fdatasync between appends (none before the first record or 2 MiB, one at a time) and changes no byte", async () => {
  const dir = await Deno.makeTempDir();
  const writer = new PackWriter(join(dir, "payloads.pack"));
  writer.flush(); // no file yet: nothing to do, and no file made
  await assert.rejects(() => Deno.stat(join(dir, "payloads.pack")), Deno.errors.NotFound);
  const payloads = [text("one"), new Uint8Array(3_000_000).fill(3), text("three"), new Uint8Array(2_500_000)];
  for (const p of payloads) {
    writer.put(sha256Hex(p), p);
    writer.flush();
    writer.flush(); // one under way: the second starts nothing
  }
  await writer.sync();
  writer.close();
  assert.deepEqual(await Deno.readFile(join(dir, "payloads.pack")), packOf(...payloads));
  await Deno.remove(dir, { recursive: true });
});

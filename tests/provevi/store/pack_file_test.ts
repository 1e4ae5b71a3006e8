import assert from "node:assert/strict";
import { join } from "node:path";
import { packPayload, packRecord, readPack } from "../../../lib/provevi/evidence/payload_pack.ts";
import { sha256Hex } from "../../../lib/provevi/evidence/mod.ts";
import { PackWriter } from "../../../lib/provevi/store/pack_file.ts";

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

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { packPayload, packRecord, readPack } from "../../../lib/provevi/evidence/payload_pack.ts";
import {
  sha256File,
  sha256Hex,
  sha256Vouched,
  takeVouchedSha256,
} from "../../../lib/provevi/evidence/hash.ts";
import { findRun } from "../../../lib/provevi/runs/find_run.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";

Deno.test("sha256File() gives the SHA-256 and size of files of every length around its chunk, several at once", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const mib = 1 << 20;
    const sizes = [0, 1, mib - 1, mib, mib + 1, 2 * mib, 3 * mib + 5];
    const files = await Promise.all(sizes.map(async (size, i) => {
      const bytes = new Uint8Array(size);
      for (let o = 0; o < size; o += 65536) {
        crypto.getRandomValues(bytes.subarray(o, Math.min(size, o + 65536)));
      }
      const path = join(dir, `f${i}`);
      await Deno.writeFile(path, bytes);
      return { path, size, sha256: createHash("sha256").update(bytes).digest("hex") };
    }));
    // At once, as the checks of outputs and payloads may run: each call has its own buffers.
    const got = await Promise.all(files.map((f) => sha256File(f.path)));
    assert.deepEqual(got, files.map(({ sha256, size }) => ({ sha256, size })));
    for (const f of files) assert.deepEqual(await sha256File(f.path), { sha256: f.sha256, size: f.size });
    await assert.rejects(() => sha256File(join(dir, "missing")), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a vouched hash is taken once, for the very array that was hashed: not for an equal copy or a view of it", () => {
  const bytes = new TextEncoder().encode("a body");
  assert.equal(sha256Vouched(bytes), sha256Hex(bytes));
  assert.equal(takeVouchedSha256(bytes.slice()), null);
  assert.equal(takeVouchedSha256(bytes.subarray(0)), null);
  assert.equal(takeVouchedSha256(bytes), sha256Hex(bytes));
  assert.equal(takeVouchedSha256(bytes), null);
  assert.equal(takeVouchedSha256(new TextEncoder().encode("never hashed")), null);
});

Deno.test("packPayload() vouches only for bytes that match their record, and the writer stores them under that hash", async () => {
  const runs = await Deno.makeTempDir();
  await using store = new FileStore({ runs });
  const good = new TextEncoder().encode("good");
  const bad = new TextEncoder().encode("bad");
  const pack = new Uint8Array([...packRecord(sha256Hex(good), good), ...packRecord("0".repeat(64), bad)]);
  const [first, second] = readPack(pack).records;
  assert.equal(packPayload(pack, second!), null);
  assert.equal(takeVouchedSha256(pack.subarray(second!.offset, second!.offset + second!.size)), null);
  const body = packPayload(pack, first!)!;
  const writer = await store.openRun("run-vouched");
  assert.equal(await writer.putPayload(body), sha256Hex(good));
  assert.equal(takeVouchedSha256(body), null, "the writer took the hash");
  await writer.seal();
  const record = await findRun(writer.folder);
  // read back with its hash checked
  assert.deepEqual(await record.payload(sha256Hex(good)), good);
  await Deno.remove(runs, { recursive: true });
});

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { sha256File } from "../../../lib/provevi/evidence/mod.ts";

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

import assert from "node:assert/strict";
import { join } from "node:path";
import { contentHash, InProcessStager } from "../../../lib/provrun/run/stager.ts";

Deno.test("InProcessStager.stage() refuses a name that is not a file name, such as .. from a URI's last segment", async () => {
  const folder = await Deno.makeTempDir();
  const src = join(folder, "src.txt");
  await Deno.writeTextFile(src, "x");
  const snapshot = {
    path: src,
    pinned: "data://a/b/c/..",
    sha256: await contentHash(src, "file"),
    kind: "file" as const,
  };
  const stager = new InProcessStager(join(folder, "run"));
  for (const name of ["..", ".", "a/b", ""]) {
    await assert.rejects(() => stager.stage(snapshot, name), /cannot be staged as/);
  }
  assert.equal((await stager.stage(snapshot, "c.txt")).name, "c.txt");
});

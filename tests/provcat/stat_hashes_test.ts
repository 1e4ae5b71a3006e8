import assert from "node:assert/strict";
import { join } from "node:path";
import { hashPath } from "../../lib/provcat/_files.ts";
import { StatHashes } from "../../lib/provcat/stat_hashes.ts";
import { removeWritable } from "../_files.ts";

async function oldFolder(): Promise<{ dir: string; data: string; cache: string }> {
  const dir = await Deno.makeTempDir();
  const data = join(dir, "data");
  await Deno.mkdir(join(data, "sub"), { recursive: true });
  await Deno.writeTextFile(join(data, "a.txt"), "alpha\n");
  await Deno.writeTextFile(join(data, "sub", "b.txt"), "beta\n");
  // Files written more than two seconds ago: their entries are not racy.
  const past = new Date(Date.now() - 60_000);
  for (const f of ["a.txt", "sub/b.txt"]) await Deno.utime(join(data, f), past, past);
  await new Promise((r) => setTimeout(r, 2100)); // the change time moves with utime; let it age
  return { dir, data, cache: join(dir, "cache") };
}

Deno.test("StatHashes gives the same hash as hashPath, and reads again only what changed", async () => {
  const { dir, data, cache } = await oldFolder();
  const first = await StatHashes.open(cache, data);
  const sha = await first.hashPath(data, "folder");
  assert.equal(sha, await hashPath(data, "folder"));
  await first.save();
  const again = await StatHashes.open(cache, data);
  assert.equal(await again.hashPath(data, "folder"), sha);
  // A change of the same size, with the modification time put back: the change time still tells.
  const path = join(data, "a.txt");
  const info = await Deno.stat(path);
  await Deno.writeTextFile(path, "ALPHA\n");
  await Deno.utime(path, info.atime!, info.mtime!);
  const third = await StatHashes.open(cache, data);
  const changed = await third.hashPath(data, "folder");
  assert.notEqual(changed, sha);
  assert.equal(changed, await hashPath(data, "folder"));
  await Deno.remove(dir, { recursive: true });
});

Deno.test("StatHashes does not keep the hash of a file changed just before it was read", async () => {
  const dir = await Deno.makeTempDir();
  const file = join(dir, "x.txt");
  await Deno.writeTextFile(file, "one\n");
  const hashes = await StatHashes.open(join(dir, "cache"), file);
  await hashes.hashPath(file, "file");
  await hashes.save();
  await Deno.writeTextFile(file, "two\n"); // same size, same second
  const again = await StatHashes.open(join(dir, "cache"), file);
  assert.equal(await again.hashPath(file, "file"), await hashPath(file, "file"));
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a live folder's snapshot follows a change that keeps the file's size and modification time", async () => {
  const { Catalog } = await import("../../lib/provcat/mod.ts");
  const { dir, data, cache } = await oldFolder();
  await using catalog = await Catalog.open({
    config: {
      cache,
      stores: { live: { type: "folder", path: data } },
      routes: [{ prefix: "data://a/b/dev", store: "live" }],
    },
  });
  const first = await catalog.snapshot("data://a/b/dev");
  const again = await catalog.snapshot("data://a/b/dev");
  assert.equal(again.reused, true);
  assert.equal(again.sha256, first.sha256);
  const path = join(data, "sub", "b.txt");
  const info = await Deno.stat(path);
  await Deno.writeTextFile(path, "BETA\n");
  await Deno.utime(path, info.atime!, info.mtime!);
  const changed = await catalog.snapshot("data://a/b/dev");
  assert.notEqual(changed.sha256, first.sha256);
  assert.equal(await Deno.readTextFile(join(changed.path, "sub", "b.txt")), "BETA\n");
  await removeWritable(dir);
});

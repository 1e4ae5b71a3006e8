import { PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { join } from "node:path";
import { assert, assertRejects } from "./_assert.ts";
import { Catalog, CatalogError } from "./_deps.ts";
import { makeBucket, S3_ENDPOINT, s3Config } from "./_s3.ts";
import { storeContract } from "./store_contract.ts";
import { removeWritable } from "../_files.ts";
import { peerTest } from "../_peers.ts";

storeContract("s3", async () => {
  const bucket = await makeBucket();
  return { config: s3Config(bucket), versioned: true, cleanup: () => Promise.resolve() };
}, { peer: "s3" });

peerTest("s3", {
  name: "s3 store: a bucket without versioning is refused with the fix",
  fn: async () => {
    const bucket = await makeBucket({ versioning: false });
    await using catalog = await Catalog.open({
      config: { stores: { b: s3Config(bucket) }, routes: [{ prefix: "d://a/b/c", store: "b" }] },
    });
    await assertRejects(
      () => catalog.put("d://a/b/c/x", new Uint8Array([1])),
      CatalogError,
      "put-bucket-versioning",
    );
  },
});

peerTest("s3", {
  name: "s3 store: an object whose key has a .. part is refused, not written outside the cache",
  fn: async () => {
    const bucket = await makeBucket();
    const dir = await Deno.makeTempDir({ prefix: "provcat-s3dots-" });
    const client = new S3Client({ region: "us-east-1", endpoint: S3_ENDPOINT!, forcePathStyle: true });
    try {
      await client.send(
        new PutObjectCommand({ Bucket: bucket, Key: "cat/d/../../../../../escaped", Body: "escaped\n" }),
      );
      await using catalog = await Catalog.open({
        config: {
          cache: join(dir, "a", "b", "cache"),
          stores: { b: s3Config(bucket) },
          routes: [{ prefix: "d://a/b/c", store: "b" }],
        },
      });
      await catalog.put("d://a/b/c/d/ok", new TextEncoder().encode("ok"));
      await catalog.commit("d://a/b/c/d", "with a .. key beside");
      await assertRejects(() => catalog.snapshot("d://a/b/c/d"), CatalogError, "..");
      for await (const entry of Deno.readDir(dir)) assert(entry.name === "a", `${entry.name} was written`);
      for await (const entry of Deno.readDir(join(dir, "a"))) {
        assert(entry.name === "b", `${entry.name} was written`);
      }
    } finally {
      client.destroy();
      await removeWritable(dir);
    }
  },
});

peerTest("s3", {
  name: "s3 store: commits at once never lose one another; a commit that lost the race says to commit again",
  fn: async () => {
    const bucket = await makeBucket();
    const open = () =>
      Catalog.open({
        config: { stores: { b: s3Config(bucket) }, routes: [{ prefix: "d://a/b/c", store: "b" }] },
      });
    await using first = await open();
    await first.put("d://a/b/c/seed", new TextEncoder().encode("seed"));
    await first.commit("d://a/b/c/seed", "seed");
    const catalogs = await Promise.all(Array.from({ length: 6 }, open));
    try {
      for (let round = 0; round < 3; round++) {
        const settled = await Promise.allSettled(catalogs.map(async (catalog, i) => {
          const key = `d://a/b/c/r${round}-${i}`;
          await catalog.put(key, new TextEncoder().encode(`${round}-${i}`));
          return { key, commit: await catalog.commit(key, `round ${round} writer ${i}`) };
        }));
        for (const s of settled) {
          if (s.status === "rejected") {
            assert(/moved while committing .*; commit again/.test(String(s.reason)), String(s.reason));
          }
        }
        // Every commit that succeeded is in the branch's history: none was overwritten by another.
        const listing = await first.list("d://a/b/c");
        const names = new Set(listing.entries.map((e) => e.name));
        for (const s of settled) {
          if (s.status === "fulfilled") {
            const name = s.value.key.split("/").pop()!;
            assert(names.has(name), `${name} was committed, then lost`);
          }
        }
      }
    } finally {
      for (const c of catalogs) await c.close();
    }
  },
});

peerTest("s3", {
  name: "s3 store: the first requests of a store, at once, share one client with one guard of its answers",
  fn: async () => {
    const bucket = await makeBucket();
    const config = { stores: { b: s3Config(bucket) }, routes: [{ prefix: "d://a/b/c", store: "b" }] };
    {
      await using catalog = await Catalog.open({ config });
      await catalog.put("d://a/b/c/x", new TextEncoder().encode("x"));
      await catalog.put("d://a/b/c/y", new TextEncoder().encode("y"));
      await catalog.commit("d://a/b/c", "xy");
    }
    await using fresh = await Catalog.open({ config });
    const read = await Promise.all(["x", "y"].map((k) => fresh.read(`d://a/b/c/${k}`)));
    assert(read.map((b) => new TextDecoder().decode(b)).join() === "x,y");
  },
});

/**
 * An s3 store's commit maps each key to the S3 version it had, and a URI pinned at a commit reads that version
 * only. The map was looked up as a plain object: a key named as one of every object's own properties
 * (`constructor`, `toString`, `__proto__`, …), which the commit does not hold, was found there all the same, and
 * read with no version, so at the newest version anyone who can write the bucket put after the commit. A pinned
 * URI must read what its commit holds, or nothing.
 * @module
 */
import { PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import assert from "node:assert/strict";
import { Catalog } from "../../lib/provcat/mod.ts";
import { makeBucket, S3_ENDPOINT, s3Config } from "../provcat/_s3.ts";
import { peerTest } from "../_peers.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("s3 commit attacks");
const NAMES = ["constructor", "toString", "valueOf", "hasOwnProperty", "__proto__"];

peerTest("s3", {
  name: "a URI pinned at an s3 commit reads no key the commit lacks, whatever its name",
  fn: async () => {
    const bucket = await makeBucket();
    await using catalog = await Catalog.open({
      config: { stores: { b: s3Config(bucket) }, routes: [{ prefix: "d://a/b/c", store: "b" }] },
    });
    await catalog.put("d://a/b/c/x.txt", new TextEncoder().encode("committed\n"));
    const { pinned } = await catalog.commit("d://a/b/c/x.txt", "x");
    const at = pinned!.slice(pinned!.indexOf("?"));
    const client = new S3Client({ region: "us-east-1", endpoint: S3_ENDPOINT!, forcePathStyle: true });
    try {
      for (const name of NAMES) {
        // written after the commit, by anyone who can write the bucket
        await client.send(new PutObjectCommand({ Bucket: bucket, Key: `cat/${name}`, Body: "planted\n" }));
        const read = await catalog.read(`d://a/b/c/${name}${at}`).then(
          (bytes) => new TextDecoder().decode(bytes),
          (error: Error) => error,
        );
        const stopped = read instanceof Error;
        const recorded = read instanceof Error && /is not in store "b" at commit:/.test(read.message) &&
          !read.message.includes("\n");
        tally.add(name, { stopped, recorded });
        assert.ok(
          stopped && recorded,
          `${name}: ${read instanceof Error ? read.message : JSON.stringify(read)}`,
        );
      }
    } finally {
      client.destroy();
    }
  },
});

peerTest("s3", {
  name: "s3 commit attacks: the tally",
  fn: () => {
    console.log(tally.line());
    assert.equal(tally.missed.length, 0, tally.line());
  },
});

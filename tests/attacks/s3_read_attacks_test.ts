/**
 * What an S3 server gives the s3 store, read within a cap and a time limit. The store read each object whole,
 * with no cap and no time limit (the branch's ref, a commit, a data object), and the SDK read every other answer
 * whole (a list, an error): an S3 server, or whoever can write the bucket, that serves a huge object or a body
 * that never ends took all the memory of `provr` or `prove`, and one that stalls held it for ever. Each is now one
 * line that names what was too big and the cap (or the time limit), read in bounded memory (measured in a process
 * of its own), and what the bucket held before (its commits, its branch) still reads.
 * @module
 */
import { PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import assert from "node:assert/strict";
import { join } from "node:path";
import { Catalog, type CatalogConfig } from "../../lib/provcat/mod.ts";
import { makeBucket, S3_ENDPOINT, s3Config } from "../provcat/_s3.ts";
import { peerTest } from "../_peers.ts";
import { removeWritable } from "../_files.ts";
import { hostileS3, type TwistRule } from "./_hostile_s3.ts";
import { measuredInChild } from "./_setup.ts";
import type { Outcome } from "./_s3_read_work.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("s3 read attacks");
const MiB = 1024 * 1024;
/**
 * The most a refused read may grow the process by: the attacks grew it by hundreds of MiB to GiBs. A read that
 * holds what it reads up to its cap (a commit, 64 MiB) may grow it by three times that cap (the chunks it holds,
 * and those in transit not yet collected).
 */
const BOUND = 48 * MiB;
const ROUTE = "d://a/b/c";

/** A bucket with two commits: x.txt alone, then x.txt and w.txt; and the URIs pinned at each. */
async function committedBucket() {
  const bucket = await makeBucket();
  const cache = await Deno.makeTempDir({ prefix: "provcat-s3read-" });
  await using catalog = await Catalog.open({ config: configOf(bucket, S3_ENDPOINT!, cache) });
  await catalog.put(`${ROUTE}/x.txt`, new TextEncoder().encode("committed\n"));
  const first = (await catalog.commit(`${ROUTE}/x.txt`, "x")).pinned!;
  await catalog.put(`${ROUTE}/w.txt`, new TextEncoder().encode("warm\n"));
  const second = (await catalog.commit(`${ROUTE}/w.txt`, "w")).pinned!;
  const at = (pinned: string) => pinned.slice(pinned.indexOf("?"));
  return { bucket, cache, x1: `${ROUTE}/x.txt${at(first)}`, x2: `${ROUTE}/x.txt${at(second)}`, w2: second };
}

function configOf(bucket: string, endpoint: string, cache: string, timeout?: number): CatalogConfig {
  return {
    cache,
    stores: { b: { ...s3Config(bucket), endpoint, ...(timeout ? { timeout } : {}) } },
    routes: [{ prefix: ROUTE, store: "b" }],
  };
}

/** What the bucket recorded before still reads, straight from the server. */
async function stillRecorded(bucket: string, cache: string, pinned: string[]): Promise<boolean> {
  await using catalog = await Catalog.open({ config: configOf(bucket, S3_ENDPOINT!, cache) });
  for (const uri of pinned) {
    const text = new TextDecoder().decode(await catalog.read(uri));
    if (text !== (uri.includes("/w.txt") ? "warm\n" : "committed\n")) return false;
  }
  return true;
}

async function plant(bucket: string, key: string, bytes: Uint8Array): Promise<void> {
  const client = new S3Client({ region: "us-east-1", endpoint: S3_ENDPOINT!, forcePathStyle: true });
  try {
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes }));
  } finally {
    client.destroy();
  }
}

type Committed = Awaited<ReturnType<typeof committedBucket>>;

interface Case {
  name: string;
  /** Objects put in the bucket first, by key under the store's prefix. */
  planted?: Record<string, number>;
  /** Answers of the server replaced by the proxy. */
  rules?: (b: Committed) => TwistRule[];
  timeout?: number;
  op: "read" | "snapshot" | "commit";
  uri: (b: Committed) => string;
  said: RegExp;
  /** The most the process may grow by, when more than {@linkcode BOUND}. */
  bound?: number;
  /** Whether the branch still names its commit after (false when the case overwrote the ref itself). */
  branch?: boolean;
}

const idOf = (pinned: string) => pinned.slice(pinned.indexOf("commit:") + 7);
const OTHER_COMMIT = "ab".repeat(32);
const isGet = (tail: string, query?: string) => (method: string, url: URL) =>
  method === "GET" && url.pathname.endsWith(tail) && (query === undefined || url.searchParams.has(query));

const CASES: Case[] = [
  {
    name: "a branch ref of 64 MiB in the bucket",
    planted: { ".provcat/refs/heads/main": 64 * MiB },
    op: "read",
    uri: () => `${ROUTE}/x.txt`,
    said: /the ref of branch "main" .*larger than 1 KiB/,
    branch: false,
  },
  {
    name: "a commit of 80 MiB in the bucket",
    planted: { [`.provcat/commits/${OTHER_COMMIT}.json`]: 80 * MiB },
    op: "read",
    uri: () => `${ROUTE}/x.txt?at=commit:${OTHER_COMMIT}`,
    said: new RegExp(`commit ${OTHER_COMMIT} .*larger than 64 MiB`),
  },
  {
    name: "a branch ref that never ends",
    rules: () => [{ match: isGet("/cat/.provcat/refs/heads/main"), body: "endless" }],
    op: "read",
    uri: () => `${ROUTE}/x.txt`,
    said: /the ref of branch "main" .*larger than 1 KiB/,
  },
  {
    name: "a commit that never ends",
    rules: (b) => [{ match: isGet(`${idOf(b.x1)}.json`), body: "endless" }],
    op: "read",
    uri: (b) => b.x1,
    said: /commit [0-9a-f]{64} .*larger than 64 MiB/,
    bound: 3 * 64 * MiB,
  },
  {
    name: "a data object that runs past the size its commit records",
    rules: () => [{ match: isGet("/cat/x.txt", "versionId"), body: "endless" }],
    op: "read",
    uri: (b) => b.x2,
    said: /"x\.txt" .*larger than 10 bytes, the size its commit records/,
  },
  {
    name: "a data object that never ends, snapshotted",
    rules: () => [{ match: isGet("/cat/x.txt", "versionId"), body: "endless" }],
    op: "snapshot",
    uri: (b) => b.x2,
    said: /"x\.txt" .*larger than 10 bytes, the size its commit records/,
  },
  {
    name: "a list of versions that never ends",
    rules: () => [{ match: isGet("/", "versions"), body: "endless" }],
    op: "commit",
    uri: (b) => b.x2.replace(/\?.*/, ""),
    said: /answer .*larger than 8 MiB/,
  },
  {
    name: "a list of versions that says it goes on for ever",
    rules: () => [{ match: isGet("/", "versions"), body: "truncated" }],
    op: "commit",
    uri: (b) => b.x2.replace(/\?.*/, ""),
    said:
      /the list of versions under "x\.txt" .*says it has more, but its next page starts where this one did/,
  },
  {
    name: "a server that answers a commit's read with nothing, not even headers",
    rules: (b) => [{ match: isGet(`${idOf(b.x1)}.json`), body: "silent" }],
    timeout: 1,
    op: "read",
    uri: (b) => b.x1,
    said: /cannot read a commit of bucket .*: the server sent nothing for 1 s/,
  },
  {
    name: "a commit that stalls after its headers",
    rules: (b) => [{ match: isGet(`${idOf(b.x1)}.json`), body: "stall" }],
    timeout: 1,
    op: "read",
    uri: (b) => b.x1,
    said: /sent nothing for 1 s/,
  },
];

for (const c of CASES) {
  peerTest("s3", {
    name: `s3 read attacks: ${c.name} is refused in one line, in bounded memory, and loses nothing`,
    fn: async () => {
      const b = await committedBucket();
      try {
        for (const [key, size] of Object.entries(c.planted ?? {})) {
          await plant(b.bucket, `cat/${key}`, new Uint8Array(size).fill(0x61));
        }
        await using proxy = hostileS3(S3_ENDPOINT!, c.rules?.(b) ?? []);
        const config = configOf(b.bucket, proxy.url, join(b.cache, "attacked"), c.timeout);
        const { grew, got } = await measuredInChild<Outcome>(
          "./_s3_read_work.ts",
          "attack",
          config,
          b.w2,
          c.op,
          c.uri(b),
        );
        console.log(`${c.name}: grew ${(grew / MiB).toFixed(1)} MiB`);
        const message = got.message ?? "";
        const stopped = got.message !== null && c.said.test(message) && !message.includes("\n");
        const bounded = grew < (c.bound ?? BOUND);
        const kept = await stillRecorded(b.bucket, b.cache, [
          b.x1,
          b.x2,
          b.w2,
          ...(c.branch === false ? [] : [`${ROUTE}/x.txt`]),
        ]);
        tally.add(c.name, { stopped: stopped && bounded, recorded: kept });
        assert.ok(stopped, `${c.name}: ${got.message === null ? "it passed" : message}`);
        assert.ok(bounded, `${c.name}: the process grew by ${Math.round(grew / MiB)} MiB`);
        assert.ok(kept, `${c.name}: what the bucket recorded no longer reads`);
      } finally {
        await removeWritable(b.cache);
      }
    },
  });
}

peerTest("s3", {
  name: "s3 read attacks: a put of a sparse file of 6 GiB is refused in one line before it is read",
  fn: async () => {
    const b = await committedBucket();
    try {
      const source = join(b.cache, "sparse.bin");
      await using file = await Deno.open(source, { write: true, createNew: true });
      await file.truncate(6 * 1024 * MiB);
      const config = configOf(b.bucket, S3_ENDPOINT!, join(b.cache, "put"));
      const { grew, got } = await measuredInChild<Outcome>(
        "./_s3_read_work.ts",
        "attack",
        config,
        b.w2,
        "put",
        `${ROUTE}/big.bin`,
        source,
      );
      console.log(`a put of a sparse file of 6 GiB: grew ${(grew / MiB).toFixed(1)} MiB`);
      const stopped =
        /sparse\.bin holds 6442450944 bytes, more than the 5368709120/.test(got.message ?? "") &&
        !got.message!.includes("\n") && grew < BOUND;
      const kept = await stillRecorded(b.bucket, b.cache, [b.x1, b.x2, b.w2, `${ROUTE}/x.txt`]);
      tally.add("a put of a sparse file of 6 GiB", { stopped, recorded: kept });
      assert.ok(stopped, `${got.message ?? "it passed"} (grew ${Math.round(grew / MiB)} MiB)`);
      assert.ok(kept);
    } finally {
      await removeWritable(b.cache);
    }
  },
});

peerTest("s3", {
  name: "s3 read attacks: the tally",
  fn: () => {
    console.log(tally.line());
    assert.equal(tally.missed.length, 0, tally.line());
  },
});

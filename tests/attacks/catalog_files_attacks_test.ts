/**
 * What a catalog's store holds on this machine, read within caps: a git repository or a folder that another
 * party writes can hold a file of gigabytes in a few MiB (a blob of zeros, a sparse file), which `read` took whole
 * into memory and a git snapshot too; and the small files the catalog keeps beside (a git store's staging list,
 * a fetch's record, the cache of a folder's hashes, the config) were read with a plain open, which a FIFO put in
 * their place holds for ever. `read` past 1 GiB is refused in one line, a snapshot streams whatever its size, and
 * a FIFO is refused (or its record taken as missing) at once; what was recorded before still reads.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Catalog, type CatalogConfig } from "../../lib/provcat/mod.ts";
import { removeWritable } from "../_files.ts";
import { measuredInChild } from "./_setup.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("catalog file attacks");
const MiB = 1024 * 1024;
/** The most a read may grow the process by; a snapshot, whatever its size (768 MiB: 88 MiB), by 128 MiB. */
const BOUND = 48 * MiB;

async function git(cwd: string, ...args: string[]): Promise<void> {
  const out = await new Deno.Command("git", {
    args: ["-c", "user.name=t", "-c", "user.email=t@t", ...args],
    cwd,
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
}

/** A repository with `small.txt` and a file of zeros of `size` bytes (sparse, so free on the disk), committed. */
async function lake(size: number): Promise<{ dir: string; config: CatalogConfig }> {
  const dir = await Deno.makeTempDir({ prefix: "attack-catalog-files-" });
  const repo = join(dir, "lake");
  await git(dir, "init", "-q", "-b", "main", repo);
  await Deno.writeTextFile(join(repo, "small.txt"), "recorded\n");
  await using big = await Deno.open(join(repo, "big.bin"), { write: true, createNew: true });
  await big.truncate(size);
  await git(repo, "add", "small.txt", "big.bin");
  await git(repo, "commit", "-qm", "lake");
  return {
    dir,
    config: {
      cache: join(dir, "cache"),
      stores: { lake: { type: "git", path: repo }, folder: { type: "folder", path: repo } },
      routes: [{ prefix: "d://a/b/c", store: "lake" }, { prefix: "f://a/b/c", store: "folder" }],
    },
  };
}

async function stillReads(config: CatalogConfig, uri: string): Promise<boolean> {
  await using catalog = await Catalog.open({ config });
  return new TextDecoder().decode(await catalog.read(uri)) === "recorded\n";
}

interface Measured {
  name: string;
  size: number;
  op: "read" | "snapshot";
  uri: string;
  said: RegExp | null;
  bound?: number;
}
const MEASURED: Measured[] = [
  {
    name: "a git blob of 1.1 GiB, read",
    size: 1100 * MiB,
    op: "read",
    uri: "d://a/b/c/big.bin",
    said:
      /"big\.bin" in store "lake" at commit [0-9a-f]{40} is larger than 1024 MiB, the most the catalog reads into memory/,
  },
  {
    name: "a file of a folder store of 1.1 GiB, read",
    size: 1100 * MiB,
    op: "read",
    uri: "f://a/b/c/big.bin",
    said: /"big\.bin" in store "folder" .* is larger than 1024 MiB, the most the catalog reads into memory/,
  },
  {
    name: "a git blob of 256 MiB, snapshotted",
    size: 256 * MiB,
    op: "snapshot",
    uri: "d://a/b/c/big.bin",
    said: null,
    bound: 128 * MiB,
  },
];

for (const c of MEASURED) {
  Deno.test(`catalog file attacks: ${c.name}, in bounded memory, one line, losing nothing`, async () => {
    const { dir, config } = await lake(c.size);
    try {
      const { grew, got } = await measuredInChild<{ message: string | null }>(
        "./_catalog_files_work.ts",
        "attack",
        config,
        c.op,
        c.uri,
      );
      console.log(`${c.name}: grew ${(grew / MiB).toFixed(1)} MiB`);
      const message = got.message ?? "";
      const stopped = c.said === null
        ? got.message === null
        : c.said.test(message) && !message.includes("\n");
      const bounded = grew < (c.bound ?? BOUND);
      const kept = await stillReads(config, "d://a/b/c/small.txt");
      tally.add(c.name, { stopped: stopped && bounded, recorded: kept });
      assert.ok(stopped, `${c.name}: ${got.message ?? "it passed"}`);
      assert.ok(bounded, `${c.name}: the process grew by ${Math.round(grew / MiB)} MiB`);
      assert.ok(kept, `${c.name}: what was recorded no longer reads`);
    } finally {
      await removeWritable(dir);
    }
  });
}

/** Runs `work` with a FIFO at `fifo`; a reader left waiting on it is let go (an open both ways never waits). */
async function withFifo<T>(fifo: string, work: () => Promise<T>): Promise<T | "waited"> {
  await Deno.remove(fifo, { recursive: true }).catch(() => {});
  assert.ok((await new Deno.Command("mkfifo", { args: [fifo] }).output()).success, "mkfifo");
  let timer: ReturnType<typeof setTimeout> | undefined;
  const waited = new Promise<"waited">((resolve) => timer = setTimeout(() => resolve("waited"), 30_000));
  const done = work().catch((error: Error) => error as T);
  const found = await Promise.race([done, waited]).finally(() => clearTimeout(timer));
  if (found === "waited") {
    Deno.openSync(fifo, { read: true, write: true }).close();
    await done;
  }
  return found;
}

const FIFOS: {
  name: string;
  /** The FIFO's path, in the lake's folder; made after `before`. */
  at: (dir: string) => string;
  before?: (catalog: Catalog) => Promise<unknown>;
  work: (config: CatalogConfig, dir: string) => Promise<unknown>;
  /** What the work must give: true, or an error whose message matches. */
  gives: RegExp | true;
}[] = [
  {
    name: "a git store's staging list that is a FIFO",
    at: (dir) => join(dir, "lake", ".git", "provcat", "stage", "main.json"),
    before: (catalog) => catalog.put("d://a/b/c/new.txt", new TextEncoder().encode("new\n")),
    work: async (config) => {
      await using catalog = await Catalog.open({ config });
      return await catalog.commit("d://a/b/c/new.txt", "new");
    },
    gives: /staging list .*main\.json cannot be read: .* is not a plain file/,
  },
  {
    name: "a fetch's record that is a FIFO",
    at: (dir) => dir, // set by before
    before: async (catalog) => {
      const fetched = await catalog.fetch("d://a/b/c/small.txt?at=branch:main");
      fifoAt = join(fetched.path, "..", ".complete");
    },
    work: async (config) => {
      await using catalog = await Catalog.open({ config });
      const fetched = await catalog.fetch("d://a/b/c/small.txt?at=branch:main");
      return (await Deno.readTextFile(fetched.path)) === "recorded\n";
    },
    gives: true,
  },
  {
    name: "the cache of a folder's hashes that is a FIFO",
    at: (dir) => dir,
    before: async (catalog) => {
      await catalog.snapshot("f://a/b/c/small.txt");
      const folder = join(catalog.cache, "stat-hashes");
      for await (const e of Deno.readDir(folder)) fifoAt = join(folder, e.name);
    },
    work: async (config) => {
      await using catalog = await Catalog.open({ config });
      const snap = await catalog.snapshot("f://a/b/c/small.txt");
      return (await Deno.readTextFile(snap.path)) === "recorded\n";
    },
    gives: true,
  },
  {
    name: "a catalog config that is a FIFO",
    at: (dir) => join(dir, "provcat.yaml"),
    work: (_config, dir) => Catalog.open({ configPath: join(dir, "provcat.yaml") }),
    gives: /cannot open the catalog: cannot read .*provcat\.yaml: .* is not a plain file/,
  },
];
let fifoAt = "";

for (const c of FIFOS) {
  Deno.test(`catalog file attacks: ${c.name} is refused at once, in one line, losing nothing`, async () => {
    const { dir, config } = await lake(16);
    try {
      fifoAt = c.at(dir);
      if (c.before) {
        await using catalog = await Catalog.open({ config });
        await c.before(catalog);
      }
      const got = await withFifo(fifoAt, () => c.work(config, dir));
      const message = got instanceof Error ? got.message : String(got);
      const stopped = c.gives === true ? got === true : got instanceof Error && c.gives.test(message) &&
        !message.includes("\n");
      const kept = await stillReads(config, "d://a/b/c/small.txt");
      tally.add(c.name, { stopped, recorded: kept });
      assert.ok(stopped, `${c.name}: ${message}`);
      assert.ok(kept, `${c.name}: what was recorded no longer reads`);
    } finally {
      await removeWritable(dir);
    }
  });
}

Deno.test("catalog file attacks: the tally", () => {
  console.log(tally.line());
  assert.equal(tally.missed.length, 0, tally.line());
});

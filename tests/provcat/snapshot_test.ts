import { createHash } from "node:crypto";
import { join } from "node:path";
import { assert, assertEquals, assertRejects } from "./_assert.ts";
import { Catalog, CatalogError } from "./_deps.ts";
import { commitFiles, git, makeRepo } from "./_helpers.ts";
import { makeWritable, removeWritable } from "../_files.ts";

/**
 * A git repository `lake` and a catalog over it with an empty cache; with `rounds`, `fn` runs that many times,
 * each time with a new catalog on a new empty cache over the one repository (the races are in the cache).
 */
async function withLake(
  fn: (catalog: Catalog, repo: string, dir: string, cache: string) => Promise<void>,
  options: { rounds?: number } = {},
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "provcat-snap-" });
  const repo = await makeRepo(join(dir, "lake"), { "evals/q.csv": "v1\n", "evals/sub/n.txt": "n" });
  try {
    for (let round = 0; round < (options.rounds ?? 1); round++) {
      const cache = join(dir, round ? `cache-${round}` : "cache");
      const catalog = await Catalog.open({
        config: {
          cache,
          stores: { lake: { type: "git", path: repo } },
          routes: [{ prefix: "data://acme/risk/dev", store: "lake" }],
        },
      });
      await fn(catalog, repo, dir, cache);
    }
  } finally {
    await removeWritable(dir);
  }
}

Deno.test("a snapshot does not change after the branch moves and the cache fetches the new version", async () => {
  await withLake(async (catalog, repo) => {
    const uri = "data://acme/risk/dev/evals?at=branch:main";
    const first = await catalog.snapshot(uri);
    const firstFetch = await catalog.fetch(uri);
    await commitFiles(repo, { "evals/q.csv": "v2\n" }, "v2");
    const fetched = await catalog.fetch(uri);
    assert(fetched.pinned !== first.pinned, "the branch moved");
    assert(
      fetched.path !== first.path && fetched.path !== firstFetch.path,
      "the new version has its own folder",
    );
    assertEquals(await Deno.readTextFile(join(fetched.path, "q.csv")), "v2\n");
    assertEquals(await Deno.readTextFile(join(firstFetch.path, "q.csv")), "v1\n");
    const second = await catalog.snapshot(uri);
    assert(second.sha256 !== first.sha256 && second.path !== first.path);
    assertEquals(await Deno.readTextFile(join(first.path, "q.csv")), "v1\n");
    assertEquals(await Deno.readTextFile(join(second.path, "q.csv")), "v2\n");
  });
});

Deno.test("a snapshot is content-addressed: a folder's hash is of its sorted files and their hashes", async () => {
  await withLake(async (catalog, _repo, dir) => {
    const snap = await catalog.snapshot("data://acme/risk/dev/evals");
    const h = (t: string) => createHash("sha256").update(t).digest("hex");
    const list = `${h("v1\n")}  q.csv\n${h("n")}  sub/n.txt\n`;
    assertEquals(snap.sha256, h(list));
    assertEquals(snap.path, join(dir, "cache", "snapshots", "folder", h(list), "evals"));
    const file = await catalog.snapshot("data://acme/risk/dev/evals/q.csv");
    assertEquals(file.path, join(dir, "cache", "snapshots", "file", h("v1\n"), "q.csv"));
    assertEquals(file.kind, "file");
  });
});

Deno.test("a snapshot is reused while its hash matches", async () => {
  await withLake(async (catalog) => {
    const first = await catalog.snapshot("data://acme/risk/dev/evals");
    const again = await catalog.snapshot("data://acme/risk/dev/evals");
    assertEquals([first.reused, again.reused, again.path], [false, true, first.path]);
  });
});

Deno.test("a snapshot whose files were changed on disk is not reused, and is replaced", async () => {
  await withLake(async (catalog) => {
    const first = await catalog.snapshot("data://acme/risk/dev/evals");
    const file = join(first.path, "q.csv");
    await Deno.chmod(file, 0o644);
    await Deno.writeTextFile(file, "tampered\n");
    const again = await catalog.snapshot("data://acme/risk/dev/evals");
    assertEquals(again.reused, false);
    assertEquals(again.path, first.path);
    assertEquals(await Deno.readTextFile(file), "v1\n");
    assertEquals((await Deno.stat(file)).mode! & 0o222, 0);
  });
});

Deno.test("a snapshot whose file was removed or added to is not reused", async () => {
  await withLake(async (catalog) => {
    const first = await catalog.snapshot("data://acme/risk/dev/evals");
    await Deno.chmod(first.path, 0o755);
    await Deno.writeTextFile(join(first.path, "extra"), "x");
    const again = await catalog.snapshot("data://acme/risk/dev/evals");
    assertEquals(again.reused, false);
    await assertMissing(join(first.path, "extra"));
  });
});

async function assertMissing(path: string): Promise<void> {
  try {
    await Deno.stat(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return;
    throw error;
  }
  throw new Error(`${path} exists`);
}

Deno.test("a fetched version changed in the cache is fetched again, so its snapshot holds the pinned content", async () => {
  await withLake(async (catalog, repo) => {
    const first = await git(repo, "rev-parse", "HEAD");
    await commitFiles(repo, { "evals/q.csv": "v2\n" }, "v2");
    const uri = `data://acme/risk/dev/evals/q.csv?at=commit:${first}`;
    const fetched = await catalog.fetch(uri);
    await Deno.chmod(fetched.path, 0o644);
    await Deno.writeTextFile(fetched.path, "tampered\n");
    const snap = await catalog.snapshot(uri);
    assertEquals(await Deno.readTextFile(snap.path), "v1\n");
    assertEquals(snap.sha256, createHash("sha256").update("v1\n").digest("hex"));
    const again = await catalog.fetch(uri);
    assertEquals(await Deno.readTextFile(again.path), "v1\n");
  });
});

Deno.test("a snapshot whose file was replaced by a link is replaced, not followed", async () => {
  await withLake(async (catalog, _repo, dir) => {
    const file = await catalog.snapshot("data://acme/risk/dev/evals/q.csv");
    await Deno.writeTextFile(join(dir, "outside"), "v1\n");
    await Deno.remove(file.path);
    await Deno.symlink(join(dir, "outside"), file.path);
    const again = await catalog.snapshot("data://acme/risk/dev/evals/q.csv");
    assertEquals([again.reused, again.path], [false, file.path]);
    assert(!(await Deno.lstat(file.path)).isSymlink);
    const folder = await catalog.snapshot("data://acme/risk/dev/evals");
    await Deno.chmod(folder.path, 0o755);
    await Deno.chmod(join(folder.path, "q.csv"), 0o644);
    await Deno.remove(join(folder.path, "q.csv"));
    await Deno.symlink(join(dir, "outside"), join(folder.path, "q.csv"));
    const folderAgain = await catalog.snapshot("data://acme/risk/dev/evals");
    assertEquals(folderAgain.reused, false);
    assert(!(await Deno.lstat(join(folder.path, "q.csv"))).isSymlink);
  });
});

Deno.test("a snapshot that was made writable is handed out read-only again", async () => {
  await withLake(async (catalog) => {
    const first = await catalog.snapshot("data://acme/risk/dev/evals");
    await makeWritable(first.path);
    const again = await catalog.snapshot("data://acme/risk/dev/evals");
    assertEquals(again.reused, true);
    assertEquals((await Deno.stat(join(again.path, "q.csv"))).mode! & 0o222, 0);
    assertEquals((await Deno.stat(join(again.path, "sub"))).mode! & 0o222, 0);
  });
});

Deno.test("snapshots of one version made at once by two catalogs on one cache all succeed", async () => {
  await withLake(async (catalog, repo, dir) => {
    const other = await Catalog.open({
      config: {
        cache: join(dir, "cache"),
        stores: { lake: { type: "git", path: repo } },
        routes: [{ prefix: "data://acme/risk/dev", store: "lake" }],
      },
    });
    const snaps = await Promise.all(
      Array.from({ length: 8 }, (_, i) => (i % 2 ? other : catalog).snapshot("data://acme/risk/dev/evals")),
    );
    assertEquals(new Set(snaps.map((s) => s.path)).size, 1);
    assertEquals(await Deno.readTextFile(join(snaps[0]!.path, "q.csv")), "v1\n");
  });
});

async function withFolders(fn: (catalog: Catalog, root: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "provcat-snapf-" });
  const catalog = await Catalog.open({
    config: {
      cache: join(dir, "cache"),
      stores: { f: { type: "folder", path: join(dir, "f") } },
      routes: [{ prefix: "data://acme/f/dev", store: "f" }],
    },
  });
  try {
    await fn(catalog, join(dir, "f"));
  } finally {
    await removeWritable(dir);
  }
}

Deno.test("a folder's hash escapes a name with a newline, so one file cannot pass for two", async () => {
  await withFolders(async (catalog, root) => {
    const h = (t: string) => createHash("sha256").update(t).digest("hex");
    await Deno.mkdir(join(root, "x", "d"), { recursive: true });
    await Deno.writeTextFile(join(root, "x", "d", "a"), "1");
    await Deno.writeTextFile(join(root, "x", "d", "b"), "2");
    await Deno.mkdir(join(root, "y", "d"), { recursive: true });
    await Deno.writeTextFile(join(root, "y", "d", `a\n${h("2")}  b`), "1");
    const x = await catalog.snapshot("data://acme/f/dev/x/d");
    const y = await catalog.snapshot("data://acme/f/dev/y/d");
    assert(x.sha256 !== y.sha256, "different content, different hash");
    assertEquals(y.sha256, h(`\\${h("1")}  a\\n${h("2")}  b\n`));
    assertEquals(await Deno.readTextFile(join(y.path, `a\n${h("2")}  b`)), "1");
  });
});

Deno.test("a folder's files are listed in the byte order of their names, as LC_ALL=C sort gives", async () => {
  await withFolders(async (catalog, root) => {
    const h = (t: string) => createHash("sha256").update(t).digest("hex");
    await Deno.mkdir(join(root, "d"), { recursive: true });
    await Deno.writeTextFile(join(root, "d", "\uFF01"), "1");
    await Deno.writeTextFile(join(root, "d", "\u{1F600}"), "2");
    const snap = await catalog.snapshot("data://acme/f/dev/d");
    assertEquals(snap.sha256, h(`${h("1")}  \uFF01\n${h("2")}  \u{1F600}\n`));
  });
});

Deno.test({
  name: "a fifo in a folder is refused, not read forever",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    await withFolders(async (catalog, root) => {
      await Deno.mkdir(join(root, "d"), { recursive: true });
      await Deno.writeTextFile(join(root, "d", "a"), "1");
      await new Deno.Command("mkfifo", { args: [join(root, "d", "pipe")] }).output();
      let id: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<never>((_, reject) => {
        id = setTimeout(() => reject(new Error("hung on the fifo")), 60_000);
      });
      try {
        await assertRejects(
          () => Promise.race([catalog.snapshot("data://acme/f/dev/d"), timeout]),
          CatalogError,
          "not a regular file",
        );
        await assertRejects(
          () => Promise.race([catalog.snapshot("data://acme/f/dev/d/pipe"), timeout]),
          CatalogError,
          "not a regular file",
        );
      } finally {
        clearTimeout(id);
      }
    });
  },
});

Deno.test("many snapshots of one version at once, round after round: none fails, none is removed under another", async () => {
  await withLake(async (catalog, repo, _dir, cache) => {
    const other = await Catalog.open({
      config: {
        cache,
        stores: { lake: { type: "git", path: repo } },
        routes: [{ prefix: "data://acme/risk/dev", store: "lake" }],
      },
    });
    const settled = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => (i % 2 ? other : catalog).snapshot("data://acme/risk/dev/evals")),
    );
    const failed = settled.filter((s) => s.status === "rejected").map((s) =>
      String((s as PromiseRejectedResult).reason)
    );
    assertEquals(failed, []);
    const paths = new Set(settled.map((s) => (s as PromiseFulfilledResult<{ path: string }>).value.path));
    assertEquals(paths.size, 1);
    assertEquals(await Deno.readTextFile(join([...paths][0]!, "q.csv")), "v1\n");
  }, { rounds: 10 });
});

Deno.test("a tampered snapshot replaced by many snapshots at once: none fails, and the one handed out stays", async () => {
  await withLake(async (catalog) => {
    const uri = "data://acme/risk/dev/evals";
    const first = await catalog.snapshot(uri);
    await makeWritable(first.path);
    await Deno.writeTextFile(join(first.path, "q.csv"), "tampered\n");
    const settled = await Promise.allSettled(Array.from({ length: 8 }, () => catalog.snapshot(uri)));
    const failed = settled.filter((s) => s.status === "rejected").map((s) =>
      String((s as PromiseRejectedResult).reason)
    );
    assertEquals(failed, []);
    assertEquals(await Deno.readTextFile(join(first.path, "q.csv")), "v1\n");
  }, { rounds: 10 });
});

Deno.test("a tampered fetched copy replaced by many fetches at once: none fails, and the one handed out stays", async () => {
  await withLake(async (catalog) => {
    const uri = "data://acme/risk/dev/evals?at=branch:main";
    const first = await catalog.fetch(uri);
    await makeWritable(first.path);
    await Deno.writeTextFile(join(first.path, "q.csv"), "tampered\n");
    const settled = await Promise.allSettled(Array.from({ length: 8 }, () => catalog.fetch(uri)));
    const failed = settled.filter((s) => s.status === "rejected").map((s) =>
      String((s as PromiseRejectedResult).reason)
    );
    assertEquals(failed, []);
    assertEquals(await Deno.readTextFile(join(first.path, "q.csv")), "v1\n");
  }, { rounds: 10 });
});

import { join } from "node:path";
import { assert, assertEquals, assertRejects } from "./_assert.ts";
import { Catalog, CatalogError, CatalogNotFound } from "./_deps.ts";
import { commitFiles, git, makeRepo } from "./_helpers.ts";
import { storeContract } from "./store_contract.ts";
import { removeWritable } from "../_files.ts";

storeContract("git (working tree)", async () => {
  const path = await Deno.makeTempDir({ prefix: "provcat-git-" });
  await makeRepo(path, { "README.md": "lake\n" });
  return {
    config: { type: "git", path },
    versioned: true,
    cleanup: () => Deno.remove(path, { recursive: true }),
  };
});

storeContract("git (bare)", async () => {
  const path = await Deno.makeTempDir({ prefix: "provcat-gitbare-" });
  await git(path, "init", "-q", "--bare", "-b", "main");
  return {
    config: { type: "git", path },
    versioned: true,
    cleanup: () => Deno.remove(path, { recursive: true }),
  };
});

async function withLake(fn: (catalog: Catalog, repo: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "provcat-lake-" });
  const repo = await makeRepo(join(dir, "lake"), { "evals/revenue.csv": "q,a\n1,2\n" });
  const catalog = await Catalog.open({
    config: {
      cache: join(dir, "cache"),
      stores: { lake: { type: "git", path: repo } },
      routes: [{ prefix: "data+table://acme/risk/dev", store: "lake" }],
    },
  });
  try {
    await fn(catalog, repo);
  } finally {
    await catalog.close();
    await removeWritable(dir);
  }
}

Deno.test("git store: a branch selector moves with the branch, a commit selector does not", async () => {
  await withLake(async (catalog, repo) => {
    const first = await git(repo, "rev-parse", "HEAD");
    const pin1 = await catalog.pin("data+table://acme/risk/dev/evals/revenue.csv?at=branch:main");
    assertEquals(pin1.pinned, `data+table://acme/risk/dev/evals/revenue.csv?at=commit:${first}`);
    const second = await commitFiles(repo, { "evals/revenue.csv": "q,a\n1,3\n" }, "fix");
    const pin2 = await catalog.pin("data+table://acme/risk/dev/evals/revenue.csv?at=branch:main");
    assertEquals(pin2.pinned, `data+table://acme/risk/dev/evals/revenue.csv?at=commit:${second}`);
    const fixed = await catalog.read(`data+table://acme/risk/dev/evals/revenue.csv?at=commit:${first}`);
    assertEquals(new TextDecoder().decode(fixed), "q,a\n1,2\n");
  });
});

Deno.test("git store: a short commit ID pins to the full one", async () => {
  await withLake(async (catalog, repo) => {
    const head = await git(repo, "rev-parse", "HEAD");
    const pin = await catalog.pin(`data+table://acme/risk/dev/evals?at=commit:${head.slice(0, 8)}`);
    assertEquals(pin.pinned, `data+table://acme/risk/dev/evals?at=commit:${head}`);
  });
});

Deno.test("git store: an unknown branch or commit, or a version selector, is refused by name", async () => {
  await withLake(async (catalog) => {
    await assertRejects(
      () => catalog.pin("data+table://acme/risk/dev/evals?at=branch:nope"),
      CatalogNotFound,
      '"nope"',
    );
    await assertRejects(
      () => catalog.pin("data+table://acme/risk/dev/evals?at=commit:0123456789abcdef"),
      CatalogNotFound,
    );
    await assertRejects(
      () => catalog.pin("data+table://acme/risk/dev/evals?at=version:v1"),
      CatalogError,
      "commit:",
    );
  });
});

Deno.test("git store: a commit in a checked-out branch leaves the user's other changes alone", async () => {
  await withLake(async (catalog, repo) => {
    await Deno.writeTextFile(join(repo, "mine.txt"), "uncommitted work");
    await git(repo, "add", "mine.txt");
    await catalog.put("data+table://acme/risk/dev/runs/r1", new TextEncoder().encode("bundle"));
    await catalog.commit("data+table://acme/risk/dev/runs/r1", "bundle r1");
    assertEquals(await git(repo, "log", "-1", "--format=%s"), "bundle r1");
    assertEquals(await git(repo, "show", "HEAD:runs/r1"), "bundle");
    assertEquals(await Deno.readTextFile(join(repo, "runs", "r1")), "bundle");
    const status = await git(repo, "status", "--porcelain");
    assertEquals(status, "A  mine.txt");
    assert(!(await git(repo, "ls-tree", "-r", "--name-only", "HEAD")).includes("mine.txt"));
  });
});

Deno.test("git store: a path that is not a repository is a clear error", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const catalog = await Catalog.open({
      config: {
        stores: { lake: { type: "git", path: dir } },
        routes: [{ prefix: "d://a/b/c", store: "lake" }],
      },
    });
    await assertRejects(() => catalog.pin("d://a/b/c/x"), CatalogError, "is not a git repository");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("git store: a commit selector names a commit, never a branch or tag that looks like one", async () => {
  await withLake(async (catalog, repo) => {
    const first = await git(repo, "rev-parse", "HEAD");
    await commitFiles(repo, { "evals/revenue.csv": "q,a\n1,3\n" }, "second");
    // A branch and a tag whose names are hex, pointing at the second commit.
    await git(repo, "branch", "deadbee", "HEAD");
    await git(repo, "tag", first.slice(0, 7).replace(/./, (c) => (c === "a" ? "b" : "a")), "HEAD");
    await assertRejects(
      () => catalog.pin("data+table://acme/risk/dev/evals?at=commit:deadbee"),
      CatalogNotFound,
      "deadbee",
    );
    // The first commit's own short ID still names it, even with a branch of that name on the second.
    await git(repo, "branch", first.slice(0, 7), "HEAD");
    const pin = await catalog.pin(
      `data+table://acme/risk/dev/evals/revenue.csv?at=commit:${first.slice(0, 7)}`,
    );
    assertEquals(pin.pinned, `data+table://acme/risk/dev/evals/revenue.csv?at=commit:${first}`);
    const bytes = await catalog.read(
      `data+table://acme/risk/dev/evals/revenue.csv?at=commit:${first.slice(0, 7)}`,
    );
    assertEquals(new TextDecoder().decode(bytes), "q,a\n1,2\n");
  });
});

Deno.test("git store: a tree with a .. entry is refused, not written outside the cache", async () => {
  await withLake(async (catalog, repo) => {
    const dir = join(repo, "..");
    const mktree = async (entries: string) => {
      const out = await new Deno.Command("git", {
        args: ["mktree"],
        cwd: repo,
        stdin: "piped",
        stdout: "piped",
      }).spawn();
      const writer = out.stdin.getWriter();
      await writer.write(new TextEncoder().encode(entries));
      await writer.close();
      return new TextDecoder().decode((await out.output()).stdout).trim();
    };
    await Deno.writeTextFile(join(dir, "payload"), "escaped\n");
    const oid = await git(repo, "hash-object", "-w", join(dir, "payload"));
    await Deno.remove(join(dir, "payload"));
    let tree = await mktree(`100644 blob ${oid}\tescaped\n`);
    for (let i = 0; i < 4; i++) tree = await mktree(`040000 tree ${tree}\t..\n`);
    const root = await mktree(`040000 tree ${tree}\td\n`);
    const commit = await git(repo, "commit-tree", root, "-m", "evil");
    await git(repo, "update-ref", "refs/heads/evil", commit);
    await assertRejects(
      () => catalog.snapshot("data+table://acme/risk/dev/d?at=branch:evil"),
      CatalogError,
      "..",
    );
    for (const where of [dir, join(dir, "cache"), join(dir, "cache", "tmp")]) {
      const found = await Deno.stat(join(where, "escaped")).then(() => true, () => false);
      assert(!found, `nothing was written at ${join(where, "escaped")}`);
    }
  });
});

Deno.test("git store: a plain folder inside another repository is refused, not taken for that repository", async () => {
  await withLake(async (_catalog, repo) => {
    await Deno.mkdir(join(repo, "sub"));
    const head = await git(repo, "rev-parse", "HEAD");
    await using inner = await Catalog.open({
      config: {
        cache: join(repo, "..", "cache2"),
        stores: { sub: { type: "git", path: join(repo, "sub") } },
        routes: [{ prefix: "d://a/b/c", store: "sub" }],
      },
    });
    await assertRejects(() => inner.pin("d://a/b/c/evals"), CatalogError, "not the top of a git repository");
    await assertRejects(
      async () => {
        await inner.put("d://a/b/c/x", new TextEncoder().encode("x"));
        await inner.commit("d://a/b/c/x", "into the outer repository");
      },
      CatalogError,
      "not the top of a git repository",
    );
    assertEquals(await git(repo, "rev-parse", "HEAD"), head);
  });
});

Deno.test("git store: a commit in a checked-out branch removes the files it removed from the user's index too", async () => {
  await withLake(async (catalog, repo) => {
    await commitFiles(repo, { "runs/r1/a": "a", "runs/r1/b": "b" }, "r1");
    const src = await Deno.makeTempDir({ prefix: "provcat-src-" });
    try {
      await Deno.writeTextFile(join(src, "a"), "a2");
      await catalog.put("data+table://acme/risk/dev/runs/r1", src);
      await catalog.commit("data+table://acme/risk/dev/runs/r1", "r1 without b");
    } finally {
      await Deno.remove(src, { recursive: true });
    }
    assertEquals(await git(repo, "ls-tree", "-r", "--name-only", "HEAD", "runs"), "runs/r1/a");
    assertEquals(await git(repo, "status", "--porcelain"), "");
    assertEquals(await Deno.readTextFile(join(repo, "runs", "r1", "a")), "a2");
  });
});

Deno.test("git store: a commit that would overwrite the user's local changes in a checked-out branch is refused", async () => {
  await withLake(async (catalog, repo) => {
    const head = await git(repo, "rev-parse", "HEAD");
    await Deno.writeTextFile(join(repo, "evals", "revenue.csv"), "my unsaved work\n");
    await catalog.put("data+table://acme/risk/dev/evals/revenue.csv", new TextEncoder().encode("theirs\n"));
    await assertRejects(
      () => catalog.commit("data+table://acme/risk/dev/evals", "overwrite"),
      CatalogError,
      "local changes to evals/revenue.csv",
    );
    assertEquals(await Deno.readTextFile(join(repo, "evals", "revenue.csv")), "my unsaved work\n");
    assertEquals(await git(repo, "rev-parse", "HEAD"), head);
  });
});

Deno.test("git store: git's output is read within a cap, git killed past it, in one line", async () => {
  const dir = await Deno.makeTempDir({ prefix: "provcat-gitcap-" });
  try {
    const repo = await makeRepo(join(dir, "lake"), { "a.txt": "x".repeat(100) });
    const { runGit } = await import("../../lib/provcat/_git.ts");
    const error = await assertRejects(
      () => runGit(["-C", repo, "cat-file", "blob", "HEAD:a.txt"], { max: 10 }),
      CatalogError,
    );
    assertEquals(
      error.message,
      "the output of git cat-file is larger than 10 bytes, the most the catalog takes of it; it was not read",
    );
    // input written while the output is read: 20,000 paths, whose IDs fill git's pipe before it has read them all
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => Deno.writeTextFile(join(dir, `f${i}`), `${i}\n`)),
    );
    const paths = Array.from({ length: 20_000 }, (_, i) => join(dir, `f${i % 20}`)).join("\n") + "\n";
    const ids = await runGit(["-C", repo, "hash-object", "--stdin-paths"], { stdin: paths });
    assertEquals(ids.code, 0);
    assertEquals(new TextDecoder().decode(ids.stdout).split("\n").filter(Boolean).length, 20_000);
  } finally {
    await removeWritable(dir);
  }
});

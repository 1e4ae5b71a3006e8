import { join } from "node:path";
import { assert, assertEquals, assertRejects } from "./_assert.ts";
import { Catalog, type CatalogCall, CatalogError, type CatalogOutcome, UriError } from "./_deps.ts";
import { makeRepo } from "./_helpers.ts";
import { removeWritable } from "../_files.ts";

async function tempDir(): Promise<string> {
  return await Deno.makeTempDir({ prefix: "provcat-catalog-" });
}

async function cleanup(dir: string): Promise<void> {
  await removeWritable(dir);
}

Deno.test("Catalog.open() reads provcat.yaml from the folder, with paths relative to the file", async () => {
  const dir = await tempDir();
  try {
    await Deno.mkdir(join(dir, "data", "x"), { recursive: true });
    await Deno.writeTextFile(join(dir, "data", "x", "a.txt"), "A");
    await Deno.writeTextFile(
      join(dir, "provcat.yaml"),
      "stores:\n  scratch: { type: folder, path: data }\nroutes:\n  - { prefix: 'data://acme/risk/dev/', store: scratch }\n",
    );
    const catalog = await Catalog.open({ cwd: dir, configPath: join(dir, "provcat.yaml") });
    assertEquals(new TextDecoder().decode(await catalog.read("data://acme/risk/dev/x/a.txt")), "A");
    assertEquals(catalog.cache, join(dir, ".provcat"));
  } finally {
    await cleanup(dir);
  }
});

Deno.test("Catalog.open() reads the file that PROVCAT_CONFIG names", async () => {
  const dir = await tempDir();
  const before = Deno.env.get("PROVCAT_CONFIG");
  try {
    await Deno.writeTextFile(join(dir, "cat.yaml"), "cache: c\nstores: {}\nroutes: []\n");
    Deno.env.set("PROVCAT_CONFIG", join(dir, "cat.yaml"));
    const catalog = await Catalog.open();
    assertEquals(catalog.cache, join(dir, "c"));
  } finally {
    if (before === undefined) Deno.env.delete("PROVCAT_CONFIG");
    else Deno.env.set("PROVCAT_CONFIG", before);
    await cleanup(dir);
  }
});

Deno.test("Catalog.open() without a config says where it looked and how to fix it", async () => {
  const dir = await tempDir();
  try {
    await assertRejects(
      () => Catalog.open({ configPath: join(dir, "provcat.yaml") }),
      CatalogError,
      "does not exist; write a provcat.yaml, set PROVCAT_CONFIG or pass --config FILE",
    );
  } finally {
    await cleanup(dir);
  }
});

Deno.test("Catalog.open() reports every problem of a config at once", async () => {
  const error = await assertRejects(
    () =>
      Catalog.open({
        config: {
          stores: { a: { type: "git", path: "" }, b: { type: "tape" } },
          routes: [{ prefix: "nope", store: "a" }],
          extra: 1,
        } as never,
      }),
    CatalogError,
  );
  for (const part of ['unknown key "extra"', "stores.a.path", "stores.b.type", "routes[0].prefix"]) {
    assert(error.message.includes(part), `${part} in ${error.message}`);
  }
});

Deno.test("a route to a store the config lacks is refused", async () => {
  await assertRejects(
    () => Catalog.open({ config: { routes: [{ prefix: "d://a/b/c", store: "ghost" }] } }),
    CatalogError,
    'names store "ghost"',
  );
});

Deno.test("a URI that no route covers is a clear error; a bad URI names its part", async () => {
  const catalog = await Catalog.open({ config: { stores: {}, routes: [] } });
  await assertRejects(
    () => catalog.pin("run://acme/demo/dev/r1"),
    CatalogError,
    'add a route for "run://acme/demo/dev"',
  );
  await assertRejects(() => catalog.pin("run://acme/demo"), UriError, "has no env");
});

Deno.test("the longest route prefix wins, and its path leads in the store", async () => {
  const dir = await tempDir();
  try {
    await Deno.mkdir(join(dir, "one", "deep", "x"), { recursive: true });
    await Deno.mkdir(join(dir, "two", "r"), { recursive: true });
    await Deno.writeTextFile(join(dir, "one", "deep", "x", "f"), "one");
    await Deno.writeTextFile(join(dir, "two", "r", "f"), "two");
    const catalog = await Catalog.open({
      config: {
        stores: {
          one: { type: "folder", path: join(dir, "one") },
          two: { type: "folder", path: join(dir, "two") },
        },
        routes: [
          { prefix: "d://a/b/c", store: "one", path: "deep" },
          { prefix: "d://a/b/c/special", store: "two", path: "r" },
        ],
      },
    });
    const read = async (uri: string) => new TextDecoder().decode(await catalog.read(uri));
    assertEquals(await read("d://a/b/c/x/f"), "one");
    assertEquals(await read("d://a/b/c/special/f"), "two");
    assertEquals(catalog.route("d://a/b/c/special/f").key, "r/f");
  } finally {
    await cleanup(dir);
  }
});

Deno.test("a tenant's part of the config replaces the routes and adds its stores", async () => {
  const dir = await tempDir();
  try {
    await Deno.mkdir(join(dir, "a"));
    await Deno.mkdir(join(dir, "b"));
    await Deno.writeTextFile(join(dir, "a", "f"), "A");
    await Deno.writeTextFile(join(dir, "b", "f"), "B");
    const config = {
      stores: { a: { type: "folder" as const, path: join(dir, "a") } },
      routes: [{ prefix: "d://acme/x/dev", store: "a" }],
      tenants: {
        beta: {
          stores: { b: { type: "folder" as const, path: join(dir, "b") } },
          routes: [{ prefix: "d://beta/x/dev", store: "b" }],
        },
      },
    };
    const top = await Catalog.open({ config });
    const beta = await Catalog.open({ config, tenant: "beta" });
    assertEquals(new TextDecoder().decode(await top.read("d://acme/x/dev/f")), "A");
    assertEquals(new TextDecoder().decode(await beta.read("d://beta/x/dev/f")), "B");
    await assertRejects(() => beta.read("d://acme/x/dev/f"), CatalogError, "no route covers");
    await assertRejects(
      () => Catalog.open({ config, tenant: "gamma" }),
      CatalogError,
      "the tenants are beta",
    );
  } finally {
    await cleanup(dir);
  }
});

Deno.test("two catalogs open in one process keep their own routes, caches and hooks", async () => {
  const dir = await tempDir();
  try {
    const repo = await makeRepo(join(dir, "lake"), { "x.txt": "lake" });
    await Deno.mkdir(join(dir, "plain"));
    await Deno.writeTextFile(join(dir, "plain", "x.txt"), "plain");
    const seenA: string[] = [];
    const seenB: string[] = [];
    const a = await Catalog.open({
      config: {
        cache: join(dir, "ca"),
        stores: { s: { type: "git", path: repo } },
        routes: [{ prefix: "d://o/d/e", store: "s" }],
      },
      hooks: { before: (c) => void seenA.push(c.op) },
    });
    const b = await Catalog.open({
      config: {
        cache: join(dir, "cb"),
        stores: { s: { type: "folder", path: join(dir, "plain") } },
        routes: [{ prefix: "d://o/d/e", store: "s" }],
      },
      hooks: { before: (c) => void seenB.push(c.op) },
    });
    const sa = await a.snapshot("d://o/d/e/x.txt");
    const sb = await b.snapshot("d://o/d/e/x.txt");
    assert(sa.pinned !== null && sb.pinned === null);
    assert(sa.path.startsWith(join(dir, "ca")) && sb.path.startsWith(join(dir, "cb")));
    assertEquals(await Deno.readTextFile(sa.path), "lake");
    assertEquals(await Deno.readTextFile(sb.path), "plain");
    assertEquals([seenA, seenB], [["snapshot"], ["snapshot"]]);
  } finally {
    await cleanup(dir);
  }
});

Deno.test("each hook fires before and after each operation, with the outcome", async () => {
  const dir = await tempDir();
  try {
    const repo = await makeRepo(join(dir, "lake"), { "x/a.txt": "a" });
    const calls: string[] = [];
    const outcomes: CatalogOutcome[] = [];
    const catalog = await Catalog.open({
      config: {
        cache: join(dir, "cache"),
        stores: { lake: { type: "git", path: repo } },
        routes: [{ prefix: "d://o/d/e", store: "lake" }],
      },
      hooks: {
        before: (c: CatalogCall) => void calls.push(`before ${c.op} ${c.uri} ${c.store}`),
        after: (c: CatalogCall, o: CatalogOutcome) => {
          calls.push(`after ${c.op}${c.message ? ` "${c.message}"` : ""} ${o.ok ? "ok" : "failed"}`);
          outcomes.push(o);
        },
      },
    });
    await catalog.pin("d://o/d/e/x");
    await catalog.fetch("d://o/d/e/x");
    await catalog.snapshot("d://o/d/e/x");
    await catalog.list("d://o/d/e/x");
    await catalog.read("d://o/d/e/x/a.txt");
    await catalog.put("d://o/d/e/y", new TextEncoder().encode("y"));
    await catalog.commit("d://o/d/e/y", "add y");
    await catalog.read("d://o/d/e/missing").catch(() => {});
    assertEquals(calls, [
      "before pin d://o/d/e/x lake",
      "after pin ok",
      "before fetch d://o/d/e/x lake",
      "after fetch ok",
      "before snapshot d://o/d/e/x lake",
      "after snapshot ok",
      "before list d://o/d/e/x lake",
      "after list ok",
      "before read d://o/d/e/x/a.txt lake",
      "after read ok",
      "before put d://o/d/e/y lake",
      "after put ok",
      "before commit d://o/d/e/y lake",
      'after commit "add y" ok',
      "before read d://o/d/e/missing lake",
      "after read failed",
    ]);
    const snap = outcomes[2] as { ok: true; result: { sha256: string; kind: string } };
    assertEquals(snap.result.kind, "folder");
  } finally {
    await cleanup(dir);
  }
});

Deno.test("a before-hook that throws stops the operation", async () => {
  const dir = await tempDir();
  try {
    await Deno.mkdir(join(dir, "store"));
    let afterCalled = false;
    const catalog = await Catalog.open({
      config: {
        stores: { s: { type: "folder", path: join(dir, "store") } },
        routes: [{ prefix: "d://o/d/e", store: "s" }],
      },
      hooks: {
        before: (c) => {
          if (c.op === "put") throw new Error("refused by policy");
        },
        after: () => void (afterCalled = true),
      },
    });
    await assertRejects(
      () => catalog.put("d://o/d/e/f", new TextEncoder().encode("x")),
      Error,
      "refused by policy",
    );
    assertEquals(afterCalled, false);
    await assertRejects(() => Deno.stat(join(dir, "store", "f")), Deno.errors.NotFound);
  } finally {
    await cleanup(dir);
  }
});

Deno.test("a physical file:/// URI needs no route and has no pin", async () => {
  const dir = await tempDir();
  try {
    await Deno.writeTextFile(join(dir, "f.csv"), "1,2\n");
    const catalog = await Catalog.open({ config: { cache: join(dir, "cache") } });
    const pin = await catalog.pin(`file://${dir}/f.csv`);
    assertEquals(pin.pinned, null);
    const snap = await catalog.snapshot(`file://${dir}/f.csv`);
    assertEquals(snap.kind, "file");
    assertEquals(await Deno.readTextFile(snap.path), "1,2\n");
  } finally {
    await cleanup(dir);
  }
});

Deno.test("Catalog.open() refuses a store branch that is git revision syntax or an option", async () => {
  for (const branch of ["main~1", "main^", "-f", "HEAD@{1}", "a..b"]) {
    await assertRejects(
      () =>
        Catalog.open({
          config: {
            stores: { a: { type: "git", path: "/tmp/x", branch }, b: { type: "s3", bucket: "b", branch } },
            routes: [{ prefix: "d://a/b/c", store: "a" }],
          },
        }),
      CatalogError,
      "stores.b.branch",
    );
  }
});

/**
 * The contract every catalog store passes, run through a Catalog with one route to the store. Each store's
 * test calls {@linkcode storeContract} with a function that makes a fresh store's config.
 */
import { assert, assertEquals, assertRejects } from "./_assert.ts";
import { join } from "node:path";
import { Catalog, CatalogError, CatalogNotFound, hashFolderForTest, type StoreConfig } from "./_deps.ts";
import { removeWritable } from "../_files.ts";
import { type PeerName, peerTest } from "../_peers.ts";

/** A fresh store for one test. */
export interface StoreUnderTest {
  config: StoreConfig;
  /** True when the store has commits. */
  versioned: boolean;
  cleanup(): Promise<void>;
}

const enc = (t: string) => new TextEncoder().encode(t);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

/**
 * Registers the contract's tests for one kind of store.
 *
 * @param kind The store's type, for the test names.
 * @param make Makes a fresh store.
 * @param options `peer`: the peer its tests need (only S3's server).
 */
export function storeContract(
  kind: string,
  make: () => Promise<StoreUnderTest>,
  options: { peer?: PeerName } = {},
): void {
  const test = (name: string, fn: (catalog: Catalog, s: StoreUnderTest, dir: string) => Promise<void>) =>
    peerTest(options.peer ?? null, {
      name: `${kind} store: ${name}`,
      sanitizeResources: false,
      sanitizeOps: false,
      fn: async () => {
        const s = await make();
        const dir = await Deno.makeTempDir({ prefix: "provcat-contract-" });
        const catalog = await Catalog.open({
          config: {
            cache: join(dir, "cache"),
            stores: { under: s.config },
            routes: [{ prefix: "data://acme/risk/dev", store: "under", path: "area" }],
          },
        });
        try {
          await fn(catalog, s, dir);
        } finally {
          await catalog.close();
          await s.cleanup();
          await Deno.remove(dir, { recursive: true }).catch(async () => {
            await removeWritable(dir);
          });
        }
      },
    });

  test("a file put and committed reads back, pinned only when the store has commits", async (catalog, s) => {
    await catalog.put("data://acme/risk/dev/notes/a.txt", enc("first"));
    const committed = await catalog.commit("data://acme/risk/dev/notes", "add a");
    assertEquals(committed.pinned !== null, s.versioned);
    if (s.versioned) assert(/\?at=(commit|version):/.test(committed.pinned!));
    assertEquals(dec(await catalog.read("data://acme/risk/dev/notes/a.txt")), "first");
    const pin = await catalog.pin("data://acme/risk/dev/notes/a.txt");
    assertEquals(pin.kind, "file");
    assertEquals(pin.pinned === null, !s.versioned);
    if (pin.pinned) assertEquals(dec(await catalog.read(pin.pinned)), "first");
  });

  test("a folder put and committed lists, fetches and snapshots its files", async (catalog, _s, dir) => {
    const src = join(dir, "src");
    await Deno.mkdir(join(src, "sub"), { recursive: true });
    await Deno.writeTextFile(join(src, "x.csv"), "a,b\n1,2\n");
    await Deno.writeTextFile(join(src, "sub", "y.txt"), "why");
    await catalog.put("data://acme/risk/dev/evals", src);
    await catalog.commit("data://acme/risk/dev/evals", "add evals");
    const listing = await catalog.list("data://acme/risk/dev/evals");
    assertEquals(listing.entries.map((e) => [e.name, e.kind, e.size]), [["sub", "folder", null], [
      "x.csv",
      "file",
      8,
    ]]);
    const fetched = await catalog.fetch("data://acme/risk/dev/evals");
    assertEquals(fetched.kind, "folder");
    assertEquals(await Deno.readTextFile(join(fetched.path, "sub", "y.txt")), "why");
    const snap = await catalog.snapshot("data://acme/risk/dev/evals");
    assertEquals(snap.sha256, await hashFolderForTest(src));
    assert(snap.path.endsWith(join("snapshots", "folder", snap.sha256, "evals")));
    assertEquals(await Deno.readTextFile(join(snap.path, "x.csv")), "a,b\n1,2\n");
    // Checked by mode, since root (as in CI containers) writes past the mode.
    assertEquals((await Deno.stat(join(snap.path, "x.csv"))).mode! & 0o222, 0);
    assertEquals((await Deno.stat(join(snap.path, "sub"))).mode! & 0o222, 0);
  });

  test(
    "a folder put again replaces the old one, and a pinned version still reads the old",
    async (catalog, s, dir) => {
      const src = join(dir, "src");
      await Deno.mkdir(src, { recursive: true });
      await Deno.writeTextFile(join(src, "a"), "A1");
      await Deno.writeTextFile(join(src, "b"), "B1");
      await catalog.put("data://acme/risk/dev/f", src);
      const first = await catalog.commit("data://acme/risk/dev/f", "one");
      await Deno.remove(join(src, "b"));
      await Deno.writeTextFile(join(src, "a"), "A2");
      await catalog.put("data://acme/risk/dev/f", src);
      const second = await catalog.commit("data://acme/risk/dev/f", "two");
      assertEquals((await catalog.list("data://acme/risk/dev/f")).entries.map((e) => e.name), ["a"]);
      assertEquals(dec(await catalog.read("data://acme/risk/dev/f/a")), "A2");
      if (!s.versioned) return;
      assert(first.pinned !== second.pinned);
      const old = first.pinned!.replace("data://acme/risk/dev/f?", "data://acme/risk/dev/f/b?");
      assertEquals(dec(await catalog.read(old)), "B1");
      assertEquals((await catalog.list(first.pinned!)).entries.map((e) => e.name), ["a", "b"]);
    },
  );

  test("a commit with nothing new keeps the version", async (catalog, s) => {
    await catalog.put("data://acme/risk/dev/k", enc("k"));
    const one = await catalog.commit("data://acme/risk/dev/k", "k");
    const two = await catalog.commit("data://acme/risk/dev/k", "again");
    assertEquals(two.pinned, one.pinned);
    if (s.versioned) assert(one.pinned !== null);
  });

  test("a commit keeps what other keys hold", async (catalog) => {
    await catalog.put("data://acme/risk/dev/one", enc("1"));
    await catalog.commit("data://acme/risk/dev/one", "one");
    await catalog.put("data://acme/risk/dev/two", enc("2"));
    await catalog.commit("data://acme/risk/dev/two", "two");
    assertEquals(dec(await catalog.read("data://acme/risk/dev/one")), "1");
    assertEquals(dec(await catalog.read("data://acme/risk/dev/two")), "2");
  });

  test("a URI with nothing there is not found", async (catalog) => {
    await catalog.put("data://acme/risk/dev/here", enc("x"));
    await catalog.commit("data://acme/risk/dev/here", "here");
    await assertRejects(() => catalog.pin("data://acme/risk/dev/missing"), CatalogNotFound);
    await assertRejects(() => catalog.read("data://acme/risk/dev/missing/x"), CatalogNotFound);
    await assertRejects(() => catalog.list("data://acme/risk/dev/here"), CatalogNotFound);
  });

  test("a write with a selector is refused", async (catalog) => {
    await assertRejects(
      () => catalog.put("data://acme/risk/dev/x?at=branch:main", enc("x")),
      CatalogError,
      "remove ?at=",
    );
  });
}

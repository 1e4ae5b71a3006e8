import { join } from "node:path";
import { assertEquals, assertRejects } from "./_assert.ts";
import { Catalog, CatalogError } from "./_deps.ts";
import { storeContract } from "./store_contract.ts";

storeContract("folder", async () => {
  const path = await Deno.makeTempDir({ prefix: "provcat-folder-" });
  return {
    config: { type: "folder", path },
    versioned: false,
    cleanup: () => Deno.remove(path, { recursive: true }),
  };
});

Deno.test("folder store: a link among a key's folders is refused, so nothing is read or written outside", async () => {
  const dir = await Deno.makeTempDir({ prefix: "provcat-folderlink-" });
  try {
    await Deno.mkdir(join(dir, "store"));
    await Deno.mkdir(join(dir, "outside"));
    await Deno.writeTextFile(join(dir, "outside", "secret"), "secret");
    await Deno.symlink(join(dir, "outside"), join(dir, "store", "out"));
    await using catalog = await Catalog.open({
      config: {
        cache: join(dir, "cache"),
        stores: { f: { type: "folder", path: join(dir, "store") } },
        routes: [{ prefix: "data://acme/f/dev", store: "f" }],
      },
    });
    for (
      const op of [
        () => catalog.read("data://acme/f/dev/out/secret"),
        () => catalog.snapshot("data://acme/f/dev/out/secret"),
      ]
    ) {
      await assertRejects(op, CatalogError, "link");
    }
    await assertRejects(
      () => catalog.put("data://acme/f/dev/out/planted", new TextEncoder().encode("x")),
      CatalogError,
      "link",
    );
    assertEquals([...Deno.readDirSync(join(dir, "outside"))].map((e) => e.name), ["secret"]);
    // A file:/// path names a place on the disk, so a link above it is the user's own choice.
    const physical = await catalog.read(`file://${join(dir, "store", "out", "secret")}`);
    assertEquals(new TextDecoder().decode(physical), "secret");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

import assert from "node:assert/strict";
import { join } from "node:path";
import { bundlePin } from "../../../lib/provevi/runs/bundle_pin.ts";

async function withFolder(fn: (folder: string) => Promise<void>): Promise<void> {
  const folder = await Deno.makeTempDir({ prefix: "provevi-bundle-pin-" });
  try {
    await fn(folder);
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
}

const write = (folder: string, text: string) => Deno.writeTextFile(join(folder, "bundle.json"), text);
const codes = (pin: Awaited<ReturnType<typeof bundlePin>>) => pin?.problems.map((p) => p.code);

Deno.test("bundlePin() is null for a run folder that has no bundle.json", async () => {
  await withFolder(async (folder) => assert.equal(await bundlePin(folder), null));
});

Deno.test("bundlePin() gives the pinned URI of a committed bundle, and the URI of an unpinned one", async () => {
  await withFolder(async (folder) => {
    const uri = "run://acme/demo/dev/run-1";
    await write(folder, JSON.stringify({ uri, pinned: `${uri}?at=commit:abc` }));
    assert.deepEqual(await bundlePin(folder), { uri, pinned: `${uri}?at=commit:abc`, problems: [] });
    await write(folder, JSON.stringify({ uri, pinned: null }));
    assert.deepEqual(await bundlePin(folder), { uri, pinned: null, problems: [] });
  });
});

Deno.test("bundlePin() gives a problem, never an exception, for a bundle.json that cannot say", async () => {
  await withFolder(async (folder) => {
    for (
      const [text, code] of [
        ["{not json", "bundle.unreadable"],
        ["[1, 2]", "bundle.unreadable"],
        ["null", "bundle.unreadable"],
        ['{"uri": "run://acme/demo/dev/run-1"}', "bundle.no_pin"],
        ['{"pinned": null}', "bundle.no_pin"],
        ['{"uri": 3, "pinned": 4}', "bundle.no_pin"],
      ] as const
    ) {
      await write(folder, text);
      const pin = await bundlePin(folder);
      assert.equal(pin?.pinned, null, text);
      assert.deepEqual(codes(pin), [code], text);
      assert.equal(pin?.problems[0]?.file, "bundle.json");
    }
  });
});

Deno.test("bundlePin() refuses a bundle.json that is a link, so a run cannot borrow another run's pin", async () => {
  await withFolder(async (folder) => {
    const other = join(folder, "other.json");
    await Deno.writeTextFile(
      other,
      JSON.stringify({ uri: "run://a/b/c/run-2", pinned: "run://a/b/c/run-2?at=commit:x" }),
    );
    await Deno.symlink(other, join(folder, "bundle.json"));
    const pin = await bundlePin(folder);
    assert.equal(pin?.pinned, null);
    assert.deepEqual(codes(pin), ["bundle.unreadable"]);
  });
});

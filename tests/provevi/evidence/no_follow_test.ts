import assert from "node:assert/strict";
import { join } from "node:path";

const CHILD = new URL("./_no_follow_child.ts", import.meta.url).pathname;

Deno.test("openAtPathSync follows no link also under a permission set, where Deno's node:fs drops O_NOFOLLOW", async () => {
  const dir = await Deno.makeTempDir({ prefix: "no-follow-" });
  try {
    await Deno.writeTextFile(join(dir, "victim"), "the user's own\n");
    await Deno.writeTextFile(join(dir, "plain"), "plain\n");
    await Deno.symlink(join(dir, "victim"), join(dir, "link"));
    await Deno.symlink(join(dir, "nowhere"), join(dir, "dangling"));
    // not -A: the commands run with their permission sets, and the test with -A would not see the flag dropped
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--no-prompt",
        `--allow-read=${dir},${CHILD}`,
        `--allow-write=${dir}`,
        "--no-check",
        CHILD,
        dir,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    const lines = new TextDecoder().decode(out.stdout).trim().split("\n").map((l) => JSON.parse(l));
    const by = Object.fromEntries(lines.map((l) => [l.what, l]));
    for (const what of ["read through a link", "append through a link", "cut through a link"]) {
      assert.equal(by[what].result, "refused", what);
      assert.equal(by[what].kept, true, `${what}: the victim kept its bytes`);
    }
    assert.equal(
      by["make through a dangling link"].result,
      "refused",
      "refused as a link, not as nothing there",
    );
    assert.equal(
      by["make through a dangling link"].made,
      false,
      "nothing made where the dangling link points",
    );
    for (const what of ["read a plain file", "cut a plain file", "make a new file"]) {
      assert.equal(by[what].result, "opened", what);
    }
    assert.equal(await Deno.readTextFile(join(dir, "plain")), "written");
    assert.equal(await Deno.readTextFile(join(dir, "new")), "written");
    assert.equal(await Deno.readTextFile(join(dir, "victim")), "the user's own\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
